// A data-parallel loop whose ranks get deliberately unequal shares, profiled with
// <hwprof/regions.hpp> and merged across the ranks by hwprof::mpi at MPI_Finalize:
//
//   mpirun -np 4 env HWPROF_OUTPUT=out ./hwprof_example_mpi_imbalance [steps]
//
// Per step, every rank updates its blocks of a vector (the last rank owns 4 blocks, the
// others 1: a skewed partition), waits on a simulated input pipeline that takes longer on
// higher ranks ((rank + 1) × 10 ms), and joins an MPI_Allreduce, where the light ranks wait for
// the heavy one. out/merged.txt then names the last rank as the straggler of local_work and
// io_wait, with their imbalance, and a light rank as the one that waits longest in allreduce.
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include <hwprof/regions.hpp>

namespace {

constexpr std::size_t kBlock = std::size_t{1} << 16;  // floats per block
constexpr int kSweeps = 40;                           // y = a * x + y passes per block

int blocks_of(int rank, int size) {
  return rank == size - 1 ? 4 : 1;
}

void update_block(std::vector<float>& y, const std::vector<float>& x) {
  // 2 FLOPs per element; x read, y read and written: 12 bytes.
  HWPROF_SCOPE_WORK("local_work", 2.0 * kBlock * kSweeps, 12.0 * kBlock * kSweeps);
  for (int s = 0; s < kSweeps; ++s) {
    for (std::size_t i = 0; i < kBlock; ++i) y[i] = 0.999f * x[i] + y[i];
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? std::atoi(argv[1]) : 5;
  std::vector<float> x(kBlock, 1.0f);
  std::vector<float> y(kBlock, 0.0f);
  double checksum = 0;
  for (int step = 0; step < steps; ++step) {
    HWPROF_SCOPE("step");
    for (int b = 0; b < blocks_of(rank, size); ++b) update_block(y, x);
    {
      HWPROF_SCOPE("io_wait");
      std::this_thread::sleep_for(std::chrono::milliseconds(10 * (rank + 1)));
    }
    {
      HWPROF_SCOPE("allreduce");
      double local = y[step % kBlock];
      double global = 0;
      MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      checksum += global;
    }
  }
  if (rank == 0) std::printf("rank 0 of %d: %d steps, checksum %.6g\n", size, steps, checksum);
  MPI_Finalize();
  return 0;
}
