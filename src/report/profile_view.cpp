#include "report/profile_view.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace hwprof::detail {

LayerNumbers layer_numbers(const LayerProfile& layer) {
  LayerNumbers n;
  n.seconds = layer.time_ms.median * 1e-3;
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

double share_of(const LayerProfile& layer, double summed_ms) { return summed_ms > 0 ? layer.time_ms.median / summed_ms : 0.0; }

bool on_roofline_chart(const LayerNumbers& n) {
  return n.intensity && *n.intensity > 0 && n.gflops_per_s && *n.gflops_per_s > 0;
}

std::string display_name(const LayerProfile& layer) {
  if (layer.phase.empty() || layer.phase == "forward" || layer.index < 0) return layer.name;
  return layer.name + " (" + layer.phase + ")";
}

std::string bytes_origin_words(BytesOrigin origin) {
  switch (origin) {
    case BytesOrigin::dram_counters: return "DRAM counters (measured)";
    case BytesOrigin::llc_misses: return "LLC misses x line size (estimated)";
    case BytesOrigin::analytic_minimum: return "analytic minimum traffic";
  }
  return "?";
}

std::string bytes_source_summary(const Profile& profile) {
  std::map<BytesOrigin, int> counts;
  for (const LayerProfile& l : profile.layers) ++counts[layer_numbers(l).bytes_origin];
  if (counts.empty()) return bytes_origin_words(layer_numbers(profile.total).bytes_origin);
  if (counts.size() == 1) {
    return fmt::format("{} (all {} layers)", bytes_origin_words(counts.begin()->first), counts.begin()->second);
  }
  std::string out;
  // Most-used source first.
  std::vector<std::pair<BytesOrigin, int>> ordered(counts.begin(), counts.end());
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  for (const auto& [origin, count] : ordered) {
    out += fmt::format("{}{} for {} layer{}", out.empty() ? "" : ", ", bytes_origin_words(origin), count, count == 1 ? "" : "s");
  }
  return out;
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

std::string counter_title(const Profile& profile, const std::string& name) {
  std::string unit;
  for (const EventInfo& e : profile.events) {
    if (e.name == name && unit.empty()) unit = e.unit;
  }
  for (const LayerProfile& l : profile.layers) {
    for (const LayerCounter& c : l.counters) {
      if (c.name == name && unit.empty()) unit = c.unit;
    }
  }
  return unit.empty() || unit == "count" ? name : name + " (" + unit + ")";
}

std::optional<CounterStatus> parse_counter_status(std::string_view name) noexcept {
  for (CounterStatus s : {CounterStatus::ok, CounterStatus::multiplexed, CounterStatus::unsupported, CounterStatus::no_permission,
                          CounterStatus::not_counted}) {
    if (counter_status_name(s) == name) return s;
  }
  return std::nullopt;
}

std::optional<ValueSource> parse_value_source(std::string_view name) noexcept {
  for (ValueSource s : {ValueSource::measured, ValueSource::analytic, ValueSource::estimated}) {
    if (value_source_name(s) == name) return s;
  }
  return std::nullopt;
}

std::optional<BytesOrigin> parse_bytes_origin(std::string_view name) noexcept {
  for (BytesOrigin o : {BytesOrigin::dram_counters, BytesOrigin::llc_misses, BytesOrigin::analytic_minimum}) {
    if (bytes_origin_name(o) == name) return o;
  }
  return std::nullopt;
}

std::optional<Bound> parse_bound(std::string_view name) noexcept {
  for (Bound b : {Bound::compute, Bound::memory, Bound::overhead}) {
    if (bound_name(b) == name) return b;
  }
  return std::nullopt;
}

}  // namespace hwprof::detail
