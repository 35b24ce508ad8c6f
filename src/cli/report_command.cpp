#include "cli/report_command.hpp"

#include <iostream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/arguments.hpp"
#include "cli/output.hpp"
#include "hwprof/profile.hpp"
#include "hwprof/report.hpp"

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
      ->check(CLI::IsMember({"table", "json", "csv"}))
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
  sub.add_flag("--all", table.all, "Every row (the same as --top 0)");
  sub.add_flag("--counters", table.counters, "The counters per call even when no hardware counter counted");
  sub.add_option("--by", table.by, "Rows per layer, or summed per op (all conv2d, all attention) or per block (see --depth)")
      ->check(CLI::IsMember({"layer", "op", "block"}))
      ->capture_default_str();
  sub.add_option("--depth", table.depth, "--by block: how many dot-separated parts of a layer's name make its block (layer1.0.conv1 at 2: layer1.0)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
}

namespace {

ProfileTableOptions table_options(const TableArguments& a) {
  ProfileTableOptions o;
  o.sort = a.sort == "time" ? ProfileSort::time : a.sort == "flops" ? ProfileSort::flops : a.sort == "name" ? ProfileSort::name : ProfileSort::win;
  o.top = a.all ? 0 : a.top;
  o.counters = a.counters;
  o.by = a.by == "op" ? ProfileGrouping::op : a.by == "block" ? ProfileGrouping::block : ProfileGrouping::layer;
  o.depth = a.depth;
  return o;
}

}  // namespace

std::string render_profile(const Profile& profile, const std::string& format, const TableArguments& table) {
  const ProfileTableOptions options = table_options(table);
  if (format == "json") {
    return options.by == ProfileGrouping::layer ? profile_to_json(profile) : profile_to_json(profile, options.by, options.depth);
  }
  if (format == "csv") return options.by == ProfileGrouping::layer ? profile_csv(profile) : profile_groups_csv(profile, options.by, options.depth);
  return profile_table(profile, options);
}

std::string written_note(const Profile& profile, std::uintmax_t bytes, bool trace) {
  std::string note = size_text(bytes);
  if (trace) {
    note += fmt::format(", {} sampled iteration{} of {}", profile.trace_iterations, profile.trace_iterations == 1 ? "" : "s", profile.iterations);
  }
  return note;
}

int run_report(const ReportCommandOptions& options) {
  auto profile = load_profile(options.profile);
  if (!profile) return fail(profile.error());
  struct Output {
    const std::string& path;
    std::string (*render)(const Profile&);
    const char* what;
  };
  const Output outputs[] = {
      {options.svg, &roofline_svg, "roofline"}, {options.trace, &chrome_trace, "trace"}, {options.html, &html_report, "report"}};
  for (const Output& o : outputs) {
    if (o.path.empty()) continue;
    const std::string content = o.render(*profile);
    if (auto error = write_file_atomically(o.path, content)) return fail(*error);
    std::cerr << "hwprof: wrote " << o.what << " " << o.path << " (" << written_note(*profile, content.size(), o.render == &chrome_trace) << ")\n";
  }
  return emit(render_profile(*profile, options.format, options.table), "");
}

}  // namespace hwprof::cli
