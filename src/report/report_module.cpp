// The report module (libhwprof-report.so): what a program that links only hwprof::regions
// loads at exit to turn its session into the same files as `hwprof profile -o DIR`, placed
// on this machine's stored calibration. Its one entry point is C, so that dlsym finds it.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "hwprof/export.hpp"
#include "hwprof/machine.hpp"
#include "hwprof/profiler.hpp"
#include "hwprof/report.hpp"
#include "hwprof/version.hpp"

namespace {

std::string program_name() {
  std::FILE* f = std::fopen("/proc/self/comm", "r");
  if (f == nullptr) return "regions";
  char name[64] = {};
  const bool read = std::fgets(name, sizeof name, f) != nullptr;
  std::fclose(f);
  std::string out = read ? name : "regions";
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out.empty() ? "regions" : out;
}

void say(char* message, std::size_t size, const std::string& text) {
  if (message == nullptr || size == 0) return;
  const std::size_t n = std::min(size - 1, text.size());
  std::memcpy(message, text.data(), n);
  message[n] = '\0';
}

}  // namespace

extern "C" HWPROF_API int hwprof_report_module_write(const hwprof::SessionSnapshot* snapshot, const char* version, const char* dir,
                                                     char* message, std::size_t message_size) {
  try {
    if (snapshot == nullptr || dir == nullptr) {
      say(message, message_size, "the report module was called without a session or a folder");
      return 1;
    }
    if (version == nullptr || std::strcmp(version, HWPROF_VERSION_STRING) != 0) {
      say(message, message_size,
          std::string("the report module is hwprof ") + HWPROF_VERSION_STRING + " and the program's hwprof regions library is " +
              (version != nullptr ? version : "?") + ": install both from the same hwprof, or set HWPROF_REPORT_MODULE");
      return 1;
    }
    hwprof::RegionProfileOptions options;
    options.program = program_name();
    if (const char* threads = std::getenv("HWPROF_THREADS"); threads != nullptr) options.threads = std::atoi(threads);
    std::string no_machine;
    if (auto machine = hwprof::load_stored_machine()) {
      options.machine_source = hwprof::machine_store_path(machine->host, machine->cpu);
      options.machine = std::move(*machine);
    } else {
      no_machine = machine.error().message;
    }
    hwprof::Profile profile = hwprof::profile_of(*snapshot, options);
    if (!no_machine.empty()) profile.hints.insert(profile.hints.begin(), "no roofline: " + no_machine);
    std::vector<std::string> written;
    if (auto error = hwprof::write_profile_outputs(profile, dir, &written)) {
      say(message, message_size, error->message);
      return 1;
    }
    const std::string table = std::string(dir) + "/profile.txt";
    if (auto error = hwprof::write_file_atomically(table, hwprof::profile_table(profile))) {
      say(message, message_size, error->message);
      return 1;
    }
    written.push_back(table);
    std::string list;
    for (const std::string& w : written) list += w + "\n";
    say(message, message_size, list);
    return 0;
  } catch (const std::exception& e) {
    say(message, message_size, std::string("the report module failed: ") + e.what());
    return 1;
  }
}
