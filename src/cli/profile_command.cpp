#include "cli/profile_command.hpp"

#include <filesystem>
#include <iostream>

#include <unistd.h>
#include <CLI/CLI.hpp>

#include "cli/arguments.hpp"
#include "cli/data_lookup.hpp"
#include "cli/output.hpp"
#include "cli/report_command.hpp"
#include "common/launch_rank.hpp"
#include "common/stages.hpp"
#include "hwprof/engine/executor.hpp"
#include "hwprof/engine/machine.hpp"
#include "hwprof/engine/profiler.hpp"
#include "hwprof/engine/report.hpp"
#include "report/outputs.hpp"
#include "sampling/sample_spec.hpp"

namespace hwprof::cli {
namespace {

constexpr const char* kProfileDescription = R"(Runs MODEL on hwprof's engine (OpenBLAS kernels) and measures every layer around its own
kernels: time per call (median, spread, 95% confidence interval of the median, overhead of the
measurement subtracted), counters summed over the calls (perf_event, PAPI or time only), and
the layer's analytic cost (hwprof summary). Each layer is placed on this machine's roofline
(the ceilings of `hwprof calibrate`; a quick calibration runs first when none is stored) and
called compute-, memory- or overhead-bound, with its efficiency and headroom.

Every figure says where it came from: measured (counters, clocks), analytic (the cost model)
or estimated (e.g. LLC misses x 64 bytes). A counter that could not be read is shown as n/a
with the reason and the fix, never as 0.

MODEL is an .onnx file, a spec (.json) or the name of a built-in model (see models/).)";

BackendKind parse_backend(const std::string& name) {
  if (name == "perf") return BackendKind::perf;
  if (name == "papi") return BackendKind::papi;
  if (name == "timer") return BackendKind::timer;
  return BackendKind::automatic;
}

void say(const std::string& line) {
  if (::isatty(2)) std::cerr << "hwprof: " << line << "\n";
}

// "profile.txt, profile.json, ... and report.html": the profile's output folder, from the registry.
std::string folder_files() {
  std::string out;
  const auto outputs = report::profile_outputs();
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == outputs.size() ? " and " : ", ") + std::string(outputs[i].file_name);
  }
  return out;
}

}  // namespace

std::shared_ptr<ProfileCommandOptions> setup_profile(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<ProfileCommandOptions>();
  CLI::App* sub = app.add_subcommand("profile", "Measure every layer: time, counters, roofline placement and bound");
  sub->description(kProfileDescription);
  add_model_argument(*sub, options->model);
  sub->add_option("-b,--batch", options->batch, "Batch size")->check(positive_integer())->capture_default_str();
  sub->add_option("--input-shape", options->input_shape, "Per-sample input shape instead of the spec's, e.g. 3,160,160")->check(shape_text());
  sub->add_flag("--train", options->train, "Profile a training step: forward, loss, backward and optimizer");
  sub->add_option("--optimizer", options->optimizer, "Optimizer of --train (SGD with momentum 0.9, or Adam)")
      ->check(CLI::IsMember({"sgd", "adam"}))
      ->capture_default_str();
  sub->add_option("--lr", options->learning_rate, "Learning rate of --train")->check(finite_range(1e-12, 1e6))->capture_default_str();
  sub->add_option("-t,--threads", options->threads, "Kernel threads (0: one per physical core)")->check(CLI::Range(0, 4096))->capture_default_str();
  sub->add_option("--warmup", options->warmup, "Warm-up runs (default: until the last 5 runs vary by < 5%, at most 50)")
      ->check(CLI::Range(0, 100000));
  sub->add_option("--iterations", options->iterations, "Measured iterations (default: as many as fit in --min-time, at least 5)")
      ->check(CLI::Range(1, 1000000));
  sub->add_option("--min-time", options->min_seconds, "Seconds of measured iterations when --iterations is not given")
      ->check(finite_range(0.0, 3600.0))
      ->capture_default_str();
  sub->add_option("--backend", options->backend, "Counter backend (auto: perf_event, or time only when no counter opens)")
      ->check(CLI::IsMember({"auto", "perf", "papi", "timer"}))
      ->capture_default_str();
  sub->add_option("--group", options->group, "Counter group: a name from counters/<family>/ (see `hwprof info`) or a group file");
  sub->add_option("-e,--events", options->events, "Counter events (libpfm4, kernel or PAPI names), comma-separated")->allow_extra_args(false);
  sub->add_option("--calibration", options->calibration, "Machine report to take the ceilings from (default: this machine's stored one)")
      ->check(file_name());
  add_table_options(*sub, options->table);
  sub->add_option("-f,--format", options->format, "Output format on standard output")
      ->check(CLI::IsMember(report::printable_formats(report::profile_outputs())))
      ->capture_default_str();
  sub->add_option("-o,--output", options->output_dir, "Also write into DIR " + folder_files())->check(file_name());
  sub->add_option("--seed", options->seed, "Seed of the parameters and the synthetic input")->check(unsigned_integer())->capture_default_str();
  CLI::Option* sample =
      sub->add_option("--sample", options->sample,
                      "Also sample where inside each layer the time goes: EVENT[@RATE] (default cpu-clock@1000, 1000 Hz; docs/sampling.md)")
          ->expected(0, 1);
  sub->callback([options, sample, &exit_code]() {
    if (sample->count() > 0 && options->sample.empty()) options->sample = std::string(sampling::kDefaultSampleSpec);
    exit_code = run_profile(*options);
  });
  return options;
}

namespace {

// One of several ranks (mpirun, srun, torchrun): DIR/rank-00003/, never all ranks in one
// folder; a rank whose number cannot be read gets a folder of this process's own, DIR/pid-N/.
std::string rank_output_dir(const std::string& dir) {
  const common::LaunchRank rank = common::launch_rank();
  for (const std::string& problem : rank.problems) std::cerr << "hwprof: warning: " << problem << " (the launcher's rank variable)\n";
  if (rank.known()) return dir + "/" + common::rank_folder(rank.rank);
  if (rank.problems.empty()) return dir;
  const std::string own = dir + "/pid-" + std::to_string(::getpid());
  std::cerr << "hwprof: warning: writing into " << own << " instead\n";
  return own;
}

}  // namespace

int run_profile(const ProfileCommandOptions& given) {
  ProfileCommandOptions options = given;
  if (!options.output_dir.empty()) options.output_dir = rank_output_dir(options.output_dir);
  if (options.format == "sampling-csv" && options.sample.empty()) return fail(Error{"--format sampling-csv needs --sample (docs/sampling.md)"});
  auto graph = load_model_argument(options.model, options.input_shape);
  if (!graph) return fail(graph.error());
  if (!options.output_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options.output_dir, ec);
    if (ec) return fail(Error{options.output_dir + ": cannot create the output directory (" + ec.message() + ")"});
  }

  ProfileOptions po;
  po.batch = options.batch;
  po.train = options.train;
  po.optimizer.kind = optimizer_argument(options.optimizer);
  po.optimizer.learning_rate = options.learning_rate;
  po.threads = options.threads;
  po.seed = options.seed;
  po.warmup = options.warmup;
  po.iterations = options.iterations;
  po.min_seconds = options.min_seconds;
  po.sample = options.sample;
  po.backend = parse_backend(options.backend);
  po.group = options.group;
  auto events = event_arguments(options.events);
  if (!events) {
    std::cerr << "hwprof: error: " << events.error().message << "\n";
    return kExitUsage;
  }
  po.events = std::move(*events);
  po.counters_dirs = counter_directories();
  po.progress = say;
  {
    // Before a quick calibration could run: a model that cannot fit is refused at once.
    ExecutorOptions eo;
    eo.batch = options.batch;
    eo.training = options.train;
    eo.optimizer.kind = po.optimizer.kind;
    if (auto error = Executor::check_memory(*graph, eo)) return fail(*error);
    if (auto error = check_profile_memory(*graph, po)) return fail(*error);
  }
  CeilingsOptions where;
  where.file = options.calibration;
  where.threads = options.threads;
  where.progress = say;
  where.notice = [](const std::string& line) { std::cerr << "hwprof: " << line << "\n"; };
  auto ceilings = find_ceilings(where);
  if (!ceilings) return fail(ceilings.error());
  po.machine = std::move(ceilings->machine);
  po.machine_source = std::move(ceilings->source);

  auto profile = profile_model(*graph, po);
  if (!profile) return fail(profile.error());
  // The table shows the warnings and hints first; JSON and CSV readers see them on stderr.
  if (options.format != "table") {
    for (const std::string& warning : profile->warnings) std::cerr << "hwprof: warning: " << warning << "\n";
    for (const std::string& hint : profile->hints) std::cerr << "hwprof: " << hint << "\n";
  }

  if (!options.output_dir.empty()) {
    std::vector<std::string> written;
    if (auto error = write_profile_outputs(*profile, options.output_dir, &written)) return fail(*error);
    for (const std::string& file : written) {
      std::error_code ec;
      const std::uintmax_t bytes = std::filesystem::file_size(file, ec);
      const bool trace = std::filesystem::path(file).filename() == "trace.json";
      std::cerr << "hwprof: wrote " << file << (ec ? "" : " (" + written_note(*profile, bytes, trace) + ")") << "\n";
    }
  }
  TableArguments table = options.table;
  table.counters = table.counters || !options.events.empty();  // events named on the command line are wanted in the table
  if (auto unavailable = format_unavailable(*profile, options.format)) return fail(*unavailable);
  return emit(render_profile(*profile, options.format, table), "");
}

}  // namespace hwprof::cli
