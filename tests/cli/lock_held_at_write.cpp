// A program one of whose threads holds a lock of the default session (its variants' labels, as
// an op of hwprof::torch's observer takes it on another thread) while the main thread writes the
// reports (hwprof_write_output): the session's snapshot waits for the lock here, before the
// writer is forked, so the writer never meets a lock held by a thread it does not have
// (docs/regions.md, "What is written"). After 30 s it kills its children (the writer) and
// exits 124: a writer that waits on the lock is a failure, not a stuck test.
//   lock_held_at_write STATUS
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>

#include <hwprof/regions.h>
#include <hwprof/regions.hpp>

#include "session/observer_hooks.hpp"
#include "session/session_state.hpp"

namespace {

// Kills this process's children (the report writer) after `seconds`, then ends it with 124.
void watchdog(int seconds) {
  std::thread([seconds] {
    std::this_thread::sleep_for(std::chrono::seconds(seconds));
    std::ifstream children("/proc/self/task/" + std::to_string(::getpid()) + "/children");
    for (pid_t child = 0; children >> child;) ::kill(child, SIGKILL);
    std::fprintf(stderr, "lock_held_at_write: still writing after %d s\n", seconds);
    ::_exit(124);
  }).detach();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s STATUS\n", argv[0]);
    return 2;
  }
  watchdog(30);
  hwprof::Session::State* state = hwprof::detail::open_default_state();
  if (state == nullptr) {
    std::fprintf(stderr, "no default session: set HWPROF_OUTPUT\n");
    return 2;
  }
  // A region with a labelled variant, as the observer makes one per op and shapes: the
  // snapshot reads the labels under the lock.
  const int id = hwprof::Session::named_region(state, "op");
  hwprof::observer::note_variant(state, id, 42, "op [2x2]");
  hwprof::Session::enter(state, id);
  hwprof::CallDetail call;
  call.variant = 42;
  hwprof::observer::leave(state, id, call);
  std::atomic<bool> held{false};
  std::thread holder([&] {
    const std::lock_guard<std::mutex> lock(state->labels_mutex);
    held.store(true);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  });
  while (!held.load()) std::this_thread::yield();
  const int written = hwprof_write_output();
  holder.join();
  std::printf("hwprof_write_output: %d\n", written);
  return static_cast<int>(std::strtol(argv[1], nullptr, 10));
}
