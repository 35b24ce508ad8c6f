#include "cli/compare_command.hpp"

#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/arguments.hpp"
#include "cli/output.hpp"
#include "common/stages.hpp"
#include "hwprof/engine/machine.hpp"
#include "hwprof/engine/profile.hpp"
#include "hwprof/engine/report.hpp"
#include "report/compare.hpp"
#include "report/file_kind.hpp"
#include "report/fleet.hpp"
#include "report/outputs.hpp"

namespace hwprof::cli {
namespace {

constexpr const char* kCompareDescription = R"(Compares two profiles saved by `hwprof profile` (A: before, B: after). Layers are matched
by name and phase; those only one profile has are listed. Per layer: the medians, the change,
a Mann-Whitney U test on the kept per-call times (two-sided; Holm-adjusted across the layers,
so that the chance of any false verdict among them stays below --alpha), the efficiency and
bound in each, and a verdict: faster, slower, no significant change, or too few samples to
tell. The model total is tested on its own. With --fail-if-slower PCT, hwprof exits 3 when the
total or a layer is significantly slower by more than PCT percent: a regression gate for CI.

Given machine reports (hwprof calibrate's JSON) instead, two or more: the machines side by side
(CPU, caches, every ceiling of the one-thread and all-cores runs, with its ratio to the first),
and with --svg their rooflines in one picture.)";

}  // namespace

std::shared_ptr<CompareCommandOptions> setup_compare(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<CompareCommandOptions>();
  CLI::App* sub = app.add_subcommand("compare", "Compare two profiles per layer, with a significance test (before/after, CI gates)");
  sub->description(kCompareDescription);
  sub->add_option("files", options->files, "Two profile.json files (A: before, B: after), or two or more machine reports")
      ->required()
      ->expected(2, 64);
  sub->add_option("--html", options->html, "Profiles: write the comparison page (table, roofline with A -> B arrows) to FILE")->check(file_name());
  sub->add_option("--svg", options->svg, "Machine reports: write their rooflines, in one picture, to FILE")->check(file_name());
  sub->add_option("-f,--format", options->format, "Output format")
      ->check(CLI::IsMember(report::printable_formats(report::comparison_outputs())))
      ->capture_default_str();
  sub->add_option("-o,--output", options->output, "Write the comparison to FILE (atomically) instead of standard output")->check(file_name());
  sub->add_option("--alpha", options->alpha, "Significance level (after the Holm adjustment across the layers)")
      ->check(CLI::Range(1e-9, 0.5))
      ->capture_default_str();
  sub->add_option("--fail-if-slower", options->fail_if_slower, "Exit 3 when the total or a layer is significantly slower by more than PCT percent")
      ->check(CLI::Range(0.0, 1e6));
  sub->add_option("--top", options->top, "Layer rows in the table (0: all)")->check(CLI::Range(0, 1000000))->capture_default_str();
  sub->add_flag("--all", options->all, "Every layer row (the same as --top 0)");
  sub->callback([options, &exit_code]() { exit_code = run_compare(*options); });
  return options;
}

namespace {

// Machine reports side by side, when every file is one.
int machines_side_by_side(const CompareCommandOptions& options, std::vector<analysis::FleetMachine> machines) {
  const analysis::FleetComparison fleet = analysis::compare_machines(std::move(machines));
  if (!options.svg.empty()) {
    const std::string svg = report::render_output(*report::find_output(report::fleet_outputs(), "svg"), fleet);
    if (auto error = write_file_atomically(options.svg, svg)) return fail(*error);
    std::cerr << "hwprof: wrote the rooflines of " << fleet.machines.size() << " machines to " << options.svg << "\n";
  }
  const auto* output = report::find_output(report::fleet_outputs(), options.format);
  if (output == nullptr) return fail(Error{"machine reports have no " + options.format + " format"});
  return emit(report::render_output(*output, fleet), options.output);
}

}  // namespace

int run_compare(const CompareCommandOptions& options) {
  // Each file is a machine report or a profile; all of one kind.
  std::vector<analysis::FleetMachine> machines;
  std::vector<Profile> profiles;
  for (const std::string& file : options.files) {
    auto m = load_machine(file);
    if (m) {
      machines.push_back({file, std::move(*m)});
      continue;
    }
    auto p = load_profile(file);
    if (p) {
      profiles.push_back(std::move(*p));
      continue;
    }
    if (auto other = report::other_hwprof_file(file)) {
      return fail(
          Error{fmt::format("{}: this is {}; compare reads two profiles (`hwprof profile -o DIR` writes DIR/profile.json), or two or more "
                            "machine reports",
                            file, *other)});
    }
    return fail(Error{"not a machine report (" + m.error().message + ") nor a profile (" + p.error().message + ")"});
  }
  if (!machines.empty() && !profiles.empty()) {
    return fail(Error{"got machine reports and profiles together: compare machine reports with machine reports (" + machines.front().file +
                      ", ...), profiles with profiles"});
  }
  if (!machines.empty()) {
    if (!options.html.empty()) return fail(Error{"--html is the page of two profiles compared; for machine reports, --svg draws their rooflines"});
    return machines_side_by_side(options, std::move(machines));
  }
  if (profiles.size() != 2) {
    return fail(Error{fmt::format("compare takes two profiles (A and B), or two or more machine reports; got {} profiles", profiles.size())});
  }
  if (!options.svg.empty()) return fail(Error{"--svg draws machine reports' rooflines; for profiles, `hwprof report --svg` draws each"});
  const Profile* a = &profiles[0];
  const Profile* b = &profiles[1];
  analysis::ProfileComparison c = analysis::compare_profiles(*a, *b, options.alpha);
  c.a_label = options.files[0];
  c.b_label = options.files[1];
  const report::ComparisonSubject subject{c, *b, options.all ? 0 : options.top};
  if (!options.html.empty()) {
    const std::string html = report::render_output(*report::find_output(report::comparison_outputs(), "html"), subject);
    if (auto error = write_file_atomically(options.html, html)) return fail(*error);
    std::cerr << "hwprof: wrote the comparison page " << options.html << "\n";
  }
  std::string text = report::render_output(*report::find_output(report::comparison_outputs(), options.format), subject);
  std::vector<const analysis::LayerChange*> slower;
  if (options.fail_if_slower >= 0) {
    slower = analysis::regressions(c, options.fail_if_slower);
    if (options.format != "json") {
      text += slower.empty() ? fmt::format("\n--fail-if-slower {}: nothing significantly slower by more than {}%\n", options.fail_if_slower,
                                           options.fail_if_slower)
                             : fmt::format("\n--fail-if-slower {}: {} significantly slower by more than {}%:\n", options.fail_if_slower,
                                           slower.size() == 1 ? "1 row is" : fmt::format("{} rows are", slower.size()), options.fail_if_slower);
      for (const auto* l : slower) text += fmt::format("  {}: {:+.1f}% (p = {:.2g})\n", l->name, 100 * l->change, l->p_adjusted.value_or(1));
    }
  }
  if (const int written = emit(text, options.output); written != 0) return written;
  return slower.empty() ? kExitOk : kExitSlower;
}

}  // namespace hwprof::cli
