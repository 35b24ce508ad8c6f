// A test program for `hwprof stat`: spins N threads (the main one included) for T seconds,
// then exits with the given code.   spin_threads THREADS SECONDS EXIT_CODE
#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {
void spin_until(std::chrono::steady_clock::time_point deadline) {
  volatile double x = 1.0;
  while (std::chrono::steady_clock::now() < deadline) {
    for (int i = 0; i < 10000; ++i) x = x * 1.0000001 + 1e-9;
  }
}
}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const double seconds = argc > 2 ? std::atof(argv[2]) : 0.4;
  const int code = argc > 3 ? std::atoi(argv[3]) : 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                              std::chrono::duration<double>(seconds));
  std::vector<std::thread> workers;
  for (int i = 1; i < threads; ++i) workers.emplace_back(spin_until, deadline);
  spin_until(deadline);
  for (auto& t : workers) t.join();
  return code;
}
