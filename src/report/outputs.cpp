// The output registry's lists (report/outputs.hpp), and the output folder written from them.
#include "report/outputs.hpp"

#include "report/sampling_outputs.hpp"
#include "report/sampling_report.hpp"

#include <filesystem>
#include <system_error>

#include "report/compare.hpp"
#include "report/fleet.hpp"
#include "report/merge.hpp"
#include "report/report_parts.hpp"

namespace hwprof::detail {
namespace {

// A renderer that makes its whole text at once, handed to the sink in one part.
template <class Subject, std::string (*Render)(const Subject&)>
void whole(const Subject& s, const TextSink& sink) {
  sink(Render(s));
}

void profile_table_of(const ProfileSubject& s, const TextSink& sink) {
  sink(profile_table(s.profile, s.table));
}
void profile_json_of(const ProfileSubject& s, const TextSink& sink) {
  profile_json_parts(s.profile, s.table.by, s.table.depth, sink);
}
void profile_csv_of(const ProfileSubject& s, const TextSink& sink) {
  sink(s.table.by == ProfileGrouping::layer ? profile_csv(s.profile) : profile_groups_csv(s.profile, s.table.by, s.table.depth));
}
void profile_svg_of(const ProfileSubject& s, const TextSink& sink) {
  sink(roofline_svg(s.profile));
}
void profile_trace_of(const ProfileSubject& s, const TextSink& sink) {
  chrome_trace_parts(s.profile, sink);
}
void profile_html_of(const ProfileSubject& s, const TextSink& sink) {
  sink(html_report(s.profile));
}

void profile_sampling_csv_of(const ProfileSubject& s, const TextSink& sink) {
  sink(sampling_csv(s.profile));
}
bool profile_has_sampling(const ProfileSubject& s) {
  return s.profile.sampling.has_value();
}

constexpr Output<ProfileSubject> kProfileOutputs[] = {
    {"table", "profile.txt", true, &profile_table_of},
    {"json", "profile.json", true, &profile_json_of},
    {"csv", "profile.csv", true, &profile_csv_of},
    {"svg", "roofline.svg", false, &profile_svg_of},
    {"trace", "trace.json", false, &profile_trace_of},
    {"html", "report.html", false, &profile_html_of},
    {"sampling-csv", "sampling.csv", true, &profile_sampling_csv_of, &profile_has_sampling},
};

void comparison_table_of(const ComparisonSubject& s, const TextSink& sink) {
  sink(comparison_table(s.comparison, s.top));
}
void comparison_json_of(const ComparisonSubject& s, const TextSink& sink) {
  sink(comparison_json(s.comparison));
}
void comparison_html_of(const ComparisonSubject& s, const TextSink& sink) {
  sink(comparison_html(s.comparison, s.b));
}

constexpr Output<ComparisonSubject> kComparisonOutputs[] = {
    {"table", "compare.txt", true, &comparison_table_of},
    {"json", "compare.json", true, &comparison_json_of},
    {"html", "compare.html", false, &comparison_html_of},
};

void merged_table_of(const MergeSubject& s, const TextSink& sink) {
  sink(merged_table(s.merged, s.top));
}
void merged_json_of(const MergeSubject& s, const TextSink& sink) {
  sink(merged_json(s.merged));
}
void merged_html_of(const MergeSubject& s, const TextSink& sink) {
  sink(merged_html(s.merged));
}

constexpr Output<MergeSubject> kMergeOutputs[] = {
    {"table", "merged.txt", true, &merged_table_of},
    {"json", "merged.json", true, &merged_json_of},
    {"html", "merged.html", true, &merged_html_of},
};

constexpr Output<FleetComparison> kFleetOutputs[] = {
    {"table", "fleet.txt", true, &whole<FleetComparison, &fleet_table>},
    {"json", "fleet.json", true, &whole<FleetComparison, &fleet_json>},
    {"svg", "fleet.svg", false, &whole<FleetComparison, &fleet_svg>},
};

}  // namespace

std::span<const Output<ProfileSubject>> profile_outputs() {
  return kProfileOutputs;
}
std::span<const Output<ComparisonSubject>> comparison_outputs() {
  return kComparisonOutputs;
}
std::span<const Output<MergeSubject>> merge_outputs() {
  return kMergeOutputs;
}
std::span<const Output<FleetComparison>> fleet_outputs() {
  return kFleetOutputs;
}

}  // namespace hwprof::detail

namespace hwprof {

// Every file of the profile's registry, into one folder: what `hwprof profile -o DIR` and a
// program's HWPROF_OUTPUT both make. Each file is either the new one or untouched; profile.json
// and trace.json, which hold every span, are written as they are made.
std::optional<Error> write_profile_outputs(const Profile& profile, const std::string& dir, std::vector<std::string>* written) {
  namespace fs = std::filesystem;
  if (dir.empty()) return Error{"the output folder is empty"};
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Error{dir + ": cannot create the output folder (" + ec.message() + ")"};
  if (!fs::is_directory(dir, ec)) return Error{dir + ": not a folder"};
  const detail::ProfileSubject subject{profile, {.top = 0}};  // the folder's table has every row
  for (const detail::Output<detail::ProfileSubject>& output : detail::profile_outputs()) {
    if (!detail::output_applies(output, subject)) continue;
    const std::string path = (fs::path(dir) / output.file_name).string();
    if (auto error = detail::write_file_atomically_in_parts(path, [&](const detail::TextSink& sink) { output.render(subject, sink); })) return error;
    if (written != nullptr) written->push_back(path);
  }
  // Sampling's stacks (docs/sampling.md, "Outputs"): the flame graph and the formats other
  // tools read.
  if (profile.sampling) {
    const SamplingProfile& s = *profile.sampling;
    const std::vector<detail::SampledStack> stacks = detail::sampled_stacks(s);
    const std::string title = profile.model + " (" + s.spec + ")";
    const std::pair<const char*, std::string> files[] = {
        {"flamegraph.svg", detail::flamegraph_svg(title, s.frame_names, stacks, 1200.0, true)},
        {"samples.folded", detail::folded_stacks(s.frame_names, stacks)},
        {"samples.speedscope.json", detail::speedscope_json(title, s.frame_names, stacks)},
    };
    for (const auto& [name, text] : files) {
      const std::string path = (fs::path(dir) / name).string();
      if (auto error = detail::write_file_atomically_in_parts(path, [&](const detail::TextSink& sink) { sink(text); })) return error;
      if (written != nullptr) written->push_back(path);
    }
  }
  return std::nullopt;
}

}  // namespace hwprof
