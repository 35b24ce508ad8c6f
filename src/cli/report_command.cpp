#include "cli/report_command.hpp"

#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

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
  sub->add_option("--trace", options->trace, "Write the Chrome trace (JSON, for Perfetto or chrome://tracing) to FILE")
      ->check(file_name());
  sub->add_option("--html", options->html, "Write the self-contained HTML report to FILE")->check(file_name());
  sub->add_option("-f,--format", options->format, "What to print on standard output")
      ->check(CLI::IsMember({"table", "json", "csv"}))
      ->capture_default_str();
  sub->add_option("--sort", options->sort, "Table order")->check(CLI::IsMember({"time", "flops", "name"}))->capture_default_str();
  sub->add_option("--top", options->top, "Show only the first K rows of the table (0: all)")->check(CLI::Range(0, 1000000));
  sub->callback([options, &exit_code]() { exit_code = run_report(*options); });
  return options;
}

std::string render_profile(const Profile& profile, const std::string& format, const std::string& sort, int top) {
  if (format == "json") return profile_to_json(profile);
  if (format == "csv") return profile_csv(profile);
  const ProfileSort order = sort == "flops" ? ProfileSort::flops : sort == "name" ? ProfileSort::name : ProfileSort::time;
  return profile_table(profile, order, top);
}

std::string written_note(const Profile& profile, std::uintmax_t bytes, bool trace) {
  std::string note = size_text(bytes);
  if (trace) {
    note += fmt::format(", {} sampled iteration{} of {}", profile.trace_iterations, profile.trace_iterations == 1 ? "" : "s",
                        profile.iterations);
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
  const Output outputs[] = {{options.svg, &roofline_svg, "roofline"}, {options.trace, &chrome_trace, "trace"}, {options.html, &html_report, "report"}};
  for (const Output& o : outputs) {
    if (o.path.empty()) continue;
    const std::string content = o.render(*profile);
    if (auto error = write_file_atomically(o.path, content)) return fail(*error);
    std::cerr << "hwprof: wrote " << o.what << " " << o.path << " (" << written_note(*profile, content.size(), o.render == &chrome_trace)
              << ")\n";
  }
  return emit(render_profile(*profile, options.format, options.sort, options.top), "");
}

}  // namespace hwprof::cli
