// HWPROF_SAMPLE: the default session's sampler (docs/sampling.md, "Regions programs and
// PyTorch: HWPROF_SAMPLE"). Opened at start-up on this process, paused and resumed in
// alternating windows by a thread of its own so that the same run measures what sampling
// costs, stopped at exit before the reports are written; its samples go to the report module
// with the session's snapshot.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/stages.hpp"
#include "sampling/sample_records.hpp"
#include "sampling/sampler.hpp"

namespace hwprof::session {

// One window of the run, on CLOCK_MONOTONIC: sampling was on (sampled) or off for all of it.
struct SampleWindow {
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  bool sampled = false;
};

// What the sampler took, handed to the report module (report_writer.hpp) with the snapshot.
struct SessionSamples {
  std::string spec;
  int pid = 0;  // the process sampled
  SampleStore store{0, 0};
  SamplerStats stats;
  std::vector<std::string> warnings;
  std::vector<SampleWindow> windows;  // in time order
};

// The default timeline with HWPROF_SAMPLE: 2,000,000 calls (64 MB of address space, touched
// only as calls fill it), since attribution needs every call a sample fell in.
inline constexpr std::size_t kSampledTimelineEvents = 2000000;
// How long each window is, sampled or not.
inline constexpr std::uint64_t kSampleWindowNs = 200000000;

// The text HWPROF_SAMPLE asks for: the default spec for "" and "1", else the text itself.
std::string sample_spec_text(const std::string& value);

// HWPROF_SAMPLE's sampler. start() parses, opens and starts it, and the window thread; a
// problem is a line for stderr naming HWPROF_SAMPLE, and nothing is sampled.
class SessionSampler {
 public:
  SessionSampler();
  ~SessionSampler();
  SessionSampler(const SessionSampler&) = delete;
  SessionSampler& operator=(const SessionSampler&) = delete;

  // "" when it started, else the problem, as one line.
  std::string start(const std::string& value) noexcept;
  // Stops the windows and the sampler; its samples, or null where it never started (or stop
  // was called before). Called once, at exit.
  std::unique_ptr<SessionSamples> stop() noexcept;
  // In a forked child: the reader and window threads are the parent's; this copy is left
  // alone, never stopped or destroyed.
  void abandon() noexcept;

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace hwprof::session
