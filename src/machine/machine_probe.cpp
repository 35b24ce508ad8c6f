// This machine as a report describes it, where its report is kept, and whether a report
// belongs to it.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <unistd.h>

#include "common/cpu_topology.hpp"
#include "common/stages.hpp"
#include "counters/system_info.hpp"
#include "hwprof/atomic_file.hpp"
#include "hwprof/cpu.hpp"
#include "hwprof/engine/machine.hpp"
#include "machine/cache_topology.hpp"
#include "machine/peak_inputs.hpp"

namespace hwprof {
namespace machine {
void describe_caches(MachineCpu& cpu, const std::vector<CacheReport>& reports) {
  cpu.caches = chosen_caches(reports);
  cpu.cache_sources.clear();
  for (const CacheReport& r : reports) cpu.cache_sources.push_back(r);
  cpu.cache_notes = compare_cache_reports(reports);
  for (const CacheReport& r : reports) cpu.cache_notes.insert(cpu.cache_notes.end(), r.notes.begin(), r.notes.end());
}

}  // namespace machine

MachineCpu describe_this_cpu() {
  const CpuIdentity id = detect_cpu();
  MachineCpu cpu;
  cpu.vendor = id.vendor;
  cpu.brand = id.brand;
  cpu.family = id.family;
  cpu.model = id.model;
  cpu.stepping = id.stepping;
  cpu.hypervisor = id.hypervisor;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("sse2")) cpu.flags.push_back("sse2");
  if (__builtin_cpu_supports("avx")) cpu.flags.push_back("avx");
  if (__builtin_cpu_supports("avx2")) cpu.flags.push_back("avx2");
  if (__builtin_cpu_supports("fma")) cpu.flags.push_back("fma");
  if (__builtin_cpu_supports("avx512f")) cpu.flags.push_back("avx512f");
  if (__builtin_cpu_supports("avx512bw")) cpu.flags.push_back("avx512bw");
  if (__builtin_cpu_supports("avx512vl")) cpu.flags.push_back("avx512vl");
  cpu.logical_cpus = common::online_logical_cpus();
  cpu.cores = static_cast<int>(common::cpus_one_per_core().size());
  machine::describe_caches(cpu, machine::cache_reports_of_this_machine());
  cpu.frequency_ghz = machine::nominal_ghz(&cpu.frequency_source);
  return cpu;
}

std::optional<std::string> foreign_cpu(const MachineCpu& report, const MachineCpu& here) {
  const auto describe = [](const MachineCpu& c) {
    return c.brand + " (" + c.vendor + " family " + std::to_string(c.family) + " model " + std::to_string(c.model) + ", " +
           std::to_string(c.logical_cpus) + " CPUs)";
  };
  if (report.vendor != here.vendor || report.family != here.family || report.model != here.model || report.brand != here.brand ||
      report.logical_cpus != here.logical_cpus || report.cores != here.cores) {
    return "it was calibrated on " + describe(report) + ", but this machine is " + describe(here);
  }
  return std::nullopt;
}

Error no_machine_store_error() {
  return Error{
      "no place for the machine store: XDG_DATA_HOME and HOME are unset and this user has no home directory; set one "
      "of them, or pass the report's file (--calibration FILE, calibrate -o FILE)"};
}

std::string machine_store_dir() {
  const char* xdg = std::getenv("XDG_DATA_HOME");
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/hwprof/machines";  // the XDG spec ignores relative values
  std::string home;
  if (const char* env = std::getenv("HOME"); env != nullptr && env[0] == '/') {
    home = env;
  } else {
    // No usable HOME (a service, `env -i`): the user's home from the password database,
    // copied out of the buffer getpwuid_r filled before that buffer goes out of scope.
    struct passwd entry {};
    struct passwd* found = nullptr;
    char buffer[4096];
    if (::getpwuid_r(::getuid(), &entry, buffer, sizeof buffer, &found) == 0 && found != nullptr && found->pw_dir != nullptr &&
        found->pw_dir[0] == '/') {
      home = found->pw_dir;
    }
    if (home.empty()) return {};
  }
  return home + "/.local/share/hwprof/machines";
}

std::string machine_store_path(const std::string& host, const MachineCpu& cpu) {
  const std::string dir = machine_store_dir();
  if (dir.empty()) return {};
  // Letters, digits, '.', '_' and '-' only, each run of anything else one '-'.
  const auto clean = [](const std::string& text) {
    std::string out;
    for (char c : text) {
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_') {
        out += c;
      } else if (!out.empty() && out.back() != '-') {
        out += '-';
      }
    }
    while (!out.empty() && out.back() == '-') out.pop_back();
    return out.empty() ? std::string("unknown") : out;
  };
  return dir + "/" + clean(host) + "--" + clean(cpu.brand) + "-f" + std::to_string(cpu.family) + "m" + std::to_string(cpu.model) + "-" +
         std::to_string(cpu.logical_cpus) + "cpu.json";
}

std::optional<Error> store_machine(const Machine& machine, bool allow_contended, std::string* path) {
  if (machine.contention.contended && !allow_contended) {
    return Error{
        "other processes disturbed this calibration, so its ceilings describe a busy machine: it was not stored. "
        "Calibrate again when the machine is quiet, or store it marked as contended"};
  }
  if (const std::vector<std::string> problems = implausible_fields(machine); !problems.empty()) {
    std::string all;
    for (const std::string& p : problems) all += "\n  - " + p;
    return Error{"the calibration is implausible, so it was not stored:" + all};
  }
  const std::string file = machine_store_path(machine.host, machine.cpu);
  if (file.empty()) return no_machine_store_error();
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(file).parent_path(), ec);
  if (ec) return Error{std::filesystem::path(file).parent_path().string() + ": cannot create the machine store (" + ec.message() + ")"};
  // What is stored must read back: a report the loader would refuse is not written.
  const std::string json = machine_to_json(machine);
  if (auto back = machine_from_json(json, file); !back) return Error{"the calibration was not stored: " + back.error().message};
  if (auto error = write_file_atomically(file, json)) return error;
  if (path != nullptr) *path = file;
  return std::nullopt;
}

Result<CalibrationLock> CalibrationLock::acquire(const std::function<void(const std::string&)>& waiting) {
  const std::string dir = machine_store_dir();
  if (dir.empty()) return no_machine_store_error();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::string path = dir + "/.calibrating.lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Error{path + ": cannot open the calibration lock (" + std::strerror(errno) + ")"};
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) {
      const int error = errno;
      ::close(fd);
      return Error{path + ": cannot lock (" + std::strerror(error) + ")"};
    }
    if (waiting) waiting("another calibration is running on this machine (" + path + " is locked): waiting for it to finish");
    int rc = 0;
    while ((rc = ::flock(fd, LOCK_EX)) != 0 && errno == EINTR) {
    }
    if (rc != 0) {
      const int error = errno;
      ::close(fd);
      return Error{path + ": cannot lock (" + std::strerror(error) + ")"};
    }
  }
  return CalibrationLock(fd);
}

CalibrationLock::CalibrationLock(CalibrationLock&& other) noexcept : fd_(other.fd_) {
  other.fd_ = -1;
}

CalibrationLock::~CalibrationLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the flock
}

std::string this_host_name() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return host;
}

Result<Machine> load_stored_machine() {
  return load_stored_machine(this_host_name(), describe_this_cpu());
}

Result<Machine> load_stored_machine(const std::string& host, const MachineCpu& here) {
  const std::string path = machine_store_path(host, here);
  if (path.empty()) return no_machine_store_error();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return Error{"no calibration is stored for this machine (" + path + "); run `hwprof calibrate`"};
  }
  auto machine = load_machine(path);
  if (!machine) return machine.error();
  if (auto why = foreign_cpu(machine->cpu, here)) {
    return Error{path + ": not used: " + *why + "; run `hwprof calibrate` on this machine"};
  }
  return machine;
}

}  // namespace hwprof
