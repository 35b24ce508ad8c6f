// Which bytes a layer's roofline point uses: DRAM traffic counters, else LLC misses × the
// line size, else the analytic minimum — and, for each source passed over, why.
#include <string>

#include <fmt/format.h>

#include "placement/roofline.hpp"

namespace hwprof {

namespace {

std::string status_text(const CounterReading& r) {
  return std::string(counter_status_name(r.status));
}

}  // namespace

Result<BytesEstimate> choose_bytes(const BytesInputs& in) {
  BytesEstimate out;
  if (in.dram_bytes && in.dram_bytes->has_value()) {
    out.origin = BytesOrigin::dram_counters;
    out.bytes = {in.dram_bytes->value, ValueSource::measured, in.dram_bytes->status, in.dram_bytes->running_fraction,
                 "DRAM bytes from the memory-controller (uncore) counters; they count the whole socket, other "
                 "processes included"};
    return out;
  }
  out.skipped.push_back(in.dram_bytes ? "DRAM bytes: " + status_text(*in.dram_bytes) : "DRAM bytes: not counted (no dram group)");
  if (in.llc_misses && in.llc_misses->has_value()) {
    if (!(in.line_bytes > 0)) return Error{"choose_bytes: the cache line size must be positive"};
    out.origin = BytesOrigin::llc_misses;
    out.bytes = {in.llc_misses->value * in.line_bytes, ValueSource::estimated, in.llc_misses->status, in.llc_misses->running_fraction,
                 fmt::format("LLC misses × {:g}-byte lines: misses prefetched and written-back lines", in.line_bytes)};
    return out;
  }
  out.skipped.push_back(in.llc_misses ? "LLC misses: " + status_text(*in.llc_misses) : "LLC misses: not counted (no llc group)");
  if (in.analytic_bytes) {
    if (*in.analytic_bytes < 0) return Error{"choose_bytes: negative analytic bytes"};
    out.origin = BytesOrigin::analytic_minimum;
    out.bytes = {*in.analytic_bytes, ValueSource::analytic, CounterStatus::ok, 1.0,
                 "analytic minimum traffic: each input, output and weight moved once"};
    return out;
  }
  return Error{"no byte count for this layer: " + out.skipped[0] + "; " + out.skipped[1] + "; and no analytic minimum was given"};
}

}  // namespace hwprof
