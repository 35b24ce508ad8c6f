// A team of threads, one pinned to each CPU it is given, kept for many runs and released
// together by a barrier: what the bandwidth sweep (one worker per CPU, each with its arrays),
// the FMA and transcendental peaks (one worker per CPU) and the GEMM ceiling (one thread that
// calls OpenBLAS, pinned where OpenBLAS's last thread goes) share.
#pragma once

#include <chrono>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>
#include "common/stages.hpp"

namespace hwprof::calibration {

class PinnedTeam {
 public:
  using Clock = std::chrono::steady_clock;
  using Task = std::function<void(std::size_t worker)>;

  // Starts one thread per CPU; each pins itself, then runs `setup(worker)` on its CPU (so
  // first-touched arrays land on that CPU's NUMA node). When a thread cannot start (none
  // runs then) or a setup throws, error() says why and run() must not be called.
  explicit PinnedTeam(std::vector<int> cpus, const Task& setup = {});
  ~PinnedTeam();
  PinnedTeam(const PinnedTeam&) = delete;
  PinnedTeam& operator=(const PinnedTeam&) = delete;

  struct Timing {
    // On the caller's clock, from just before the release to the last worker's finish. The
    // clock starts before the release: the caller shares a CPU with a worker, and the worker
    // it wakes may preempt it until the work is done, so a clock read after the release could
    // miss the whole run.
    double released = 0;
    // On the workers' clocks, from the first one's start to the last one's finish: the caller,
    // with no core of its own when every core has a worker, can wake milliseconds late.
    double worked = 0;
    // The shortest of the workers' own runs (each from its start to its finish): the work
    // itself, without a worker's wait for its CPU after the release. What sizes a run.
    double shortest = 0;
  };

  // Every worker runs `task(worker)` once, all released together. An exception a task threw
  // is rethrown here once every worker has finished.
  Timing run(const Task& task);

  std::size_t size() const noexcept { return cpus_.size(); }
  const std::string& error() const noexcept { return error_; }
  // Why the worker could not pin itself ("" when it did).
  const std::string& pin_error(std::size_t worker) const;
  // Every worker pinned, and found on its CPU after the last run.
  bool on_their_cpus() const noexcept;
  // The smallest share of its last run's wall time that a worker had its CPU (another
  // process, not the work, took the rest).
  double least_cpu_share() const noexcept;
  // "worker 2 ran unpinned: ...; worker 3 pinned to CPU 3 but found on CPU 5", or "".
  std::string placement_note() const;

 private:
  struct Worker;
  void work(std::size_t index, const Task& setup);

  std::vector<int> cpus_;
  std::unique_ptr<Worker[]> workers_;
  struct Sync;
  std::unique_ptr<Sync> sync_;
  const Task* task_ = nullptr;  // nullptr sends the workers home
  std::vector<std::thread> threads_;
  std::string error_;
};

}  // namespace hwprof::calibration
