#include "report/profile_view.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace hwprof::detail {

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

}  // namespace hwprof::detail
