// The output registry: for each subject hwprof renders (a profile, a comparison of two
// profiles, a merge of ranks, machine reports side by side, a program `hwprof record` sampled),
// every format it can be rendered to, the file it is written to in an output folder, and the
// renderer. The CLI's --format choices, `profile -o DIR`, `record -o DIR`, `hwprof report`,
// `compare`, `merge` and the report module all read these lists, so that a format added here
// is offered everywhere at once.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/compare.hpp"
#include "analyze/fleet.hpp"
#include "common/atomic_file.hpp"
#include "common/stages.hpp"
#include "hwprof/engine/profile.hpp"
#include "hwprof/engine/report.hpp"
#include "session/merged_ranks.hpp"

namespace hwprof::report {

template <class Subject>
struct Output {
  std::string_view format;     // the name --format takes: "table", "json", "csv", "svg", "trace", "html"
  std::string_view file_name;  // its name in an output folder
  bool printable;              // offered by --format on standard output; else only written to a file (--svg, --html, ...)
  void (*render)(const Subject&, const TextSink&);
  // Whether the subject has what the format shows (sampling.csv: a profile with sampling); null:
  // always. Where it has not, the format is not written to a folder and not printed.
  bool (*applies)(const Subject&) = nullptr;
};

template <class Subject>
bool output_applies(const Output<Subject>& output, const Subject& subject) {
  return output.applies == nullptr || output.applies(subject);
}

// What each subject is rendered from: the data, and the options of its tables.
struct ProfileSubject {
  const Profile& profile;
  ProfileTableOptions table;  // table rows and grouping; JSON and CSV group by table.by too
};
struct ComparisonSubject {
  const ProfileComparison& comparison;
  const Profile& b;  // B's ceilings, for the page's roofline
  std::size_t top = 20;
};
struct MergeSubject {
  const MergedRanks& merged;
  std::size_t top = 20;
};
// A program `hwprof record` ran under the sampler (docs/sampling.md, "Using it: hwprof record").
struct RecordSubject {
  const SamplingProfile& sampling;
  const std::vector<std::string>& command;
  int exit_code = 0;
  double wall_seconds = 0.0;
  std::string title;  // of the flame graph and the speedscope profile: the command and the spec
};

std::span<const Output<ProfileSubject>> profile_outputs();
std::span<const Output<ComparisonSubject>> comparison_outputs();
std::span<const Output<MergeSubject>> merge_outputs();
std::span<const Output<FleetComparison>> fleet_outputs();
std::span<const Output<RecordSubject>> record_outputs();

// The entry for `format`, or null.
template <class Subject>
const Output<Subject>* find_output(std::span<const Output<Subject>> outputs, std::string_view format) {
  for (const Output<Subject>& o : outputs) {
    if (o.format == format) return &o;
  }
  return nullptr;
}

// The formats --format offers, in the registry's order.
template <class Subject>
std::vector<std::string> printable_formats(std::span<const Output<Subject>> outputs) {
  std::vector<std::string> out;
  for (const Output<Subject>& o : outputs) {
    if (o.printable) out.emplace_back(o.format);
  }
  return out;
}

// The whole rendering as one string (standard output, or a single file).
template <class Subject>
std::string render_output(const Output<Subject>& output, const Subject& subject) {
  std::string text;
  output.render(subject, [&text](std::string_view part) { text += part; });
  return text;
}

// Every output of `outputs` that applies to `subject`, each into its file in `dir` (made when
// missing): each file is either the new one or untouched; the paths written are added to
// `written` (may be null). The first failure stops and is returned.
template <class Subject>
std::optional<Error> write_outputs_to_folder(std::span<const Output<Subject>> outputs, const Subject& subject, const std::string& dir,
                                             std::vector<std::string>* written) {
  namespace fs = std::filesystem;
  if (dir.empty()) return Error{"the output folder is empty"};
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Error{dir + ": cannot create the output folder (" + ec.message() + ")"};
  if (!fs::is_directory(dir, ec)) return Error{dir + ": not a folder"};
  for (const Output<Subject>& output : outputs) {
    if (!output_applies(output, subject)) continue;
    const std::string path = (fs::path(dir) / output.file_name).string();
    if (auto error = write_file_atomically_in_parts(path, [&](const TextSink& sink) { output.render(subject, sink); })) return error;
    if (written != nullptr) written->push_back(path);
  }
  return std::nullopt;
}

}  // namespace hwprof::report
