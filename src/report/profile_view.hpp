// The words and pictures the profile reports share: the sources of the bytes in words, the
// roofline picture, counter column titles, the numbered notes, and the names of statuses read
// back from JSON. The numbers themselves are worked out in analyze/layer_view.hpp.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/layer_view.hpp"
#include "hwprof/profile.hpp"
#include "hwprof/session.hpp"

namespace hwprof::detail {

// The layers' bytes sources in words, e.g. "analytic minimum traffic (all 12 layers)" or
// "DRAM counters (measured) for 10 layers, analytic minimum traffic for 2".
std::string bytes_source_summary(const Profile& profile);
// What a counter value marked "~" means (LayerCounter::below_resolution).
inline constexpr const char* kCounterBelowResolution =
    "below the counter's resolution: less is left per call, once the session's own cost is subtracted, than an empty region "
    "counts; read it as an upper bound";

std::string bytes_origin_words(BytesOrigin origin);

// The roofline picture; `standalone` false leaves out the XML namespace, for inlining in HTML.
std::string roofline_svg(const Profile& profile, bool standalone);

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

// A counter's column title: its name, with its unit unless it is a plain count.
std::string counter_title(const Profile& profile, const std::string& name);

// Status names back to values (the inverse of counter_status_name and friends).
std::optional<CounterStatus> parse_counter_status(std::string_view name) noexcept;
std::optional<ValueSource> parse_value_source(std::string_view name) noexcept;
std::optional<BytesOrigin> parse_bytes_origin(std::string_view name) noexcept;
std::optional<Bound> parse_bound(std::string_view name) noexcept;

}  // namespace hwprof::detail
