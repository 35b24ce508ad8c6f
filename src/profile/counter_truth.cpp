#include "profile/counter_truth.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <string_view>

#include <sched.h>

#include <fmt/format.h>
#include "common/stages.hpp"

namespace hwprof::profile {

std::vector<double> read_cost_per_call(const RegionReport& probe) {
  std::vector<double> cost(probe.counters.size(), 0.0);
  for (std::size_t e = 0; e < probe.counters.size(); ++e) {
    if (probe.counters[e].has_value()) cost[e] = probe.counters[e].per_call();
  }
  return cost;
}

std::vector<double> subtract_read_cost(RegionReport& r, const std::vector<double>& cost, const std::vector<double>& resolution) {
  std::vector<double> subtracted(r.counters.size(), 0.0);
  for (std::size_t e = 0; e < r.counters.size() && e < cost.size(); ++e) {
    CounterTotal& c = r.counters[e];
    if (!c.has_value() || cost[e] <= 0) continue;
    const double per_call = c.per_call();
    const double net = per_call - cost[e];
    // Less left than one more read would count: the layer's own count is lost in the
    // measurement's spread.
    c.below_resolution = c.below_resolution || net < (e < resolution.size() ? resolution[e] : cost[e]);
    const auto samples = static_cast<double>(c.samples);
    const double exclusive_share = c.inclusive > 0 ? c.exclusive / c.inclusive : 1.0;
    c.inclusive = std::max(0.0, net) * samples;
    c.exclusive = c.inclusive * exclusive_share;
    subtracted[e] = cost[e];
  }
  return subtracted;
}

namespace {

bool uses(const Metric& m, std::string_view id) {
  const auto named = [&](const MetricTerm& t) { return t.id == id; };
  return std::any_of(m.numerator.begin(), m.numerator.end(), named) || std::any_of(m.denominator.begin(), m.denominator.end(), named);
}

}  // namespace

std::vector<RegionMetric> metrics_of(const RegionReport& r, const EventGroup& group, double seconds, const std::vector<std::string>& impossible) {
  std::vector<RegionMetric> out;
  // The group's events are the first of the session's, in the group's order.
  const std::size_t n = std::min(group.events.size(), r.counters.size());
  const auto lookup = [&](std::string_view id) -> std::optional<double> {
    if (id == "time") return seconds > 0 ? std::optional<double>(seconds) : std::nullopt;
    for (std::size_t i = 0; i < n; ++i) {
      if (group.events[i].id == id) return r.counters[i].has_value() ? std::optional<double>(r.counters[i].per_call()) : std::nullopt;
    }
    return std::nullopt;
  };
  for (const Metric& m : group.metrics) {
    RegionMetric metric{m.name, m.unit, std::nullopt, {}, false, m.role};
    std::string broken;
    for (std::size_t i = 0; i < n; ++i) {
      if (!uses(m, group.events[i].id)) continue;
      if (i < impossible.size() && !impossible[i].empty() && broken.empty()) broken = r.counters[i].name;
      metric.below_resolution = metric.below_resolution || r.counters[i].below_resolution;
    }
    if (!broken.empty()) {
      metric.reason = "computed from " + broken + ", whose value here cannot be true (see that counter)";
    } else {
      const MetricValue v = evaluate_metric(m, lookup);
      metric.value = v.value;
      metric.reason = v.reason;
    }
    out.push_back(std::move(metric));
  }
  return out;
}

std::vector<std::string> impossible_counters(RegionReport& r, const WallBounds& b, const std::vector<double>& resolution) {
  std::vector<std::string> out(r.counters.size());
  if (b.wall_seconds <= 0) return out;
  const int cpus = std::max(1, b.cpus);
  const double ghz = b.max_ghz > 0 ? b.max_ghz : kMaxPlausibleGhz;
  const std::string wall = fmt::format("{:.3g} ms", b.wall_seconds * 1e3);
  for (std::size_t e = 0; e < r.counters.size(); ++e) {
    CounterTotal& c = r.counters[e];
    if (!c.has_value()) continue;
    const double v = c.per_call();
    const double slack = e < resolution.size() ? resolution[e] : 0.0;
    // Within the readings' own uncertainty of the bound, or already an upper bound: `~`.
    const auto beyond = [&](double limit) {
      if (v <= limit) return false;
      if (c.below_resolution || v <= limit + slack) {
        c.below_resolution = true;
        return false;
      }
      return true;
    };
    if (c.kind == EventKind::task_clock) {
      const double limit = b.wall_seconds * 1e9 * cpus;
      if (beyond(limit)) {
        out[e] = fmt::format(
            "{} {} ns per call is {:.3g}x what {} CPU{} can run in the layer's {} of wall time ({} ns): the counted "
            "passes ran longer than the timed ones, or part of the counter reads' own cost was not taken out",
            c.name, fmt::format("{:.4g}", v), v / limit, cpus, cpus == 1 ? "" : "s", wall, fmt::format("{:.4g}", limit));
      }
    } else if (c.kind == EventKind::core_cycles) {
      const double limit = b.wall_seconds * 1e9 * ghz * cpus;
      if (beyond(limit)) {
        out[e] = fmt::format(
            "{} {} per call is {:.3g}x what {} CPU{} at {:.2f} GHz{} can run in the layer's {} of wall time: the counted "
            "passes ran longer than the timed ones, or part of the counter reads' own cost was not taken out",
            c.name, fmt::format("{:.4g}", v), v / limit, cpus, cpus == 1 ? "" : "s", ghz,
            b.max_ghz > 0 ? " (their highest clock)" : " (no x86 CPU clocks higher; cpufreq gives no maximum here)", wall);
      }
    }
  }
  return out;
}

void annotate_counters(std::vector<LayerCounter>& counters, const std::vector<double>& subtracted, const std::vector<std::string>& impossible) {
  for (std::size_t e = 0; e < counters.size(); ++e) {
    if (e < subtracted.size()) counters[e].read_cost = subtracted[e];
    if (e < impossible.size() && !impossible[e].empty()) {
      counters[e].impossible = true;
      counters[e].impossible_reason = impossible[e];
    }
  }
}

int allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

std::optional<double> max_clock_ghz() {
  // cpufreq's cpuinfo_max_freq is in kHz (Documentation/admin-guide/pm/cpufreq.rst).
  std::ifstream in("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  double khz = 0;
  if (in >> khz && khz > 0) return khz * 1e-6;
  return std::nullopt;
}

}  // namespace hwprof::profile
