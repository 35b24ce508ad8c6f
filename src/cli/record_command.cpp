#include "cli/record_command.hpp"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>

#include <fmt/format.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include "cli/child_process.hpp"
#include "cli/output.hpp"
#include "common/stages.hpp"
#include "profile/recorded_profile.hpp"
#include "report/outputs.hpp"
#include "report/sampling_report.hpp"
#include "sampling/sample_spec.hpp"
#include "sampling/sampler.hpp"
#include "session/span_file.hpp"

namespace hwprof::cli {

std::shared_ptr<RecordCommandOptions> setup_record(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<RecordCommandOptions>();
  CLI::App* sub = app.add_subcommand("record", "Sample a whole program, like perf record");
  sub->description(
      "Runs CMD (no shell) and samples it from its exec to its exit: every thread it starts and every process it\n"
      "forks. Prints, for each of its regions (the hwprof regions library, hwprof::torch's modules and ops) or\n"
      "for the whole program where it has none, the functions its samples landed in, with their share of the\n"
      "row's samples and the share's 95% interval; lost, throttled and dropped samples are counted, never hidden.\n"
      "The report goes to standard error (the program keeps standard output); hwprof exits with the program's\n"
      "exit code (128 + the signal that ended it; 127 where it cannot be run).\n\n"
      "Examples: hwprof record -- ./train\n"
      "          hwprof record -e cpu-clock@4000 -o out/ -- python3 train.py   (out/flamegraph.svg, samples.folded, ...)");
  sub->add_option("-e,--event", options->event,
                  "What to sample: EVENT[@RATE] (default cpu-clock@1000: 1000 Hz of CPU time; cycles@p100000 where the CPU has a PMU)");
  sub->add_option("-o,--output", options->output,
                  "Also write DIR/sampling.json, flamegraph.svg, samples.folded and samples.speedscope.json (each whole or not at all)");
  sub->add_option("--top", options->top, "Rows shown in the table (0: all)")->capture_default_str();
  sub->prefix_command();
  sub->callback([options, sub, &exit_code]() {
    if (options->command.empty()) options->command = sub->remaining();
    if (options->command.empty()) {
      std::cerr << "hwprof: error: record: no program given; usage: hwprof record [OPTIONS] -- CMD [ARGS...]\n";
      exit_code = kExitUsage;
      return;
    }
    exit_code = run_record(*options);
  });
  return options;
}

namespace {

// The folder the program's span files go into (HWPROF_RECORD_SPANS): private, removed after.
class SpanFolder {
 public:
  SpanFolder() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/hwprof-record-XXXXXX";
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~SpanFolder() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  SpanFolder(const SpanFolder&) = delete;
  SpanFolder& operator=(const SpanFolder&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The output folder, made and checked before the program runs: a bad -o fails at once.
std::optional<Error> check_record_folder(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Error{"-o " + dir + ": cannot create the output folder (" + ec.message() + ")"};
  if (!std::filesystem::is_directory(dir, ec)) return Error{"-o " + dir + ": not a folder"};
  if (::access(dir.c_str(), W_OK) != 0) return Error{"-o " + dir + ": the folder is not writable"};
  return std::nullopt;
}

std::string record_header(const RecordCommandOptions& options, const ChildResult& child, const profile::Recording& r, const SamplingProfile& s) {
  std::string out = fmt::format("\n hwprof record '{}': {} at {}, {} sample{} (measured) in {:.3f} s wall, {} thread{} sampled; exit code {}\n",
                                quote_command(options.command), s.spec, s.rate, s.samples, s.samples == 1 ? "" : "s", child.wall_seconds,
                                r.stats.threads_seen, r.stats.threads_seen == 1 ? "" : "s", child.exit_code);
  out += fmt::format(" lost {}, throttled {}, dropped {}, outside every region {}, ambiguous {}\n", s.lost, s.throttled, s.dropped, s.outside,
                     s.ambiguous);
  return out;
}

}  // namespace

int run_record(const RecordCommandOptions& options) {
  const std::string spec_text = options.event.empty() ? std::string(sampling::kDefaultSampleSpec) : options.event;
  // Refused before anything runs: the spec, then the output folder.
  auto spec = sampling::parse_sample_spec(spec_text);
  if (!spec) {
    std::cerr << "hwprof: error: record: -e " << spec_text << ": " << spec.error().message << "\n";
    return kExitUsage;
  }
  if (!options.output.empty()) {
    if (auto error = check_record_folder(options.output)) return fail(*error);
  }
  const SpanFolder span_folder;
  if (span_folder.path().empty()) std::cerr << "hwprof: warning: no private folder for the program's region spans; its regions are not attributed\n";
  std::optional<sampling::Sampler> sampler;
  pid_t launched = 0;
  const auto attach = [&](pid_t pid) -> std::optional<Error> {
    launched = pid;
    sampling::SamplerOptions so;
    so.pid = pid;
    so.enable_on_exec = true;
    auto opened = sampling::Sampler::open(*spec, so);
    if (!opened) return Error{"record: -e " + spec_text + ": " + opened.error().message + " (the program was not run)"};
    sampler.emplace(std::move(opened).value());
    sampler->start();
    return std::nullopt;
  };
  std::vector<std::string> environment;
  if (!span_folder.path().empty()) environment.push_back(std::string(session::kRecordSpansVariable) + "=" + span_folder.path());
  auto child = run_child(options.command, attach, environment);
  if (!child) return fail(child.error());
  if (!child->exec_error.empty()) {
    std::cerr << "hwprof: error: " << child->exec_error << "\n";
    return 127;
  }
  profile::Recording recording;
  recording.launched = launched;
  sampler->stop();
  recording.stats = sampler->stats();
  recording.warnings = sampler->warnings();
  recording.store = sampler->take_data();
  const SamplingProfile s = profile::recorded_sampling(spec_text, options.command.front(), recording, span_folder.path());
  Profile shown;
  shown.sampling = s;
  std::cerr << record_header(options, *child, recording, s) << report::sampling_section(shown, options.top);
  if (!options.output.empty()) {
    std::vector<std::string> written;
    const report::RecordSubject subject{s, options.command, child->exit_code, child->wall_seconds,
                                        quote_command(options.command) + " (" + s.spec + ")"};
    if (auto error = report::write_outputs_to_folder(report::record_outputs(), subject, options.output, &written)) {
      fail(*error);
      return child->exit_code == 0 ? kExitError : child->exit_code;
    }
    for (const std::string& w : written) std::cerr << "wrote " << w << "\n";
  }
  return child->exit_code;
}

}  // namespace hwprof::cli
