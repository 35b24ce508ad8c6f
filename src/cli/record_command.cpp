#include "cli/record_command.hpp"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <unistd.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/child_process.hpp"
#include "cli/output.hpp"
#include "hwprof/atomic_file.hpp"
#include "placement/process_samples.hpp"
#include "profile/recorded_profile.hpp"
#include "profile/span_file_reader.hpp"
#include "report/flamegraph.hpp"
#include "report/sampling_report.hpp"
#include "sampling/sample_spec.hpp"
#include "sampling/sampler.hpp"
#include "session/span_file.hpp"
#include "symbols/recorded_mappings.hpp"
#include "symbols/symbols.hpp"

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

// A process's command name: its name at its last exec, else the last it had; else the command's.
std::string recorded_name(const detail::SampleStore& store, std::uint32_t pid, const std::string& fallback) {
  std::string name;
  bool from_exec = false;
  for (const detail::CommRecord& c : store.comms) {
    if (c.pid != pid || c.tid != pid) continue;
    if (c.exec || !from_exec) name = c.comm;
    from_exec = from_exec || c.exec;
  }
  return name.empty() ? std::filesystem::path(fallback).filename().string() : name;
}

// Each process with samples, its name and its span file (where it left one; a file that cannot
// be used is a warning, and the process one row).
std::vector<detail::RecordedProcess> recorded_processes(const detail::SampleStore& store, const std::string& span_folder, const std::string& program,
                                                        pid_t launched, std::vector<std::string>& warnings) {
  std::set<std::uint32_t> pids;
  for (const detail::SampleRecord& s : store.samples()) pids.insert(s.pid);
  std::vector<detail::RecordedProcess> out;
  for (const std::uint32_t pid : pids) {
    detail::RecordedProcess p;
    p.pid = pid;
    p.launched = static_cast<pid_t>(pid) == launched;
    p.name = recorded_name(store, pid, program);
    const std::string path = detail::span_file_path(span_folder, static_cast<long>(pid));
    std::error_code ec;
    if (!span_folder.empty() && std::filesystem::exists(path, ec)) {
      auto spans = detail::read_span_file(path);
      if (!spans) {
        warnings.push_back(spans.error().message);
      } else if (spans->pid != static_cast<long>(pid)) {
        warnings.push_back(path + ": written by pid " + std::to_string(spans->pid) + ", not " + std::to_string(pid) + "; not used");
      } else {
        p.spans = std::move(*spans);
      }
    }
    out.push_back(std::move(p));
  }
  return out;
}

// Names addresses per process with a symbolizer of its recorded mappings and perf map, made the
// first time the process is asked for.
class RecordedSymbols {
 public:
  explicit RecordedSymbols(const detail::SampleStore& store) : store_(store) {}

  detail::FrameName name(std::uint32_t pid, std::uint64_t address) {
    auto it = symbolizers_.find(pid);
    if (it == symbolizers_.end())
      it = symbolizers_.emplace(pid, detail::symbolizer_for_exited_process(static_cast<int>(pid), detail::recorded_mappings(store_, pid))).first;
    return detail::frame_name_of(it->second.resolve(address));  // as hwprof profile --sample names them
  }

  void add_warnings(std::vector<std::string>& out) const {
    for (const auto& [pid, symbolizer] : symbolizers_) {
      for (const std::string& w : symbolizer.warnings()) {
        if (std::find(out.begin(), out.end(), w) == out.end()) out.push_back(w);
      }
    }
  }

 private:
  const detail::SampleStore& store_;
  std::map<std::uint32_t, detail::Symbolizer> symbolizers_;
};

struct Recording {
  pid_t pid = 0;  // the program's
  detail::SamplerStats stats;
  std::vector<std::string> warnings;
  detail::SampleStore store{0, 0};
};

SamplingProfile recorded_sampling(const RecordCommandOptions& options, const std::string& spec_text, Recording& recording,
                                  const std::string& span_folder) {
  SamplingProfile s;
  s.spec = spec_text;
  s.rate = recording.stats.rate;
  s.lost = recording.stats.lost;
  s.throttled = recording.stats.throttled;
  s.dropped = recording.stats.dropped;
  s.overhead = std::nan("");  // not measured: the program runs once, sampled throughout
  s.overhead_noise = std::nan("");
  s.warnings = recording.warnings;
  const auto processes = recorded_processes(recording.store, span_folder, options.command.front(), recording.pid, s.warnings);
  RecordedSymbols symbols(recording.store);
  detail::add_recorded_processes(
      recording.store, processes, [&](std::uint32_t pid, std::uint64_t address) { return symbols.name(pid, address); }, 5, s);
  symbols.add_warnings(s.warnings);
  if (const std::string hint = detail::anonymous_code_hint(s); !hint.empty()) s.warnings.push_back(hint);
  return s;
}

std::string record_header(const RecordCommandOptions& options, const ChildResult& child, const Recording& r, const SamplingProfile& s) {
  std::string out = fmt::format("\n hwprof record '{}': {} at {}, {} sample{} (measured) in {:.3f} s wall, {} thread{} sampled; exit code {}\n",
                                quote_command(options.command), s.spec, s.rate, s.samples, s.samples == 1 ? "" : "s", child.wall_seconds,
                                r.stats.threads_seen, r.stats.threads_seen == 1 ? "" : "s", child.exit_code);
  out += fmt::format(" lost {}, throttled {}, dropped {}, outside every region {}, ambiguous {}\n", s.lost, s.throttled, s.dropped, s.outside,
                     s.ambiguous);
  return out;
}

std::optional<Error> write_record_outputs(const std::string& dir, const RecordCommandOptions& options, const ChildResult& child,
                                          const SamplingProfile& s, std::vector<std::string>& written) {
  nlohmann::ordered_json j;
  j["command"] = options.command;
  j["exit_code"] = child.exit_code;
  j["wall_seconds"] = child.wall_seconds;
  j["sampling"] = detail::sampling_json(s);
  const std::vector<detail::SampledStack> stacks = detail::sampled_stacks(s);
  const std::string title = quote_command(options.command) + " (" + s.spec + ")";
  const std::pair<const char*, std::string> files[] = {
      {"sampling.json", j.dump(2) + "\n"},
      {"flamegraph.svg", detail::flamegraph_svg(title, s.frame_names, stacks, 1200.0, true)},
      {"samples.folded", detail::folded_stacks(s.frame_names, stacks)},
      {"samples.speedscope.json", detail::speedscope_json(title, s.frame_names, stacks)},
  };
  for (const auto& [name, text] : files) {
    const std::string path = (std::filesystem::path(dir) / name).string();
    if (auto error = write_file_atomically(path, text)) return error;
    written.push_back(path);
  }
  return std::nullopt;
}

}  // namespace

int run_record(const RecordCommandOptions& options) {
  const std::string spec_text = options.event.empty() ? std::string(detail::kDefaultSampleSpec) : options.event;
  // Refused before anything runs: the spec, then the output folder.
  auto spec = detail::parse_sample_spec(spec_text);
  if (!spec) {
    std::cerr << "hwprof: error: record: -e " << spec_text << ": " << spec.error().message << "\n";
    return kExitUsage;
  }
  if (!options.output.empty()) {
    if (auto error = check_record_folder(options.output)) return fail(*error);
  }
  const SpanFolder span_folder;
  if (span_folder.path().empty()) std::cerr << "hwprof: warning: no private folder for the program's region spans; its regions are not attributed\n";
  std::optional<detail::Sampler> sampler;
  pid_t launched = 0;
  const auto attach = [&](pid_t pid) -> std::optional<Error> {
    launched = pid;
    detail::SamplerOptions so;
    so.pid = pid;
    so.enable_on_exec = true;
    auto opened = detail::Sampler::open(*spec, so);
    if (!opened) return Error{"record: -e " + spec_text + ": " + opened.error().message + " (the program was not run)"};
    sampler.emplace(std::move(opened).value());
    sampler->start();
    return std::nullopt;
  };
  std::vector<std::string> environment;
  if (!span_folder.path().empty()) environment.push_back(std::string(detail::kRecordSpansVariable) + "=" + span_folder.path());
  auto child = run_child(options.command, attach, environment);
  if (!child) return fail(child.error());
  if (!child->exec_error.empty()) {
    std::cerr << "hwprof: error: " << child->exec_error << "\n";
    return 127;
  }
  Recording recording;
  recording.pid = launched;
  sampler->stop();
  recording.stats = sampler->stats();
  recording.warnings = sampler->warnings();
  recording.store = sampler->take_data();
  const SamplingProfile s = recorded_sampling(options, spec_text, recording, span_folder.path());
  Profile shown;
  shown.sampling = s;
  std::cerr << record_header(options, *child, recording, s) << detail::sampling_section(shown, options.top);
  if (!options.output.empty()) {
    std::vector<std::string> written;
    if (auto error = write_record_outputs(options.output, options, *child, s, written)) {
      fail(*error);
      return child->exit_code == 0 ? kExitError : child->exit_code;
    }
    for (const std::string& w : written) std::cerr << "wrote " << w << "\n";
  }
  return child->exit_code;
}

}  // namespace hwprof::cli
