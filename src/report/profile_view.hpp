// What every profile report shows for one layer, worked out in one place so that the table,
// CSV, JSON, SVG, trace and HTML never disagree: achieved rates from the roofline placement
// when the profiler placed the layer, else from the analytic FLOPs and bytes over the
// measured median (and then nothing about roofs, since there were none to compare with).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hwprof/profile.hpp"

namespace hwprof::detail {

struct LayerNumbers {
  double seconds = 0.0;          // the median per call
  SourcedValue flops;            // per call
  SourcedValue bytes;            // per call
  BytesOrigin bytes_origin = BytesOrigin::analytic_minimum;
  std::optional<double> intensity;     // FLOP/byte; absent when no bytes
  std::optional<double> gflops_per_s;  // absent when no time
  std::optional<double> gbytes_per_s;
  // Only with a roofline placement:
  std::optional<double> attainable_gflops_per_s;
  std::optional<double> efficiency;
  std::optional<double> headroom;
  std::optional<Bound> bound;
};

LayerNumbers layer_numbers(const LayerProfile& layer);

// The layers' summed median times (ms), and a layer's share of it: what a person compares
// layers by. (LayerProfile::time_share is the share within the layer's phase.)
double summed_layer_ms(const Profile& profile);
double share_of(const LayerProfile& layer, double summed_ms);

// A point on a log–log roofline needs positive FLOPs, bytes and time: layers that move data
// without arithmetic (reshape, flatten, an identity dropout) have no place on it.
bool on_roofline_chart(const LayerNumbers& numbers);

// "conv1", or "conv1 (backward)" outside the forward phase: a training profile holds a layer
// once per phase.
std::string display_name(const LayerProfile& layer);

// The layers' bytes sources in words, e.g. "analytic minimum traffic (all 12 layers)" or
// "DRAM counters (measured) for 10 layers, analytic minimum traffic for 2".
std::string bytes_source_summary(const Profile& profile);
// What a counter value marked "~" means (LayerCounter::below_resolution).
inline constexpr const char* kCounterBelowResolution =
    "below the counter's resolution: less is left per call, once the session's own cost is subtracted, than an empty region "
    "counts; read it as an upper bound";

std::string bytes_origin_words(BytesOrigin origin);

// Every counter that could not be read anywhere in the profile, once, with its reason:
// from the profile's events first, then from the layers' own readings.
struct UnavailableCounter {
  std::string name;
  CounterStatus status = CounterStatus::not_counted;
  std::string reason;
};
std::vector<UnavailableCounter> unavailable_counters(const Profile& profile);

// The roofline picture; `standalone` false leaves out the XML namespace, for inlining in HTML.
std::string roofline_svg(const Profile& profile, bool standalone);

// A counter's column title: its name, with its unit unless it is a plain count.
std::string counter_title(const Profile& profile, const std::string& name);

// Status names back to values (the inverse of counter_status_name and friends).
std::optional<CounterStatus> parse_counter_status(std::string_view name) noexcept;
std::optional<ValueSource> parse_value_source(std::string_view name) noexcept;
std::optional<BytesOrigin> parse_bytes_origin(std::string_view name) noexcept;
std::optional<Bound> parse_bound(std::string_view name) noexcept;

}  // namespace hwprof::detail
