// Renders analytic summaries and profiles for people and programs. Reports only format what
// they are given; they compute nothing new.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hwprof/atomic_file.hpp"  // write_file_atomically, check_output_path: still here for users
#include "hwprof/engine/cost.hpp"
#include "hwprof/engine/machine.hpp"
#include "hwprof/engine/profile.hpp"
#include "hwprof/export.hpp"
#include "hwprof/result.hpp"

HWPROF_API_BEGIN

namespace hwprof {

struct SummaryOptions {
  // Fold layers whose dotted names have more than `depth` parts into one row per prefix
  // (consecutive layers only); 0 shows every layer.
  int depth = 0;
  std::string source_file;  // shown in the header and the JSON, if set
};

std::string summary_table(const ModelCost& cost, const SummaryOptions& options = {});
std::string summary_json(const ModelCost& cost, const SummaryOptions& options = {});
std::string summary_csv(const ModelCost& cost, const SummaryOptions& options = {});

// The ceilings chart of a calibration (SVG): a log–log roofline with each memory level's
// slope, the FMA and GEMM roofs and the ridge points, for the run with `threads` threads.
std::string ceilings_svg(const Machine& machine, int threads, bool single_precision = true);

// ---- profiles (`hwprof profile`, `hwprof report`); the JSON is in hwprof/engine/profile.hpp -------

enum class ProfileSort { win, time, flops, name };
struct ProfileTableOptions {
  ProfileSort sort = ProfileSort::win;  // win: time to win, where the layers have a roofline (else time)
  int top = 15;                         // rows shown; 0: every row
  bool counters = false;                // the counter table even when only software counters counted
  ProfileGrouping by = ProfileGrouping::layer;
  int depth = 1;  // ProfileGrouping::block: dot-separated name parts kept
  // A torch profile's ops that ran only inside other rows (LayerProfile::nested_op) are rows
  // too (`--all`); by default its table has its modules, scopes and the ops outside them.
  bool nested_ops = false;
};

// A table for a terminal that answers first: a header (model, machine, ceilings), the
// warnings and hints (each said once, numbered, and referred to from the tables), the layers
// with the most time to win (time × (1 − efficiency)) with their headroom in milliseconds and
// why, the model total, and what to try for each cause shown. The counters per call follow
// only when a hardware counter counted (or with `counters`); an unavailable counter reads
// "n/a[k]", k the note that says why. Grouped by op or block, rows sum their layers.
std::string profile_table(const Profile& profile, const ProfileTableOptions& options = {});
// One row per layer (the model total is not a row), a header row, stable column names; an
// unavailable counter is an empty cell with its status in the next column.
std::string profile_csv(const Profile& profile);
// The layers summed per op or per block (`--by`), one row per group.
std::string profile_groups_csv(const Profile& profile, ProfileGrouping by, int depth);
// The layers on this machine's roofline (SVG): log–log axes, every measured ceiling labelled,
// one point per layer with FLOPs (colour: bound, area: time share), the top layers labelled,
// the model total as a diamond. Without a calibration: the points, and a note saying so.
std::string roofline_svg(const Profile& profile);
// The sampled iterations as a Chrome trace event file (Perfetto, chrome://tracing): phase
// spans with layer spans nested per thread, layer arguments, and counter tracks.
std::string chrome_trace(const Profile& profile);
// One self-contained HTML page (inline CSS, JS and SVG; nothing fetched).
std::string html_report(const Profile& profile);

// The files `hwprof profile -o DIR` writes: profile.json, profile.csv, roofline.svg,
// trace.json and report.html, each atomically, into `dir` (created if needed). `written`, if
// given, receives the path of each file written, in that order.
std::optional<Error> write_profile_outputs(const Profile& profile, const std::string& dir, std::vector<std::string>* written = nullptr);

}  // namespace hwprof
HWPROF_API_END
