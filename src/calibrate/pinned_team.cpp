#include "calibrate/pinned_team.hpp"

#include <sched.h>

#include <algorithm>
#include <barrier>
#include <latch>
#include <utility>

#include "calibrate/compute.hpp"
#include "common/cpu_topology.hpp"
#include "common/stages.hpp"

namespace hwprof::calibration {
namespace {

std::string what_of(const std::exception_ptr& failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an exception of an unknown type";
  }
}

}  // namespace

// One cache line (at least) per worker, so that workers never write to one line.
struct alignas(64) PinnedTeam::Worker {
  bool pinned = false;
  std::string pin_error;
  int cpu_seen = -1;
  double cpu_share = 1.0;  // CPU time over wall time of its last run
  Clock::time_point start, finish;
  std::exception_ptr failure;
};

struct PinnedTeam::Sync {
  explicit Sync(std::ptrdiff_t threads) : barrier(threads) {}
  std::latch gate{1};  // opens once every thread has started, or one could not be
  bool aborted = false;
  std::barrier<> barrier;  // every phase: ready, then released / finished per run
};

PinnedTeam::PinnedTeam(std::vector<int> cpus, const Task& setup)
    : cpus_(std::move(cpus)), workers_(new Worker[cpus_.size()]), sync_(std::make_unique<Sync>(static_cast<std::ptrdiff_t>(cpus_.size() + 1))) {
  threads_.reserve(cpus_.size());
  try {
    for (std::size_t i = 0; i < cpus_.size(); ++i) threads_.emplace_back([this, i, &setup] { work(i, setup); });
  } catch (const std::exception& e) {
    error_ = "cannot start worker thread " + std::to_string(threads_.size()) + ": " + e.what();
  }
  sync_->aborted = !error_.empty();
  sync_->gate.count_down();
  if (sync_->aborted) {
    for (std::thread& t : threads_) t.join();
    threads_.clear();
    return;
  }
  sync_->barrier.arrive_and_wait();  // every worker pinned and set up
  for (std::size_t i = 0; i < cpus_.size() && error_.empty(); ++i) {
    if (workers_[i].failure) {
      error_ = "worker " + std::to_string(i) + " (on CPU " + std::to_string(cpus_[i]) + ") could not set up: " + what_of(workers_[i].failure);
    }
  }
}

PinnedTeam::~PinnedTeam() {
  if (threads_.empty()) return;
  task_ = nullptr;
  sync_->barrier.arrive_and_wait();
  for (std::thread& t : threads_) t.join();
}

PinnedTeam::Timing PinnedTeam::run(const Task& task) {
  task_ = &task;
  const Clock::time_point released = Clock::now();
  sync_->barrier.arrive_and_wait();  // go
  sync_->barrier.arrive_and_wait();  // all done; the barrier orders the workers' writes before our reads
  Timing timing;
  timing.released = std::chrono::duration<double>(Clock::now() - released).count();
  Clock::time_point first = Clock::time_point::max(), last = Clock::time_point::min();
  Clock::duration shortest = Clock::duration::max();
  for (std::size_t i = 0; i < cpus_.size(); ++i) {
    first = std::min(first, workers_[i].start);
    last = std::max(last, workers_[i].finish);
    shortest = std::min(shortest, workers_[i].finish - workers_[i].start);
  }
  timing.worked = cpus_.empty() ? 0.0 : std::chrono::duration<double>(last - first).count();
  timing.shortest = cpus_.empty() ? 0.0 : std::chrono::duration<double>(shortest).count();
  std::exception_ptr failure;  // the first worker's; every one is cleared for the next run
  for (std::size_t i = 0; i < cpus_.size(); ++i) {
    if (std::exception_ptr f = std::exchange(workers_[i].failure, nullptr); f && !failure) failure = f;
  }
  if (failure) std::rethrow_exception(failure);
  return timing;
}

void PinnedTeam::work(std::size_t index, const Task& setup) {
  sync_->gate.wait();
  if (sync_->aborted) return;  // not every worker could start: none touches the barrier
  Worker& w = workers_[index];
  w.pinned = pin_current_thread(cpus_[index], &w.pin_error);
  if (setup) {
    try {
      setup(index);
    } catch (...) {
      w.failure = std::current_exception();  // said by error(); the worker still arrives at the barrier
    }
  }
  w.cpu_seen = ::sched_getcpu();
  sync_->barrier.arrive_and_wait();  // ready
  for (;;) {
    sync_->barrier.arrive_and_wait();  // released
    const Task* task = task_;
    if (task == nullptr) break;
    const double cpu_before = thread_cpu_seconds();
    w.start = Clock::now();
    try {
      (*task)(index);
    } catch (...) {
      w.failure = std::current_exception();
    }
    w.finish = Clock::now();
    const double wall = std::chrono::duration<double>(w.finish - w.start).count();
    w.cpu_share = wall > 0.0 ? (thread_cpu_seconds() - cpu_before) / wall : 1.0;
    w.cpu_seen = ::sched_getcpu();
    sync_->barrier.arrive_and_wait();  // finished
  }
}

const std::string& PinnedTeam::pin_error(std::size_t worker) const {
  return workers_[worker].pin_error;
}

bool PinnedTeam::on_their_cpus() const noexcept {
  for (std::size_t i = 0; i < cpus_.size(); ++i) {
    if (!workers_[i].pinned || workers_[i].cpu_seen != cpus_[i]) return false;
  }
  return true;
}

double PinnedTeam::least_cpu_share() const noexcept {
  double least = 1.0;
  for (std::size_t i = 0; i < cpus_.size(); ++i) least = std::min(least, workers_[i].cpu_share);
  return least;
}

std::string PinnedTeam::placement_note() const {
  std::string note;
  for (std::size_t i = 0; i < cpus_.size(); ++i) {
    std::string problem;
    if (!workers_[i].pinned) {
      problem = "ran unpinned: " + workers_[i].pin_error;
    } else if (workers_[i].cpu_seen != cpus_[i]) {
      problem = "pinned to CPU " + std::to_string(cpus_[i]) + " but found on CPU " + std::to_string(workers_[i].cpu_seen);
    }
    if (!problem.empty()) note += (note.empty() ? "worker " : "; worker ") + std::to_string(i) + " " + problem;
  }
  return note;
}

}  // namespace hwprof::calibration
