// Reading the span file a program under `hwprof record` left (session/span_file.hpp has the
// format; docs/sampling.md, "Using it: hwprof record"). The file is input written by another
// program: anything malformed, truncated, out of range or too big is refused with the file, the
// line and the problem named, and memory is bounded by the limits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/stages.hpp"
#include "hwprof/result.hpp"
#include "session/region_spans.hpp"

namespace hwprof::profile {

struct SpanFileLimits {
  std::size_t max_bytes = std::size_t{512} << 20;
  std::size_t max_regions = std::size_t{1} << 20;  // HWPROF_MAX_REGIONS' own most
  std::size_t max_spans = std::size_t{1} << 24;
  int max_depth = 1 << 16;
};

struct RecordedRegion {
  int id = -1;
  std::string name;
};

struct RecordedSpans {
  long pid = 0;
  std::uint64_t timeline_dropped = 0;
  std::vector<RecordedRegion> regions;  // as the file lists them; ids distinct
  std::vector<RegionSpan> spans;        // each naming a region listed
};

Result<RecordedSpans> parse_span_file(std::string_view text, const std::string& path, const SpanFileLimits& limits = {});
// The file at `path`: a regular file only, at most limits.max_bytes.
Result<RecordedSpans> read_span_file(const std::string& path, const SpanFileLimits& limits = {});

}  // namespace hwprof::profile
