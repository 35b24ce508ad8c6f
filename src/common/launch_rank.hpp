// Which rank of a parallel launch this process is: mpirun (Open MPI), PMIx/PMI launchers,
// srun (Slurm) and torchrun each say so in the environment. Used to give every rank its own
// report folder (rank-00003/) and to label its profile.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace hwprof::common {

struct LaunchRank {
  int rank = -1;         // -1: not launched as one of several ranks
  int size = 0;          // the number of ranks, 0 when the launcher did not say
  std::string variable;  // the variable the rank came from ("OMPI_COMM_WORLD_RANK")
  // Launcher variables that were set but could not be used, each with its value and why
  // ("SLURM_PROCID=abc is not a rank: ..."); empty when there were none.
  std::vector<std::string> problems;
  bool known() const noexcept { return rank >= 0; }
};

// From the environment as `getenv` reads it (the real one by default). The variables, in
// order: OMPI_COMM_WORLD_RANK/_SIZE (Open MPI's mpirun), PMIX_RANK (with PMIX_SIZE where
// set), PMI_RANK/PMI_SIZE (MPICH, Intel MPI), SLURM_PROCID/SLURM_NTASKS (srun), and
// RANK/WORLD_SIZE (torchrun; RANK alone is too common a name, so only with WORLD_SIZE). A
// value that is not a plain non-negative integer below 2^30, or a rank not below its size, is
// not used, and said in `problems`.
LaunchRank launch_rank(const std::function<const char*(const char*)>& getenv_fn = nullptr);

// "rank-00003": the folder of one rank's reports, zero-padded so that a listing sorts by rank.
std::string rank_folder(int rank);

}  // namespace hwprof::common
