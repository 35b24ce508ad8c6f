// The samples of a program recorded by `hwprof record` as a SamplingProfile: per process, its
// regions' rows where it left a span file, else one row for the whole program
// (docs/sampling.md, "Using it: hwprof record"). The names of addresses come from the caller
// (a symbolizer per process), so that this is tested without one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "hwprof/profile.hpp"
#include "placement/sampled_layers.hpp"
#include "profile/span_file_reader.hpp"
#include "sampling/sample_records.hpp"

namespace hwprof::detail {

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

}  // namespace hwprof::detail
