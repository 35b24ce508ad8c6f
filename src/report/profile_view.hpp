// What every profile report shows for one layer, worked out in one place so that the table,
// CSV, JSON, SVG, trace and HTML never disagree: achieved rates from the roofline placement
// when the profiler placed the layer, else from the analytic FLOPs and bytes over the
// measured median (and then nothing about roofs, since there were none to compare with).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hwprof/profile.hpp"
#include "hwprof/session.hpp"

namespace hwprof::detail {

struct LayerNumbers {
  double seconds = 0.0;  // the median per call
  SourcedValue flops;    // per call
  SourcedValue bytes;    // per call
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

// Headroom in time: what the layer would take at its roof (median × efficiency, at most the
// median) and the time to win (the median less that). Absent without a roofline placement.
struct Headroom {
  double roof_ms = 0.0;
  double win_ms = 0.0;
};
std::optional<Headroom> headroom_ms(const LayerProfile& layer);
// The model's time to win: the sum over its layers that have a placement.
double summed_win_ms(const Profile& profile);

// A kernel software event (task-clock, page-faults, context-switches, ... and PAPI's perf::
// forms): counted by the kernel's scheduler, not the PMU.
bool is_software_event(std::string_view name);
// Some counter that is not a software event read a value somewhere in the profile.
bool any_hardware_counter(const Profile& profile);

// The notes a report numbers once and refers to: warnings first, then hints, then every
// unavailable counter grouped by its reason ("cycles, instructions: unsupported - ...").
// `note_of_counter` maps an unavailable counter to its note's number (1-based).
struct NumberedNotes {
  struct Note {
    std::string kind;  // "warning", "hint" or "unavailable"
    std::string text;
  };
  std::vector<Note> notes;
  std::map<std::string, int> note_of_counter;
};
NumberedNotes numbered_notes(const Profile& profile);

// Rows of layers summed by op ("conv2d": every conv2d layer) or by block (the first `depth`
// dot-separated parts of the name, as `summary --depth`): summed medians, roof and win times,
// the layers' count, the bound that holds most of the time and the most common cause.
enum class LayerGrouping { layer, op, block };
struct LayerGroup {
  std::string key;
  int layers = 0;
  double time_ms = 0.0;           // summed medians
  double share = 0.0;             // of the layers' summed medians
  std::optional<double> roof_ms;  // summed over the layers with a placement; absent when none has one
  std::optional<double> win_ms;
  std::optional<double> efficiency;  // roof / time over the placed layers
  std::string bound;                 // the bound of most of its time
  std::string why;                   // the cause label of most of its time to win
  double flops = 0.0;                // analytic, summed
};
// A cause rule's title for a table of groups ("tiny_gemm" → "tiny GEMM").
std::string_view cause_title(std::string_view rule);
std::vector<LayerGroup> group_layers(const Profile& profile, LayerGrouping by, int depth);
std::string block_of(const std::string& name, int depth);

// A counter's column title: its name, with its unit unless it is a plain count.
std::string counter_title(const Profile& profile, const std::string& name);

// Status names back to values (the inverse of counter_status_name and friends).
std::optional<CounterStatus> parse_counter_status(std::string_view name) noexcept;
std::optional<ValueSource> parse_value_source(std::string_view name) noexcept;
std::optional<BytesOrigin> parse_bytes_origin(std::string_view name) noexcept;
std::optional<Bound> parse_bound(std::string_view name) noexcept;

}  // namespace hwprof::detail
