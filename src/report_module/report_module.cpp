// The report module (libhwprof-report.so): what a program that links only hwprof::regions
// loads at exit to turn its session into the same files as `hwprof profile -o DIR`, placed
// on this machine's stored calibration. Its one entry point is C, so that dlsym finds it.
#include <string.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include "analyze/merge.hpp"
#include "common/cpu_topology.hpp"
#include "common/printable.hpp"
#include "hwprof/engine/machine.hpp"
#include "hwprof/engine/profiler.hpp"
#include "hwprof/engine/report.hpp"
#include "hwprof/export.hpp"
#include "hwprof/version.hpp"
#include "machine/stored_ceilings.hpp"
#include "placement/layer_placement.hpp"
#include "placement/sampled_regions.hpp"
#include "report/outputs.hpp"
#include "session/report_writer.hpp"
#include "session/session_sampling.hpp"
#include "session/session_state.hpp"

namespace {

// The program's name: the base of argv[0] from /proc/self/cmdline (comm is cut at 15
// characters), else its comm; "regions" where neither can be read. A Python interpreter's is
// its script's ("train.py", however it was launched: `python3 -m hwprof.torch -o out train.py`)
// or module's.
std::string program_name() {
  std::vector<std::string> args;
  if (std::FILE* f = std::fopen("/proc/self/cmdline", "r")) {
    char buffer[4096] = {};
    const std::size_t n = std::fread(buffer, 1, sizeof buffer - 1, f);
    std::fclose(f);
    for (std::size_t i = 0; i < n;) {
      const std::size_t length = strnlen(buffer + i, n - i);
      args.emplace_back(buffer + i, length);
      i += length + 1;
    }
  }
  const auto base = [](const std::string& path) { return path.substr(path.find_last_of('/') + 1); };
  std::string name = args.empty() ? std::string() : base(args[0]);
  if (name.starts_with("python")) {
    for (std::size_t i = 1; i < args.size(); ++i) {
      if (args[i].ends_with(".py")) return base(args[i]);
      if (args[i] == "-m" && i + 1 < args.size() && !args[i + 1].starts_with("hwprof")) return args[i + 1];
    }
  }
  if (name.empty()) name = hwprof::session::name_of_thread(::getpid());  // the main thread's comm is the process's
  return name.empty() ? "regions" : name;
}

// The ceilings: HWPROF_CALIBRATION's file (checked to be this CPU's), else this machine's
// stored report; never a calibration at exit. The error says what is missing and how to make it.
hwprof::Result<hwprof::Ceilings> ceilings() {
  std::string file;
  if (const char* named = std::getenv("HWPROF_CALIBRATION"); named != nullptr && named[0] != '\0') file = named;
  auto found = hwprof::machine::find_stored_ceilings(file);
  if (!found && !file.empty()) return hwprof::Error{"HWPROF_CALIBRATION: " + found.error().message};
  return found;
}

// The version handshake: the data crosses as C++ objects, so both sides must be one hwprof.
bool same_version(const char* version, char* message, std::size_t message_size);

// Allocates nothing: it also says that memory ran out.
void say(char* message, std::size_t size, std::string_view text) {
  if (message == nullptr || size == 0) return;
  const std::size_t n = std::min(size - 1, text.size());
  std::memcpy(message, text.data(), n);
  message[n] = '\0';
}

}  // namespace

namespace {

// The regions' profile, with the sampling breakdown where `samples` is not null: both entry
// points'.
int write_regions_profile(const hwprof::SessionSnapshot* snapshot, const hwprof::session::SessionSamples* samples, const char* version,
                          const char* dir, char* message, std::size_t message_size) {
  try {
    if (snapshot == nullptr || dir == nullptr) {
      say(message, message_size, "the report module was called without a session or a folder");
      return 1;
    }
    if (!same_version(version, message, message_size)) return 1;
    hwprof::RegionProfileOptions options;
    options.program = program_name();
    std::string bad_threads;
    if (const char* threads = std::getenv("HWPROF_THREADS"); threads != nullptr && threads[0] != '\0') {
      if (const std::optional<int> n = hwprof::common::parse_thread_count(threads)) {
        options.threads = *n;
      } else {
        bad_threads = "HWPROF_THREADS=" + hwprof::common::printable_name(std::string_view(threads).substr(0, 32)) +
                      " is not a thread count (1 to 65536): placed against one thread per physical core";
      }
    }
    std::string no_machine;
    if (auto found = ceilings()) {
      options.machine = std::move(found->machine);
      options.machine_source = std::move(found->source);
    } else {
      no_machine = found.error().message;
    }
    hwprof::Profile profile = hwprof::profile_of(*snapshot, options);
    // (The count form of insert: GCC 12 at -O2 takes the moving one on an empty vector for a
    // null dereference, a false positive of -Wnull-dereference.)
    if (!no_machine.empty()) profile.hints.insert(profile.hints.begin(), 1, "no roofline: " + no_machine);
    if (!bad_threads.empty()) profile.warnings.push_back(bad_threads);
    if (samples != nullptr) profile.sampling = hwprof::placement::sampled_regions(*snapshot, *samples);
    std::vector<std::string> written;
    if (auto error = hwprof::write_profile_outputs(profile, dir, &written)) {
      say(message, message_size, error->message);
      return 1;
    }
    std::string list;
    for (const std::string& w : written) list += w + "\n";
    say(message, message_size, list);
    return 0;
  } catch (const std::bad_alloc&) {
    say(message, message_size, "not enough memory to write every report (each file is written whole or not at all)");
    return 1;
  } catch (const std::exception& e) {
    say(message, message_size, std::string("the report module failed: ") + e.what());
    return 1;
  }
}

}  // namespace

extern "C" HWPROF_API int hwprof_report_module_write(const hwprof::SessionSnapshot* snapshot, const char* version, const char* dir, char* message,
                                                     std::size_t message_size) {
  return write_regions_profile(snapshot, nullptr, version, dir, message, message_size);
}

extern "C" HWPROF_API int hwprof_report_module_write_sampled(const hwprof::SessionSnapshot* snapshot, const hwprof::session::SessionSamples* samples,
                                                             const char* version, const char* dir, char* message, std::size_t message_size) {
  if (samples == nullptr) {
    say(message, message_size, "the report module was called without samples");
    return 1;
  }
  return write_regions_profile(snapshot, samples, version, dir, message, message_size);
}

namespace {

bool same_version(const char* version, char* message, std::size_t message_size) {
  if (version != nullptr && std::strcmp(version, HWPROF_VERSION_STRING) == 0) return true;
  say(message, message_size,
      std::string("the report module is hwprof ") + HWPROF_VERSION_STRING + " and the program's hwprof library is " +
          (version != nullptr ? version : "?") + ": install both from the same hwprof, or set HWPROF_REPORT_MODULE");
  return false;
}

}  // namespace

extern "C" HWPROF_API int hwprof_report_module_write_merged(hwprof::session::MergedRanks* merged, const char* version, const char* dir, char* message,
                                                            std::size_t message_size) {
  try {
    if (merged == nullptr || dir == nullptr) {
      say(message, message_size, "the report module was called without merged ranks or a folder");
      return 1;
    }
    if (!same_version(version, message, message_size)) return 1;
    if (merged->ranks.empty()) {
      say(message, message_size, "no ranks to merge");
      return 1;
    }
    const std::string program = program_name();
    for (hwprof::session::MergedRankInfo& r : merged->ranks) {
      if (r.model.empty()) r.model = program;
    }
    // This rank's (rank 0's) calibration, for the ranks' thread count.
    if (auto found = ceilings()) {
      const int threads = hwprof::placement::resolve_threads(0);
      if (const hwprof::CalibrationRun* run = found->machine.run_for(threads)) {
        merged->ceilings =
            hwprof::analysis::merged_ceilings(*run, "rank " + std::to_string(merged->ranks.front().rank) + "'s calibration (" + found->source + ")");
      }
    } else {
      merged->warnings.push_back("no roofline: " + found.error().message);
    }
    hwprof::analysis::sort_merged_regions(*merged);
    hwprof::analysis::guard_merged_rates(*merged);
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) {
      say(message, message_size, std::string("cannot create the folder ") + dir + ": " + ec.message());
      return 1;
    }
    const std::string base = std::string(dir) + "/";
    std::string list;
    const hwprof::report::MergeSubject subject{*merged, 0};  // the file's table has every row
    for (const hwprof::report::Output<hwprof::report::MergeSubject>& output : hwprof::report::merge_outputs()) {
      const std::string path = base + std::string(output.file_name);
      if (auto error =
              hwprof::common::write_file_atomically_in_parts(path, [&](const hwprof::common::TextSink& sink) { output.render(subject, sink); })) {
        say(message, message_size, error->message);
        return 1;
      }
      list += path + "\n";
    }
    say(message, message_size, list);
    return 0;
  } catch (const std::bad_alloc&) {
    say(message, message_size, "not enough memory to write every report (each file is written whole or not at all)");
    return 1;
  } catch (const std::exception& e) {
    say(message, message_size, std::string("the report module failed: ") + e.what());
    return 1;
  }
}
