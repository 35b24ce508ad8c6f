// Statistical sampling on perf_event: an event opened with a rate, and every sample's time,
// thread, instruction pointer and callchain copied out of the kernel's ring buffers by a
// reader thread of our own (docs/sampling.md).
//
// What opens. The kernel maps the ring buffer of an inherited event only when the event is
// bound to a CPU, and lets events share a ring only on the same CPU (kernel/events/core.c,
// perf_mmap and perf_event_set_output; man perf_event_open(2), PERF_EVENT_IOC_SET_OUTPUT).
// So, for this process, every thread that exists when the sampler opens gets one event per
// online CPU, with `inherit` so that the threads it starts later (BLAS, OpenMP and PyTorch
// workers) are sampled too; each CPU has one ring, which the events on that CPU all write
// into. For another process (`hwprof record -- CMD`), the same with its pid alone, optionally
// enabled when it execs, plus MMAP2, COMM and FORK/EXIT records: its mappings and thread names.
//
// The reader thread starts before any event opens and is left out of the threads opened, so
// it is never sampled itself (reader_tid() names it). Samples are kept after stop() in a
// SampleStore (sampling/sample_records.hpp); what was lost, throttled or dropped is in
// stats() and, as sentences, in warnings().
//
// Mappings of this process: the MMAP2 records give only those made after the events opened;
// read_proc_maps() (symbols/mappings.hpp) gives a snapshot of /proc/self/maps, which the
// symbolizer (symbols/symbols.hpp) reads.
//
// hwprof runs inside the user's process: nothing here throws out of the class, sends a
// signal or forks; a failure to open is a Result with the event, the reason and the fix.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <sys/types.h>

#include "common/stages.hpp"
#include "counters/syscalls.hpp"
#include "hwprof/result.hpp"
#include "sampling/sample_records.hpp"
#include "sampling/sample_spec.hpp"

namespace hwprof::sampling {

struct SamplerOptions {
  pid_t pid = 0;                // 0: this process, every thread; else that process (and what it starts)
  bool enable_on_exec = false;  // with a pid: the kernel enables the events at its exec, and start() enables nothing
  bool task_records = true;     // MMAP2, COMM, FORK and EXIT records
  std::size_t ring_bytes = 0;   // data bytes of each CPU's ring (rounded up to a power of two of pages); 0: from the rate
  std::size_t max_samples = kDefaultMaxSamples;
  std::size_t max_frames = kDefaultMaxFrames;
};

struct SamplerStats {
  std::string spec;                  // as the user wrote it
  std::string rate;                  // "1000 Hz", "every 100000 events"
  std::uint64_t samples = 0;         // kept
  std::uint64_t lost = 0;            // the kernel could not write them: a ring was full
  std::uint64_t throttled = 0;       // times the kernel stopped an event for a tick (too many interrupts)
  std::uint64_t dropped = 0;         // past hwprof's cap on samples or frames
  std::uint64_t malformed = 0;       // records not understood, skipped
  std::uint64_t reader_wakeups = 0;  // times the reader drained the rings while sampling was on (pause() drains them too, not counted)
  std::size_t threads_opened = 0;    // threads given events of their own when the sampler opened
  std::size_t threads_seen = 0;      // distinct threads among the samples (those started later too)
  std::size_t cpus = 0;              // rings, one per online CPU
  std::size_t ring_bytes = 0;        // data bytes of each ring
  bool kernel_frames = false;        // kernel-mode samples and frames were allowed
  std::uint32_t callchain_depth = 0;
  double seconds = 0;             // start() to stop(), CLOCK_MONOTONIC
  double samples_per_second = 0;  // (kept + lost + dropped) / seconds: the rate the whole process was sampled at
};

struct SamplerState;

class Sampler {
 public:
  // Opens `spec` on this process (options.pid 0) or another, disabled; the reader is waiting.
  static Result<Sampler> open(const SampleSpec& spec, const SamplerOptions& options = {}, Syscalls& sys = system_calls());

  Sampler(Sampler&&) noexcept;
  Sampler& operator=(Sampler&&) noexcept;
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;
  ~Sampler();  // stops, if still running

  // Enables every event (except with enable_on_exec, where the kernel does at exec).
  void start() noexcept;
  // Between start() and stop(): no samples while paused (the events disabled; the kernel's
  // ioctl reaches the events inherited by threads started later too), and again after resume().
  // The profiler samples every other measured pass this way, to measure what sampling costs.
  // pause() also drains the rings on the calling thread, so that the reader need not wake
  // while the next sampled stretch runs.
  void pause() noexcept;
  void resume() noexcept;
  // Disables the events, lets the reader drain what is left and joins it, closes the events
  // and sorts what was kept by time. Idempotent.
  void stop() noexcept;

  // What the reader kept; complete after stop(). Before it, an empty store (the reader is
  // still writing the real one).
  const SampleStore& data() const noexcept;
  // The same, moved out (after stop(); an empty store before).
  SampleStore take_data() noexcept;
  // The counts are complete after stop(); before it, only what was opened.
  SamplerStats stats() const;
  // One sentence per thing the user must know: a non-zero loss, throttling or drop, kernel
  // frames left out, callchains cut, smaller rings, threads that kept starting while opening.
  std::vector<std::string> warnings() const;
  pid_t reader_tid() const noexcept;

 private:
  explicit Sampler(std::unique_ptr<SamplerState> state) noexcept;
  std::unique_ptr<SamplerState> state_;
};

}  // namespace hwprof::sampling
