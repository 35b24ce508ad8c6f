#include "cli/compare_command.hpp"

#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/arguments.hpp"
#include "cli/output.hpp"
#include "hwprof/profile.hpp"
#include "report/compare.hpp"

namespace hwprof::cli {
namespace {

constexpr const char* kCompareDescription = R"(Compares two profiles saved by `hwprof profile` (A: before, B: after). Layers are matched
by name and phase; those only one profile has are listed. Per layer: the medians, the change,
a Mann-Whitney U test on the kept per-call times (two-sided; Holm-adjusted across the layers,
so that the chance of any false verdict among them stays below --alpha), the efficiency and
bound in each, and a verdict: faster, slower, no significant change, or too few samples to
tell. The model total is tested on its own. With --fail-if-slower PCT, hwprof exits 3 when the
total or a layer is significantly slower by more than PCT percent: a regression gate for CI.)";

}  // namespace

std::shared_ptr<CompareCommandOptions> setup_compare(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<CompareCommandOptions>();
  CLI::App* sub = app.add_subcommand("compare", "Compare two profiles per layer, with a significance test (before/after, CI gates)");
  sub->description(kCompareDescription);
  sub->add_option("a", options->a, "The profile.json before (A)")->required();
  sub->add_option("b", options->b, "The profile.json after (B)")->required();
  sub->add_option("-f,--format", options->format, "Output format")->check(CLI::IsMember({"table", "json"}))->capture_default_str();
  sub->add_option("-o,--output", options->output, "Write the comparison to FILE (atomically) instead of standard output")
      ->check(file_name());
  sub->add_option("--alpha", options->alpha, "Significance level (after the Holm adjustment across the layers)")
      ->check(CLI::Range(1e-9, 0.5))
      ->capture_default_str();
  sub->add_option("--fail-if-slower", options->fail_if_slower,
                  "Exit 3 when the total or a layer is significantly slower by more than PCT percent")
      ->check(CLI::Range(0.0, 1e6));
  sub->add_option("--top", options->top, "Layer rows in the table (0: all)")->check(CLI::Range(0, 1000000))->capture_default_str();
  sub->add_flag("--all", options->all, "Every layer row (the same as --top 0)");
  sub->callback([options, &exit_code]() { exit_code = run_compare(*options); });
  return options;
}

int run_compare(const CompareCommandOptions& options) {
  auto a = load_profile(options.a);
  if (!a) return fail(a.error());
  auto b = load_profile(options.b);
  if (!b) return fail(b.error());
  detail::ProfileComparison c = detail::compare_profiles(*a, *b, options.alpha);
  c.a_label = options.a;
  c.b_label = options.b;
  std::string text = options.format == "json" ? detail::comparison_json(c) : detail::comparison_table(c, options.all ? 0 : options.top);
  std::vector<const detail::LayerChange*> slower;
  if (options.fail_if_slower >= 0) {
    slower = detail::regressions(c, options.fail_if_slower);
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
