#include "cli/merge_command.hpp"

#include <filesystem>

#include <CLI/CLI.hpp>

#include "cli/arguments.hpp"
#include "cli/output.hpp"
#include "common/input_file.hpp"
#include "common/stages.hpp"
#include "hwprof/engine/report.hpp"
#include "report/merge.hpp"
#include "report/outputs.hpp"
#include "report/rank_files.hpp"

namespace hwprof::cli {
namespace {

constexpr const char* kMergeDescription = R"(Merges the profiles of the ranks of one parallel run: each a folder that HWPROF_OUTPUT wrote
under mpirun, srun or torchrun (DIR/rank-00000/profile.json, ...), a rank's folder, or a
profile.json. Per region: what each rank spent in it (every call, every thread), the min,
median and max across the ranks, the imbalance ((max - mean) / max), the straggler rank, and
the ranks that lack it; per rank, its machine. Missing ranks are said.

A merge.json (from `hwprof merge -f json`, or the merged.json hwprof::mpi writes at
MPI_Finalize) is rendered again in any format: --format html gives a page with every rank's
time per region and a roofline with the spread across the ranks.)";

// A single merge JSON file given: read it back; else merge the ranks' profiles.
Result<session::MergedRanks> merged_input(const std::vector<std::string>& paths) {
  if (paths.size() == 1) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(paths.front(), ec)) {
      auto text = common::read_input_file(paths.front(), "profile or merge", std::size_t{1} << 30);
      if (text) {
        if (auto merged = report::merged_if_merge(*text, paths.front())) return std::move(*merged);
      }
    }
  }
  auto found = report::load_rank_profiles(paths);
  if (!found) return found.error();
  return analysis::merge_ranks(std::move(found->ranks), found->empty_folders);
}

}  // namespace

std::shared_ptr<MergeCommandOptions> setup_merge(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<MergeCommandOptions>();
  CLI::App* sub = app.add_subcommand("merge", "Merge the per-rank profiles of an MPI/Slurm/torchrun run: spread, imbalance, straggler");
  sub->description(kMergeDescription);
  sub->add_option("paths", options->paths, "Folders of rank-NNNNN/ profiles, rank folders, profile.json files, or one merge JSON")->required();
  sub->add_option("-f,--format", options->format, "Output format")
      ->check(CLI::IsMember(report::printable_formats(report::merge_outputs())))
      ->capture_default_str();
  sub->add_option("-o,--output", options->output, "Write the merge to FILE (atomically) instead of standard output")->check(file_name());
  sub->add_option("--html", options->html, "Also write the HTML page (per-rank view, roofline with the spread) to FILE")->check(file_name());
  sub->add_option("--top", options->top, "Region rows in the table (0: all)")->check(CLI::Range(0, 1000000))->capture_default_str();
  sub->add_flag("--all", options->all, "Every region row (the same as --top 0)");
  sub->callback([options, &exit_code]() { exit_code = run_merge(*options); });
  return options;
}

int run_merge(const MergeCommandOptions& options) {
  const auto merged = merged_input(options.paths);
  if (!merged) return fail(merged.error());
  const report::MergeSubject subject{*merged, options.all ? 0 : options.top};
  if (!options.html.empty()) {
    const std::string html = report::render_output(*report::find_output(report::merge_outputs(), "html"), subject);
    if (auto error = write_file_atomically(options.html, html)) return fail(*error);
  }
  const std::string text = report::render_output(*report::find_output(report::merge_outputs(), options.format), subject);
  return emit(text, options.output);
}

}  // namespace hwprof::cli
