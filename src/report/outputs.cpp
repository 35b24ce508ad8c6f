// The output registry's lists (report/outputs.hpp), and the output folder written from them.
#include "report/outputs.hpp"

#include <filesystem>
#include <system_error>

#include <nlohmann/json.hpp>

#include "common/stages.hpp"
#include "report/compare.hpp"
#include "report/flamegraph.hpp"
#include "report/fleet.hpp"
#include "report/merge.hpp"
#include "report/report_parts.hpp"
#include "report/sampling_outputs.hpp"
#include "report/sampling_report.hpp"

namespace hwprof::report {
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

// Sampling's stacks (docs/sampling.md, "Outputs"): the flame graph and the formats other tools
// read, for a profile and for a recorded program alike.
enum class StackFormat { flamegraph, folded, speedscope };
template <StackFormat Format>
void stacks_of(const SamplingProfile& s, std::string_view title, const TextSink& sink) {
  const std::vector<SampledStack> stacks = sampled_stacks(s);
  if constexpr (Format == StackFormat::flamegraph) sink(flamegraph_svg(title, s.frame_names, stacks, 1200.0, true));
  if constexpr (Format == StackFormat::folded) sink(folded_stacks(s.frame_names, stacks));
  if constexpr (Format == StackFormat::speedscope) sink(speedscope_json(title, s.frame_names, stacks));
}
template <StackFormat Format>
void profile_stacks_of(const ProfileSubject& s, const TextSink& sink) {
  stacks_of<Format>(*s.profile.sampling, s.profile.model + " (" + s.profile.sampling->spec + ")", sink);
}

constexpr Output<ProfileSubject> kProfileOutputs[] = {
    {"table", "profile.txt", true, &profile_table_of},
    {"json", "profile.json", true, &profile_json_of},
    {"csv", "profile.csv", true, &profile_csv_of},
    {"svg", "roofline.svg", false, &profile_svg_of},
    {"trace", "trace.json", false, &profile_trace_of},
    {"html", "report.html", false, &profile_html_of},
    {"sampling-csv", "sampling.csv", true, &profile_sampling_csv_of, &profile_has_sampling},
    {"flamegraph", "flamegraph.svg", false, &profile_stacks_of<StackFormat::flamegraph>, &profile_has_sampling},
    {"folded", "samples.folded", false, &profile_stacks_of<StackFormat::folded>, &profile_has_sampling},
    {"speedscope", "samples.speedscope.json", false, &profile_stacks_of<StackFormat::speedscope>, &profile_has_sampling},
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

// sampling.json: the command, how it ended, and its sampling as profile.json's "sampling" member.
void record_json_of(const RecordSubject& s, const TextSink& sink) {
  nlohmann::ordered_json j;
  j["command"] = s.command;
  j["exit_code"] = s.exit_code;
  j["wall_seconds"] = s.wall_seconds;
  j["sampling"] = sampling_json(s.sampling);
  sink(j.dump(2) + "\n");
}
template <StackFormat Format>
void record_stacks_of(const RecordSubject& s, const TextSink& sink) {
  stacks_of<Format>(s.sampling, s.title, sink);
}

constexpr Output<RecordSubject> kRecordOutputs[] = {
    {"json", "sampling.json", true, &record_json_of},
    {"flamegraph", "flamegraph.svg", false, &record_stacks_of<StackFormat::flamegraph>},
    {"folded", "samples.folded", false, &record_stacks_of<StackFormat::folded>},
    {"speedscope", "samples.speedscope.json", false, &record_stacks_of<StackFormat::speedscope>},
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
std::span<const Output<RecordSubject>> record_outputs() {
  return kRecordOutputs;
}

}  // namespace hwprof::report

namespace hwprof {

// Every file of the profile's registry, into one folder: what `hwprof profile -o DIR` and a
// program's HWPROF_OUTPUT both make. Each file is either the new one or untouched; profile.json
// and trace.json, which hold every span, are written as they are made.
std::optional<Error> write_profile_outputs(const Profile& profile, const std::string& dir, std::vector<std::string>* written) {
  const report::ProfileSubject subject{profile, {.top = 0}};  // the folder's table has every row
  return report::write_outputs_to_folder(report::profile_outputs(), subject, dir, written);
}

}  // namespace hwprof
