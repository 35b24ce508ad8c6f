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
#include "common/stages.hpp"
#include "hwprof/engine/profile.hpp"
#include "hwprof/session.hpp"

namespace hwprof::report {

// The layers' bytes sources in words, e.g. "analytic minimum traffic (all 12 layers)" or
// "DRAM counters (measured) for 10 layers, analytic minimum traffic for 2".
std::string bytes_source_summary(const Profile& profile);
// What a counter value marked "~" means (LayerCounter::below_resolution).
inline constexpr const char* kCounterBelowResolution =
    "below the counter's resolution: less is left per call, once the session's own cost is subtracted, than an empty region "
    "counts; read it as an upper bound";

std::string bytes_origin_words(BytesOrigin origin);

// A program run's answer (regions, torch: docs/torch.md, "Reading a torch profile"), what the
// table's title and report.html's say after the program's name: "PyTorch (hwprof::torch), 20
// steps: 41.93 ms per step (median of 20), 6.33 ms of a step (15.1%) to win at the roofs". The
// win is the program total's, against its time in its rows per step (or over the run).
std::string program_answer(const Profile& profile);
// The threads its rows ran on: "PyTorch ran its ops on 1 thread (of 2 cores)", a range where
// the rows' threads differ; a regions program's calibration's threads.
std::string program_threads(const Profile& profile);
// A program's row's calls per step (or over the run): whole where they are, else two decimals.
std::string calls_text(double calls);
// The time a program's rows' figures are of, for column titles and sentences: "per step" or
// "over the run".
bool per_step(const Profile& profile);
// Some row has a roofline placement.
bool any_row_placed(const Profile& profile);
// "; counters: perf backend, group G, ..." for a legend's Measured line; empty for time only.
std::string counters_measured_words(const Profile& profile);
// A row whose rate is a lower bound (its count leaves out ops without a formula) reads "≥";
// an impossible one reads "impossible", never a figure (docs/profile.md, "Impossible rates").
inline constexpr const char* kLowerBound = "≥";

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

}  // namespace hwprof::report
