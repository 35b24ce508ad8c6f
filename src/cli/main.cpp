// hwprof: one file per subcommand; main only wires them together.
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <unistd.h>

#include <CLI/CLI.hpp>

#include "cli/bench_command.hpp"
#include "cli/calibrate_command.hpp"
#include "cli/compare_command.hpp"
#include "cli/info_command.hpp"
#include "cli/merge_command.hpp"
#include "cli/output.hpp"
#include "cli/profile_command.hpp"
#include "cli/record_command.hpp"
#include "cli/report_command.hpp"
#include "cli/run_command.hpp"
#include "cli/stat_command.hpp"
#include "cli/summary_command.hpp"
#include "hwprof/engine/executor.hpp"
#include "hwprof/version.hpp"

namespace {

// OpenBLAS picks its kernels when it loads, from its own CPU detection or OPENBLAS_CORETYPE.
// Where Debian 12's OpenBLAS 0.3.21 is older than the CPU, its detection can settle on kernels
// without AVX-512 on a CPU that has it: AVX2 ("Haswell", "Zen"), or even SSE3 ("Prescott", on
// an Emerald Rapids guest), or "Cooperlake" on Zen 5. Its
// SkylakeX kernels need only AVX-512 F, CD, BW, DQ and VL, and do twice the FLOPs per cycle. hwprof then sets OPENBLAS_CORETYPE=SkylakeX and starts
// itself again. Only the subcommands that run GEMMs do this (never `stat`, whose child would inherit the variable); a user's own OPENBLAS_CORETYPE is
// never overridden (hwprof::blas_info says when it holds OpenBLAS back), and HWPROF_KEEP_BLAS_CORE=1 turns this off.
void prefer_avx512_blas(int argc, char** argv) {
  if (argc < 2) return;
  const std::string sub = argv[1];
  if (sub != "profile" && sub != "bench" && sub != "calibrate" && sub != "run") return;
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr || std::getenv("HWPROF_KEEP_BLAS_CORE") != nullptr) return;
  if (!hwprof::blas_info().avx512_unused) return;
  ::setenv("OPENBLAS_CORETYPE", "SkylakeX", 1);
  ::setenv("HWPROF_BLAS_CORE_BY", "hwprof", 1);  // for reports (hwprof::blas_info)
  ::execv("/proc/self/exe", argv);
  ::unsetenv("OPENBLAS_CORETYPE");  // exec failed: go on with the kernels already loaded
  ::unsetenv("HWPROF_BLAS_CORE_BY");
}

int run_cli(int argc, char** argv) {
  CLI::App app{"hwprof — what each layer of a neural network should cost, and what it did cost here"};
  app.set_version_flag("-V,--version", std::string("hwprof ") + hwprof::kVersion);
  app.require_subcommand(1);
  app.footer("Run 'hwprof SUBCOMMAND --help' for the options of each subcommand.");
  int exit_code = hwprof::cli::kExitOk;
  hwprof::cli::setup_summary(app, exit_code);
  hwprof::cli::setup_calibrate(app, exit_code);
  hwprof::cli::setup_info(app, exit_code);
  auto stat = hwprof::cli::setup_stat(app, exit_code);
  hwprof::cli::setup_profile(app, exit_code);
  hwprof::cli::setup_bench(app, exit_code);
  hwprof::cli::setup_report(app, exit_code);
  hwprof::cli::setup_compare(app, exit_code);
  hwprof::cli::setup_merge(app, exit_code);
  hwprof::cli::setup_run(app, exit_code);
  auto record = hwprof::cli::setup_record(app, exit_code);
  // `hwprof stat|record [OPTIONS] -- CMD ARGS`: everything after the first `--` is the program's, even
  // words that look like hwprof's options (`-- sort -o out.txt in.txt`); CLI11 never sees it.
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && (args.front() == "stat" || args.front() == "record")) {
    if (const auto dashes = std::find(args.begin(), args.end(), "--"); dashes != args.end()) {
      (args.front() == "stat" ? stat->command : record->command).assign(dashes + 1, args.end());
      args.erase(dashes, args.end());
    }
  }
  std::reverse(args.begin(), args.end());  // CLI11 takes a vector in reverse order
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    if (what.find("A subcommand is required") != std::string::npos && argc > 1 && argv[1][0] != '-') {
      // `hwprof frobnicate`: name the word that is not a subcommand.
      what = "'" + std::string(argv[1]) +
             "' is not a subcommand of hwprof (summary, bench, profile, run, report, compare, merge, calibrate, info, stat, record)";
    }
    std::cerr << "hwprof: error: " << what << "\nRun 'hwprof --help' for usage.\n";
    return hwprof::cli::kExitUsage;
  }
  return exit_code;
}

}  // namespace

// Exceptions stop here (everything below returns Result<T>); one that gets this far is a bug or
// an exhausted machine (std::bad_alloc), said as such rather than as an abort.
int main(int argc, char** argv) {
  try {
    prefer_avx512_blas(argc, argv);
    return run_cli(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "hwprof: internal error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "hwprof: internal error: an exception of an unknown type\n";
  }
  return hwprof::cli::kExitError;
}
