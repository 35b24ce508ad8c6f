#include "analyze/layer_view.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include "common/stages.hpp"

namespace hwprof::analysis {

LayerNumbers layer_numbers(const LayerProfile& layer) {
  LayerNumbers n;
  // A program's row is placed by its mean call (its time over all calls / its calls), and the
  // program total by its work per step (or over the run) over its time per step: their rates
  // without a placement are over the same time. A model's layer: its median.
  n.seconds = layer.calls > 0 && layer.total_ms > 0   ? layer.total_ms / static_cast<double>(layer.calls) * 1e-3
              : layer.index < 0 && layer.basis_ms > 0 ? layer.basis_ms * 1e-3
                                                      : layer.time_ms.median * 1e-3;
  n.bytes_origin = layer.bytes_origin;
  if (layer.roofline) {
    const RooflinePoint& r = *layer.roofline;
    n.flops = r.flops;
    n.bytes = r.bytes;
    if (r.bytes.value > 0) n.intensity = r.intensity;
    if (r.seconds > 0) {
      n.gflops_per_s = r.gflops_per_s;
      n.gbytes_per_s = r.gbytes_per_s;
    }
    n.attainable_gflops_per_s = r.attainable_gflops_per_s;
    n.efficiency = r.efficiency;
    n.headroom = r.headroom;
    n.bound = r.bound;
    return n;
  }
  n.flops = {static_cast<double>(layer.flops), ValueSource::analytic, CounterStatus::ok, 1.0, "analytic FLOPs (cost model)"};
  n.bytes = {static_cast<double>(layer.bytes), ValueSource::analytic, CounterStatus::ok, 1.0, "analytic minimum traffic"};
  n.bytes_origin = BytesOrigin::analytic_minimum;
  if (!layer.work_note.empty()) {
    // No count: no rate, no intensity (never a rate of 0 FLOP/s).
    n.flops.status = CounterStatus::not_counted;
    n.flops.detail = layer.work_note;
    n.bytes.status = CounterStatus::not_counted;
    n.bytes.detail = layer.work_note;
    return n;
  }
  if (layer.bytes > 0) n.intensity = n.flops.value / n.bytes.value;
  if (n.seconds > 0) {
    n.gflops_per_s = n.flops.value / n.seconds * 1e-9;
    n.gbytes_per_s = n.bytes.value / n.seconds * 1e-9;
  }
  return n;
}

double summed_layer_ms(const Profile& profile) {
  double sum = 0;
  for (const LayerProfile& l : profile.layers) sum += l.time_ms.median;
  return sum;
}

double share_of(const LayerProfile& layer, double summed_ms) {
  return summed_ms > 0 ? layer.time_ms.median / summed_ms : 0.0;
}

double row_share(const Profile& profile, const LayerProfile& layer, double summed_ms) {
  return is_program_run(profile.kind) ? layer.time_share : share_of(layer, summed_ms);
}

bool on_roofline_chart(const LayerNumbers& n) {
  return n.intensity && *n.intensity > 0 && n.gflops_per_s && *n.gflops_per_s > 0;
}

std::string display_name(const LayerProfile& layer) {
  if (layer.phase == LayerPhase::forward || layer.phase == LayerPhase::region || layer.phase == LayerPhase::setup || layer.index < 0) {
    return layer.name;
  }
  // A torch op the backward pass ran says so in its name already ("aten::mm (in backward)").
  if (layer.name.ends_with(")") && layer.name.find(" (in ") != std::string::npos) return layer.name;
  return layer.name + " (" + std::string(layer_phase_name(layer.phase)) + ")";
}

std::vector<UnavailableCounter> unavailable_counters(const Profile& profile) {
  std::vector<UnavailableCounter> out;
  const auto listed = [&](const std::string& name) {
    return std::any_of(out.begin(), out.end(), [&](const UnavailableCounter& u) { return u.name == name; });
  };
  for (const EventInfo& e : profile.events) {
    if (e.status != CounterStatus::ok && e.status != CounterStatus::multiplexed && !listed(e.name)) {
      out.push_back({e.name, e.status, e.reason});
    }
  }
  const auto scan = [&](const LayerProfile& layer) {
    for (const LayerCounter& c : layer.counters) {
      if (!c.value && !listed(c.name)) out.push_back({c.name, c.status, c.reason});
    }
  };
  scan(profile.total);
  for (const LayerProfile& l : profile.layers) scan(l);
  return out;
}

std::string_view cause_title(std::string_view rule) {
  static constexpr std::pair<std::string_view, std::string_view> kTitles[] = {{"impossible_rate", "impossible rate"},
                                                                              {"below_resolution", "below resolution"},
                                                                              {"noisy", "noisy"},
                                                                              {"depthwise_conv", "depthwise conv"},
                                                                              {"grouped_gemm", "grouped conv"},
                                                                              {"tiny_gemm", "tiny GEMM"},
                                                                              {"blas_held_back", "BLAS held back"},
                                                                              {"transcendental", "transcendental"},
                                                                              {"nearer_cache", "nearer cache"},
                                                                              {"above_roof", "above its roof"},
                                                                              {"thread_underuse", "threads idle"},
                                                                              {"fewer_threads", "fewer threads than cores"},
                                                                              {"partial_count", "count partial"},
                                                                              {"no_roofline", "no roofline"},
                                                                              {"not_counted", "not counted"},
                                                                              {"counted_elsewhere", "counted elsewhere"},
                                                                              {"fixed_cost", "fixed cost per call"},
                                                                              {"near_roof", "near its roof"},
                                                                              {"compute_below_roof", "compute below roof"},
                                                                              {"memory_below_roof", "memory below roof"}};
  for (const auto& [id, title] : kTitles) {
    if (id == rule) return title;
  }
  return rule;
}

bool any_hardware_counter(const Profile& profile) {
  const auto counted = [](const LayerProfile& l) {
    return std::any_of(l.counters.begin(), l.counters.end(), [](const LayerCounter& c) { return c.value && is_hardware_kind(c.kind); });
  };
  return counted(profile.total) || std::any_of(profile.layers.begin(), profile.layers.end(), counted);
}

std::string block_of(const std::string& name, int depth) {
  std::size_t end = 0;
  for (int k = 0; k < std::max(depth, 1); ++k) {
    end = name.find('.', end == 0 && k == 0 ? 0 : end + 1);
    if (end == std::string::npos) return name;
  }
  return name.substr(0, end);
}

LayerGrouping layer_grouping(ProfileGrouping by) {
  switch (by) {
    case ProfileGrouping::op:
      return LayerGrouping::op;
    case ProfileGrouping::block:
      return LayerGrouping::block;
    case ProfileGrouping::module:
      return LayerGrouping::module;
    case ProfileGrouping::layer:
      break;
  }
  return LayerGrouping::layer;
}

const char* grouping_name(ProfileGrouping by) {
  switch (by) {
    case ProfileGrouping::op:
      return "op";
    case ProfileGrouping::block:
      return "block";
    case ProfileGrouping::module:
      return "module";
    case ProfileGrouping::layer:
      break;
  }
  return "layer";
}

std::string region_name_of(const Profile& profile, const LayerProfile& layer) {
  if (profile.kind != ProfileKind::torch) return layer.name;
  if (layer.phase != LayerPhase::backward && layer.phase != LayerPhase::recompute) return layer.name;
  return display_name(layer);
}

bool is_torch_op(const LayerProfile& l) {
  return l.op != "module" && l.op != "region" && l.op != "optimizer" && l.op != "setup";
}

// A row's group key, or none where the grouping leaves the row out.
std::optional<std::string> group_key(const Profile& profile, const LayerProfile& l, LayerGrouping by, int depth) {
  const bool torch = profile.kind == ProfileKind::torch;
  switch (by) {
    case LayerGrouping::op:
      if (!torch) return l.op;
      if (!is_torch_op(l)) return std::nullopt;
      return l.phase == LayerPhase::forward ? l.op : l.op + " (" + std::string(layer_phase_name(l.phase)) + ")";
    case LayerGrouping::module:
      if (l.op != "module" || block_of(l.name, depth) != l.name) return std::nullopt;
      return display_name(l);
    case LayerGrouping::block:
      return block_of(l.name, depth);
    case LayerGrouping::layer:
      break;
  }
  return display_name(l);
}

std::vector<LayerGroup> group_layers(const Profile& profile, LayerGrouping by, int depth) {
  std::vector<LayerGroup> groups;
  std::map<std::string, std::size_t> index;
  std::vector<std::map<std::string, double>> bound_time;
  std::vector<std::map<std::string, double>> why_win;
  std::vector<double> placed_time;
  // A program's rows differ in calls: each counts its time per step (or over the run), and a
  // group's share is its rows' own shares summed (row_share: of the program's time in its
  // outermost rows), as every report gives a row's. A model's: of the layers' summed medians.
  const bool program = is_program_run(profile.kind);
  const double summed = summed_layer_ms(profile);
  std::vector<double> program_share;
  for (const LayerProfile& l : profile.layers) {
    const std::optional<std::string> found = group_key(profile, l, by, depth);
    if (!found) continue;
    const std::string& key = *found;
    auto [it, fresh] = index.emplace(key, groups.size());
    if (fresh) {
      groups.push_back({});
      groups.back().key = key;
      bound_time.emplace_back();
      why_win.emplace_back();
      placed_time.push_back(0.0);
      program_share.push_back(0.0);
    }
    const std::size_t g = it->second;
    LayerGroup& row = groups[g];
    ++row.layers;
    // A layer's time per pass; a program's row's per step (or over the run), all its calls.
    const double t = row_ms(l);
    row.time_ms += t;
    program_share[g] += program ? row_share(profile, l, summed) : 0.0;
    if (!l.impossible) row.flops += static_cast<double>(l.flops) * calls_per_basis(l);  // an impossible count is no count
    if (const auto h = headroom_ms(l)) {
      row.roof_ms = row.roof_ms.value_or(0.0) + h->roof_ms;
      row.win_ms = row.win_ms.value_or(0.0) + h->win_ms;
      placed_time[g] += t;
      if (!l.why.empty()) why_win[g][l.why.front().rule] += h->win_ms;
    } else if (!l.why.empty()) {
      why_win[g][l.why.front().rule] += 0.0;
    }
    if (l.roofline && !l.impossible) bound_time[g][std::string(bound_name(l.roofline->bound))] += t;
  }
  const auto most = [](const std::map<std::string, double>& m) {
    std::string best;
    double value = -1.0;
    for (const auto& [k, v] : m) {
      if (v > value) {
        best = k;
        value = v;
      }
    }
    return best;
  };
  for (std::size_t g = 0; g < groups.size(); ++g) {
    LayerGroup& row = groups[g];
    row.share = program ? program_share[g] : summed > 0 ? row.time_ms / summed : 0.0;
    if (row.roof_ms && placed_time[g] > 0) row.efficiency = *row.roof_ms / placed_time[g];
    row.bound = most(bound_time[g]);
    row.why = std::string(cause_title(most(why_win[g])));
  }
  return groups;
}

}  // namespace hwprof::analysis
