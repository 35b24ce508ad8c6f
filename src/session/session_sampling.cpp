#include "session/session_sampling.hpp"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "common/monotonic_clock.hpp"
#include "common/stages.hpp"
#include "sampling/sample_spec.hpp"

namespace hwprof::session {
struct SessionSampler::State {
  std::optional<Sampler> sampler;
  std::string spec;
  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
  std::thread windows_thread;
  std::vector<SampleWindow> windows;  // the window thread's until it is joined
  std::string windows_problem;

  // The window thread: hwprof's own, never one of the program's. Sampling is on in the first
  // window. A sampled window runs from just before resume() to just after pause(), so that
  // every unsampled window had sampling off for all of it.
  void alternate() noexcept {
    try {
      std::unique_lock<std::mutex> lock(mutex);
      SampleWindow current{monotonic_ns(), 0, true};
      while (!wake.wait_for(lock, std::chrono::nanoseconds(kSampleWindowNs), [this] { return stopping; })) {
        if (current.sampled) {
          sampler->pause();
          current.end_ns = monotonic_ns();
        } else {
          current.end_ns = monotonic_ns();
          sampler->resume();
        }
        windows.push_back(current);
        current = SampleWindow{current.end_ns, 0, !current.sampled};
      }
      // The last window ends where the sampler stops (stop() disables the events right after).
      current.end_ns = monotonic_ns();
      windows.push_back(current);
    } catch (...) {
      windows_problem = "the sampling windows could not be kept (out of memory): the cost of sampling is not measured";
    }
  }
};

std::string sample_spec_text(const std::string& value) {
  return value.empty() || value == "1" ? "cpu-clock@1000" : value;
}

SessionSampler::SessionSampler() = default;

SessionSampler::~SessionSampler() {
  stop();
}

std::string SessionSampler::start(const std::string& value) noexcept {
  try {
    auto state = std::make_unique<State>();
    state->spec = sample_spec_text(value);
    const auto spec = parse_sample_spec(state->spec);
    if (!spec) return "HWPROF_SAMPLE: " + spec.error().message + "; the program runs unsampled";
    auto opened = Sampler::open(*spec);
    if (!opened) return "HWPROF_SAMPLE=" + state->spec + ": " + opened.error().message + "; the program runs unsampled";
    state->sampler.emplace(std::move(opened).value());
    state->windows.reserve(1024);
    state->sampler->start();
    // The window thread takes no signal of the program's (they go to the program's threads).
    sigset_t all, old;
    sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &old);
    try {
      State* s = state.get();
      state->windows_thread = std::thread([s] { s->alternate(); });
    } catch (...) {
      state->windows_problem = "the sampling windows' thread could not start: the cost of sampling is not measured";
    }
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    state_ = std::move(state);
    return "";
  } catch (...) {
    return "HWPROF_SAMPLE: out of memory while opening the sampler; the program runs unsampled";
  }
}

std::unique_ptr<SessionSamples> SessionSampler::stop() noexcept {
  if (!state_) return nullptr;
  std::unique_ptr<State> state = std::move(state_);
  try {
    {
      const std::lock_guard<std::mutex> lock(state->mutex);
      state->stopping = true;
    }
    state->wake.notify_all();
    if (state->windows_thread.joinable()) state->windows_thread.join();
    state->sampler->stop();
    auto out = std::make_unique<SessionSamples>();
    out->spec = state->spec;
    out->pid = static_cast<int>(::getpid());
    out->stats = state->sampler->stats();
    out->warnings = state->sampler->warnings();
    if (!state->windows_problem.empty()) out->warnings.push_back(state->windows_problem);
    out->store = state->sampler->take_data();
    out->windows = std::move(state->windows);
    return out;
  } catch (...) {
    return nullptr;
  }
}

void SessionSampler::abandon() noexcept {
  (void)state_.release();  // NOLINT(bugprone-unused-return-value): the parent's threads own it
}

}  // namespace hwprof::session
