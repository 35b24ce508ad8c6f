// The samples of a program recorded by `hwprof record` as a SamplingProfile: per process, its
// regions' rows where it left a span file, else one row for the whole program
// (docs/sampling.md, "Using it: hwprof record"). add_recorded_processes takes the names of
// addresses from the caller, so that it is tested without a symbolizer; recorded_sampling is
// the whole of it, with a symbolizer per process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <sys/types.h>

#include "common/stages.hpp"
#include "hwprof/engine/profile.hpp"
#include "placement/sampled_layers.hpp"
#include "profile/span_file_reader.hpp"
#include "sampling/sample_records.hpp"
#include "sampling/sampler.hpp"

namespace hwprof::profile {

struct RecordedProcess {
  std::uint32_t pid = 0;
  std::string name;                    // its command name (comm), for its rows
  std::optional<RecordedSpans> spans;  // its span file; none: one row for the whole program
  bool launched = false;               // the process hwprof started (its rows are not prefixed)
};

// The name of an address in process `pid`.
using NameOfAddressIn = std::function<FrameName(std::uint32_t pid, std::uint64_t address)>;

// Adds each process's rows (at most `top` functions a row) to `out`: a region's row is the
// region's name, prefixed by "pid N (name): " where several processes have samples and it is not
// the launched one (a child it forked, a sanitizer's helper); samples
// outside every region are one row per process. Rows with most samples first, the rows outside
// every region last.
void add_recorded_processes(const SampleStore& store, std::span<const RecordedProcess> processes, const NameOfAddressIn& name_of, std::size_t top,
                            SamplingProfile& out);

// What the sampler recorded of a program `hwprof record` ran.
struct Recording {
  pid_t launched = 0;  // the program's pid
  SamplerStats stats;
  std::vector<std::string> warnings;  // the sampler's
  SampleStore store{0, 0};
};

// The recording as a SamplingProfile of `spec_text`: each process with samples, its rows from
// the span file it left in `span_folder` (if any; one that cannot be used is a warning), its
// addresses named from its recorded mappings and perf map as `hwprof profile --sample` names
// them, at most 5 functions a row. `program`: the name of a process that never said its own.
SamplingProfile recorded_sampling(const std::string& spec_text, const std::string& program, const Recording& recording,
                                  const std::string& span_folder);

}  // namespace hwprof::profile
