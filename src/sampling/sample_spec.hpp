// What to sample, from the user's text `EVENT[@RATE]`, checked against this kernel's limits
// before anything opens (docs/sampling.md, "The spec").
//
//   cpu-clock             the default event at the default 1000 Hz
//   cpu-clock@4000        a frequency in Hz (the kernel adjusts the period to keep it)
//   @250                  cpu-clock at 250 Hz (the event may be left out)
//   cycles@p100000        a fixed period: one sample every 100000 events
//   cycles:pp@p100000     precise (precise_ip = 2); also :p, :ppp, :upp and libpfm4's
//                         `:precise=N` (INST_RETIRED:ANY_P:precise=2)
//   cpu-clock:u           user space only (as the event resolver reads :u / :k)
//
// EVENT is any name the event resolver knows (counters/event_resolver.hpp): the kernel's
// generic events, libpfm4 names, sysfs raw specs. Uncore events cannot be sampled per thread
// and are refused here; whether a core event can sample on this machine (a PMU, permission)
// is known only when it opens (sampling/sampler.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/stages.hpp"
#include "counters/event_resolver.hpp"
#include "hwprof/result.hpp"

namespace hwprof::sampling {

inline constexpr std::string_view kDefaultSampleSpec = "cpu-clock@1000";
inline constexpr std::uint64_t kDefaultSampleHz = 1000;
inline constexpr std::uint32_t kDefaultCallchainDepth = 127;
// A hardware event sampled more often than every 1000 events interrupts the CPU every few
// hundred nanoseconds: the kernel throttles it and the program measured is mostly interrupts.
inline constexpr std::uint64_t kMinHardwarePeriod = 1000;

// What the kernel allows (/proc/sys/kernel); 0 where the file could not be read (the
// parser then checks nothing against it and the kernel refuses at open if it must).
struct SamplingLimits {
  std::uint64_t max_sample_rate = 0;  // kernel.perf_event_max_sample_rate, Hz
  std::uint32_t max_stack = 0;        // kernel.perf_event_max_stack, frames
};
SamplingLimits read_sampling_limits();

struct SampleSpec {
  std::string text;                                        // as the user wrote it
  std::string event = "cpu-clock";                         // the event's name, without a precise modifier
  ResolvedEvent resolved;                                  // its encoding
  bool frequency = true;                                   // a rate in Hz (freq/sample_freq), else a period
  std::uint64_t rate = kDefaultSampleHz;                   // Hz, or events per sample
  std::uint8_t precise_ip = 0;                             // 0 to 3 (perf_event_open(2): precise_ip)
  bool levels_given = false;                               // :u or :k was written: no fallback from kernel frames
  std::uint32_t callchain_depth = kDefaultCallchainDepth;  // at most kernel.perf_event_max_stack
  std::vector<std::string> notes;                          // what the parser had to change, for the user
};

// The spec, or what is wrong with it: the text, the problem and the fix in one message.
Result<SampleSpec> parse_sample_spec(std::string_view text);
// The same against given limits and PMU descriptions (tests).
Result<SampleSpec> parse_sample_spec(std::string_view text, const SamplingLimits& limits, const std::string& sysfs_devices);

// "1000 Hz" or "every 100000 events" (or "every 250000 ns" for the clocks).
std::string describe_rate(const SampleSpec& spec);

}  // namespace hwprof::sampling
