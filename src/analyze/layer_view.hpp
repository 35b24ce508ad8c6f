// What a profile's layers amount to, worked out in one place so that every report (table, CSV,
// JSON, SVG, trace, HTML), the comparison and the merge never disagree: achieved rates from the
// roofline placement when the profiler placed the layer, else from the analytic FLOPs and bytes
// over the measured median (and then nothing about roofs, since there were none to compare
// with); the headroom in time; the layers summed by op or block; the counters that could not
// be read.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/stages.hpp"
#include "hwprof/engine/profile.hpp"
#include "placement/row_time.hpp"

namespace hwprof::analysis {

struct LayerNumbers {
  double seconds = 0.0;  // the time per call rates are over: a layer's median, a program row's mean call
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
// The row's share, the same in every report: of the layers' summed medians for a model's layer;
// of the program's time in its outermost rows for a program's (LayerProfile::time_share), whose
// rows nest.
double row_share(const Profile& profile, const LayerProfile& layer, double summed_ms);

// A point on a log–log roofline needs positive FLOPs, bytes and time: layers that move data
// without arithmetic (reshape, flatten, an identity dropout) have no place on it.
bool on_roofline_chart(const LayerNumbers& numbers);

// "conv1", or "conv1 (backward)" outside the forward phase: a training profile holds a layer
// once per phase.
std::string display_name(const LayerProfile& layer);

// Every counter that could not be read anywhere in the profile, once, with its reason:
// from the profile's events first, then from the layers' own readings.
struct UnavailableCounter {
  std::string name;
  CounterStatus status = CounterStatus::not_counted;
  std::string reason;
};
std::vector<UnavailableCounter> unavailable_counters(const Profile& profile);

// Headroom in time: placement/row_time.hpp (headroom_ms, row_ms, calls_per_basis).

// Some counter of the PMU (is_hardware_kind: not a software event or a clock) read a value
// somewhere in the profile.
bool any_hardware_counter(const Profile& profile);

// Rows of layers summed by op ("conv2d": every conv2d layer) or by block (the first `depth`
// dot-separated parts of the name, as `summary --depth`): summed medians, roof and win times,
// the layers' count, the bound that holds most of the time and the most common cause. In a
// torch profile a row's time is its time over all calls (its share of the outermost regions'),
// since its calls differ in number. A torch profile's ops are summed by
// op name and phase ("aten::conv2d", "aten::conv2d (backward)"; its modules and scopes are
// not ops), and `module` lists its modules of at most `depth` name parts, each with its
// subtree (docs/torch.md, "Reading a torch profile").
enum class LayerGrouping { layer, op, block, module };
LayerGrouping layer_grouping(ProfileGrouping by);
// The session region a row of a program's profile was made from, as its call paths and
// per-thread rows name it: a torch profile's backward row is named like its forward one, and its
// region with " (backward)" (docs/torch.md, "Rows").
std::string region_name_of(const Profile& profile, const LayerProfile& layer);
const char* grouping_name(ProfileGrouping by);
struct LayerGroup {
  std::string key;
  int layers = 0;
  double time_ms = 0.0;           // summed row_ms: a model's layers' medians, a program's rows' time per step (or run)
  double share = 0.0;             // its rows' row_share summed: of the layers' summed medians, or of a program's time
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

}  // namespace hwprof::analysis
