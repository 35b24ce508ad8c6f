#include "report/profile_view.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "analyze/number_format.hpp"
#include "common/stages.hpp"

namespace hwprof::report {

std::string bytes_origin_words(BytesOrigin origin) {
  switch (origin) {
    case BytesOrigin::dram_counters:
      return "DRAM counters (measured)";
    case BytesOrigin::llc_misses:
      return "LLC misses x line size (estimated)";
    case BytesOrigin::analytic_minimum:
      return "analytic minimum traffic";
  }
  return "?";
}

std::string bytes_source_summary(const Profile& profile) {
  std::map<BytesOrigin, int> counts;
  for (const LayerProfile& l : profile.layers) ++counts[layer_numbers(l).bytes_origin];
  if (counts.empty()) return bytes_origin_words(layer_numbers(profile.total).bytes_origin);
  const char* rows = is_program_run(profile.kind) ? "row" : "layer";
  if (counts.size() == 1) {
    return fmt::format("{} (all {} {}s)", bytes_origin_words(counts.begin()->first), counts.begin()->second, rows);
  }
  std::string out;
  // Most-used source first.
  std::vector<std::pair<BytesOrigin, int>> ordered(counts.begin(), counts.end());
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  for (const auto& [origin, count] : ordered) {
    out += fmt::format("{}{} for {} {}{}", out.empty() ? "" : ", ", bytes_origin_words(origin), count, rows, count == 1 ? "" : "s");
  }
  return out;
}

bool any_row_placed(const Profile& p) {
  return std::any_of(p.layers.begin(), p.layers.end(), [](const LayerProfile& l) { return l.roofline.has_value(); });
}

std::string counters_measured_words(const Profile& p) {
  if (p.backend.empty() || p.backend == "timer") return {};
  return fmt::format("; counters: {} backend{}{}", p.backend, p.group.empty() ? "" : ", group " + p.group,
                     p.counter_iterations > 0 ? fmt::format(", {} pass{} of their own, each reading's own cost (an empty region's) subtracted",
                                                            p.counter_iterations, p.counter_iterations == 1 ? "" : "es")
                                              : "");
}

bool per_step(const Profile& profile) {
  return profile.time_basis == TimeBasis::step && profile.steps > 0;
}

std::string program_answer(const Profile& p) {
  const bool torch = p.kind == ProfileKind::torch;
  std::string out = torch ? "PyTorch (hwprof::torch)" : "its regions";
  const double in_rows = row_ms(p.total);
  std::string of_it = "of it";
  if (per_step(p)) {
    out += fmt::format(", {} step{}: ", p.steps, p.steps == 1 ? "" : "s");
    // Its rows' time per step (the figures below are of it: their time over the steps, a mean),
    // and the steps' own wall times beside: a step also holds what ran outside every row, and a
    // slow first step moves the mean from the median.
    out += fmt::format("{} ms per step in its {}", milliseconds(in_rows), torch ? "rows" : "regions");
    if (p.step_time_ms.n > 0) {
      out += fmt::format(" (steps: median {} ms, mean {} ms)", milliseconds(p.step_time_ms.median), milliseconds(p.step_time_ms.mean));
    }
    of_it = "of a step";
  } else if (torch) {
    out += fmt::format(", no steps: {} ms in its rows", milliseconds(in_rows));
  } else {
    out += fmt::format(": {} ms over the run", milliseconds(in_rows));
  }
  // The program total's win: its rows with a count at their roofs (src/placement/region_profile.cpp).
  if (const auto h = headroom_ms(p.total); h && in_rows > 0) {
    out += fmt::format(", {} ms {} ({}) to win at the roofs", milliseconds(h->win_ms), of_it, percent(h->win_ms / in_rows));
  }
  return out;
}

std::string program_threads(const Profile& p) {
  int fewest = 0;
  int most = 0;
  for (const LayerProfile& l : p.layers) {
    if (l.threads <= 0) continue;
    const int low = l.threads_min > 0 ? std::min(l.threads_min, l.threads) : l.threads;
    fewest = fewest == 0 ? low : std::min(fewest, low);
    most = std::max(most, l.threads);
  }
  const int cores = p.machine.cpu.cores;
  const std::string of_cores = cores > 0 ? fmt::format(" (of {} core{})", cores, cores == 1 ? "" : "s") : std::string();
  const auto threads = [](int n) { return fmt::format("{} thread{}", n, n == 1 ? "" : "s"); };
  if (p.kind != ProfileKind::torch) return fmt::format("its regions are placed under the calibration of {}{}", threads(p.threads), of_cores);
  if (most == 0) {
    return fmt::format("PyTorch's threads were not recorded: its rows are placed under the calibration of {}{}", threads(p.threads), of_cores);
  }
  if (fewest == most) return fmt::format("PyTorch ran its ops on {}{}", threads(most), of_cores);
  return fmt::format("PyTorch ran its ops on {} to {} threads{}", fewest, most, of_cores);
}

std::string calls_text(double calls) {
  if (!std::isfinite(calls) || calls < 0) return "-";
  const double whole = std::round(calls);
  if (std::fabs(calls - whole) < 0.005) return fmt::format("{:.0f}", whole);
  return fmt::format("{:.2f}", calls);
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
  for (CounterStatus s :
       {CounterStatus::ok, CounterStatus::multiplexed, CounterStatus::unsupported, CounterStatus::no_permission, CounterStatus::not_counted}) {
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

NumberedNotes numbered_notes(const Profile& profile) {
  NumberedNotes out;
  for (const std::string& w : profile.warnings) out.notes.push_back({"warning", w});
  for (const std::string& h : profile.hints) {
    // The session's list of unavailable events: said below, grouped by reason.
    if (h.starts_with(kUnavailableEventsHint)) continue;
    out.notes.push_back({"hint", h});
  }
  std::vector<std::pair<std::string, std::vector<std::string>>> by_reason;  // "status - reason" → counters
  for (const UnavailableCounter& u : unavailable_counters(profile)) {
    const std::string reason = std::string(counter_status_name(u.status)) + (u.reason.empty() ? "" : " - " + u.reason);
    auto it = std::find_if(by_reason.begin(), by_reason.end(), [&](const auto& r) { return r.first == reason; });
    if (it == by_reason.end()) {
      by_reason.push_back({reason, {u.name}});
    } else {
      it->second.push_back(u.name);
    }
  }
  for (const auto& [reason, names] : by_reason) {
    std::string list;
    for (const std::string& n : names) {
      list += (list.empty() ? "" : ", ") + n;
      out.note_of_counter[n] = static_cast<int>(out.notes.size()) + 1;
    }
    out.notes.push_back({"unavailable", list + ": " + reason});
  }
  return out;
}

}  // namespace hwprof::report
