#include "cli/report_command.hpp"

#include <iostream>
#include <stdexcept>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/arguments.hpp"
#include "cli/output.hpp"
#include "common/stages.hpp"
#include "hwprof/engine/profile.hpp"
#include "hwprof/engine/report.hpp"
#include "report/outputs.hpp"

namespace hwprof::cli {
namespace {

constexpr const char* kReportDescription = R"(Renders a profile saved by `hwprof profile` (its profile.json, or its --format json output)
without running anything: the table, JSON or CSV on standard output, and with --svg, --trace
and --html the roofline picture, the Chrome trace (open it in Perfetto, ui.perfetto.dev, or
chrome://tracing) and the self-contained HTML page. Files are written whole or not at all.)";

}  // namespace

std::shared_ptr<ReportCommandOptions> setup_report(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<ReportCommandOptions>();
  CLI::App* sub = app.add_subcommand("report", "Render a saved profile again: table, JSON, CSV, SVG roofline, trace, HTML");
  sub->description(kReportDescription);
  sub->add_option("profile", options->profile, "A profile.json written by `hwprof profile`")->required();
  sub->add_option("--svg", options->svg, "Write the roofline picture (SVG) to FILE")->check(file_name());
  sub->add_option("--trace", options->trace, "Write the Chrome trace (JSON, for Perfetto or chrome://tracing) to FILE")->check(file_name());
  sub->add_option("--html", options->html, "Write the self-contained HTML report to FILE")->check(file_name());
  sub->add_option("-f,--format", options->format, "What to print on standard output")
      ->check(CLI::IsMember(report::printable_formats(report::profile_outputs())))
      ->capture_default_str();
  add_table_options(*sub, options->table);
  sub->callback([options, &exit_code]() { exit_code = run_report(*options); });
  return options;
}

void add_table_options(CLI::App& sub, TableArguments& table) {
  sub.add_option("--sort", table.sort, "Table order: time to win (time x (1 - efficiency)), time, FLOPs or name")
      ->check(CLI::IsMember({"win", "time", "flops", "name"}))
      ->capture_default_str();
  sub.add_option("--top", table.top, "Rows in the table (0: all)")->check(CLI::Range(0, 1000000))->capture_default_str();
  sub.add_flag("--all", table.all, "Every row (the same as --top 0; in a PyTorch profile, also the ops that ran inside modules and other ops)");
  sub.add_flag("--counters", table.counters, "The counters per call even when no hardware counter counted");
  sub.add_option("--by", table.by,
                 "Rows per layer, or summed per op (all conv2d, all attention; a PyTorch profile's aten ops) or per block (see --depth), "
                 "or a PyTorch profile's modules of at most --depth name parts, each with its subtree")
      ->check(CLI::IsMember({"layer", "op", "block", "module"}))
      ->capture_default_str();
  sub.add_option("--depth", table.depth,
                 "--by block: how many dot-separated parts of a layer's name make its block (layer1.0.conv1 at 2: layer1.0); --by module: the "
                 "deepest modules listed")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
}

namespace {

ProfileTableOptions table_options(const TableArguments& a) {
  ProfileTableOptions o;
  o.sort = a.sort == "time" ? ProfileSort::time : a.sort == "flops" ? ProfileSort::flops : a.sort == "name" ? ProfileSort::name : ProfileSort::win;
  o.top = a.all ? 0 : a.top;
  o.nested_ops = a.all;
  o.counters = a.counters;
  o.by = a.by == "op"       ? ProfileGrouping::op
         : a.by == "block"  ? ProfileGrouping::block
         : a.by == "module" ? ProfileGrouping::module
                            : ProfileGrouping::layer;
  o.depth = a.depth;
  return o;
}

}  // namespace

std::string render_profile(const Profile& profile, const std::string& format, const TableArguments& table) {
  const auto* output = report::find_output(report::profile_outputs(), format);
  if (output == nullptr) throw std::logic_error("no profile output " + format);  // --format is checked against the same list
  return report::render_output(*output, report::ProfileSubject{profile, table_options(table)});
}

std::optional<Error> format_unavailable(const Profile& profile, const std::string& format) {
  const auto* output = report::find_output(report::profile_outputs(), format);
  if (output == nullptr || report::output_applies(*output, report::ProfileSubject{profile, {}})) return std::nullopt;
  return Error{"--format " + format + ": the profile has no sampling (profile with --sample; docs/sampling.md)"};
}

std::string written_note(const Profile& profile, std::uintmax_t bytes, bool trace) {
  std::string note = size_text(bytes);
  if (trace) {
    note += fmt::format(", {} sampled iteration{} of {}", profile.trace_iterations, profile.trace_iterations == 1 ? "" : "s", profile.iterations);
  }
  return note;
}

// What the message says was written: "roofline", "trace", "report".
const char* written_what(std::string_view format) {
  return format == "svg" ? "roofline" : format == "trace" ? "trace" : "report";
}

int run_report(const ReportCommandOptions& options) {
  auto profile = load_profile(options.profile);
  if (!profile) return fail(profile.error());
  // The files asked for by option, each in the format of the registry's entry.
  const std::pair<const std::string&, const char*> files[] = {{options.svg, "svg"}, {options.trace, "trace"}, {options.html, "html"}};
  const report::ProfileSubject subject{*profile, table_options(options.table)};
  for (const auto& [path, format] : files) {
    if (path.empty()) continue;
    const auto* output = report::find_output(report::profile_outputs(), format);
    const std::string content = report::render_output(*output, subject);
    if (auto error = write_file_atomically(path, content)) return fail(*error);
    std::cerr << "hwprof: wrote " << written_what(format) << " " << path << " ("
              << written_note(*profile, content.size(), std::string_view(format) == "trace") << ")\n";
  }
  if (auto unavailable = format_unavailable(*profile, options.format)) return fail(*unavailable);
  return emit(render_profile(*profile, options.format, options.table), "");
}

}  // namespace hwprof::cli
