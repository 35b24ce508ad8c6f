#include "cli/merge_command.hpp"

#include <CLI/CLI.hpp>

#include "cli/arguments.hpp"
#include "cli/output.hpp"
#include "report/merge.hpp"

namespace hwprof::cli {
namespace {

constexpr const char* kMergeDescription = R"(Merges the profiles of the ranks of one parallel run: each a folder that HWPROF_OUTPUT wrote
under mpirun, srun or torchrun (DIR/rank-00000/profile.json, ...), a rank's folder, or a
profile.json. Per region: what each rank spent in it (every call, every thread), the min,
median and max across the ranks, the imbalance ((max - mean) / max), the straggler rank, and
the ranks that lack it; per rank, its machine. Missing ranks are said.)";

}  // namespace

std::shared_ptr<MergeCommandOptions> setup_merge(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<MergeCommandOptions>();
  CLI::App* sub = app.add_subcommand("merge", "Merge the per-rank profiles of an MPI/Slurm/torchrun run: spread, imbalance, straggler");
  sub->description(kMergeDescription);
  sub->add_option("paths", options->paths, "Folders of rank-NNNNN/ profiles, rank folders, or profile.json files")->required();
  sub->add_option("-f,--format", options->format, "Output format")->check(CLI::IsMember({"table", "json"}))->capture_default_str();
  sub->add_option("-o,--output", options->output, "Write the merge to FILE (atomically) instead of standard output")->check(file_name());
  sub->add_option("--top", options->top, "Region rows in the table (0: all)")->check(CLI::Range(0, 1000000))->capture_default_str();
  sub->add_flag("--all", options->all, "Every region row (the same as --top 0)");
  sub->callback([options, &exit_code]() { exit_code = run_merge(*options); });
  return options;
}

int run_merge(const MergeCommandOptions& options) {
  auto ranks = detail::load_rank_profiles(options.paths);
  if (!ranks) return fail(ranks.error());
  const detail::MergedRanks merged = detail::merge_ranks(std::move(*ranks));
  const std::string text = options.format == "json" ? detail::merged_json(merged) : detail::merged_table(merged, options.all ? 0 : options.top);
  return emit(text, options.output);
}

}  // namespace hwprof::cli
