#include "session/report_writer.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include <dlfcn.h>

#include "common/data_paths.hpp"
#include "common/stages.hpp"
#include "hwprof/atomic_file.hpp"
#include "hwprof/regions.hpp"
#include "hwprof/version.hpp"

namespace hwprof {
namespace session {
namespace {
namespace fs = std::filesystem;

std::string& module_hint() {
  static auto* hint = new std::string;
  return *hint;
}

// Where the module is looked for (docs/regions.md, "Where the report module is loaded from").
// Every candidate is code this process will run, so: the environment's path is read with
// secure_getenv (ignored in a set-user-ID or set-group-ID program), and no build-tree path is
// compiled in here. A program built in hwprof's build tree is told its module's path by its
// include flags (the hint), like a program built against the installed package.
// The folders the dynamic linker searches for this program's libraries, in its order (the
// program's RUNPATH, LD_LIBRARY_PATH outside secure mode, the system folders): the module is
// installed in hwprof/ under the folder that holds hwprof's libraries, so a program whose
// build gave it that folder as its run path (pkg-config's Libs) finds the module there even
// where it links the libraries statically.
std::vector<std::string> library_search_folders() {
  std::vector<std::string> out;
  void* self = ::dlopen(nullptr, RTLD_LAZY | RTLD_NOLOAD);
  if (self == nullptr) return out;
  Dl_serinfo size{};
  if (::dlinfo(self, RTLD_DI_SERINFOSIZE, &size) == 0 && size.dls_size >= sizeof(Dl_serinfo)) {
    std::vector<std::max_align_t> storage(size.dls_size / sizeof(std::max_align_t) + 1);
    auto* info = reinterpret_cast<Dl_serinfo*>(storage.data());
    *info = size;  // dls_size and dls_cnt, as RTLD_DI_SERINFO wants them
    if (::dlinfo(self, RTLD_DI_SERINFO, info) == 0) {
      for (unsigned i = 0; i < info->dls_cnt; ++i) {
        if (info->dls_serpath[i].dls_name != nullptr && *info->dls_serpath[i].dls_name == '/') out.emplace_back(info->dls_serpath[i].dls_name);
      }
    }
  }
  ::dlclose(self);
  return out;
}

std::vector<std::string> module_candidates() {
  std::vector<std::string> out;
  // The user's choice is the only one: a wrong path is said, not replaced by another module.
  if (const char* env = ::secure_getenv("HWPROF_REPORT_MODULE"); env != nullptr && *env != '\0') return {env};
  if (!module_hint().empty()) out.push_back(module_hint());
  if (const std::string self = this_binary_path(); !self.empty()) {
    const fs::path dir = fs::path(self).parent_path();
    out.push_back((dir / "hwprof" / kReportModuleFile).string());                                                 // <libdir>/hwprof/
    out.push_back((dir.parent_path() / HWPROF_INSTALL_LIBDIR_RELATIVE / "hwprof" / kReportModuleFile).string());  // bin/../<libdir>/hwprof/
  }
  for (const std::string& folder : library_search_folders()) {
    const std::string candidate = (fs::path(folder) / "hwprof" / kReportModuleFile).lexically_normal().string();
    if (std::find(out.begin(), out.end(), candidate) == out.end()) out.push_back(candidate);
  }
  out.push_back(std::string(HWPROF_INSTALL_FULL_LIBDIR) + "/hwprof/" + kReportModuleFile);
  return out;
}

std::string fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

}  // namespace

std::string report_module_hint() {
  return module_hint();
}

void set_report_module_hint(const char* path) noexcept {
  try {
    if (path != nullptr) module_hint() = path;
  } catch (...) {
  }
}

}  // namespace session

// Declared in the public face (include/hwprof/regions.hpp): the observers find their report
// entry points through it too.
namespace detail {
void* report_module_symbol(const char* symbol, std::string* tried) noexcept {
  using session::module_candidates;
  try {
    std::string looked;
    std::error_code ec;
    for (const std::string& candidate : module_candidates()) {
      if (!fs::exists(candidate, ec)) {
        looked += (looked.empty() ? "" : ", ") + candidate;
        continue;
      }
      void* handle = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle == nullptr) {
        const char* why = ::dlerror();
        looked += (looked.empty() ? "" : ", ") + candidate + " (" + (why != nullptr ? why : "dlopen failed") + ")";
        continue;
      }
      if (void* found = ::dlsym(handle, symbol)) return found;  // the module stays loaded: unloading at exit gains nothing
      looked += (looked.empty() ? "" : ", ") + candidate + " (no " + symbol + ")";
    }
    if (tried != nullptr) *tried = looked;
  } catch (...) {
  }
  return nullptr;
}
}  // namespace detail

namespace session {

std::string regions_text_table(const SessionSnapshot& s) {
  std::vector<const RegionReport*> rows;
  for (const RegionReport& r : s.regions) rows.push_back(&r);
  std::sort(rows.begin(), rows.end(), [](const RegionReport* a, const RegionReport* b) { return a->total_inclusive_ns > b->total_inclusive_ns; });
  std::string out = "hwprof regions (" + s.backend + ", clock " + s.clock_source + "); times are measured, inclusive of nested regions\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-32s %10s %12s %12s %12s %14s %14s\n", "Region", "Calls", "Median ms", "Total ms", "Excl. ms", "GFLOP/call",
                "MB/call");
  out += line;
  for (const RegionReport* r : rows) {
    std::snprintf(line, sizeof line, "%-32s %10llu %12s %12s %12s %14s %14s%s\n", r->name.substr(0, 32).c_str(),
                  static_cast<unsigned long long>(r->calls), fixed(r->inclusive_ns.median / 1e6, 4).c_str(),
                  fixed(r->total_inclusive_ns / 1e6, 3).c_str(), fixed(r->total_exclusive_ns / 1e6, 3).c_str(),
                  r->work_flops ? fixed(*r->work_flops / 1e9, 4).c_str() : "-", r->work_bytes ? fixed(*r->work_bytes / 1e6, 3).c_str() : "-",
                  r->open > 0 ? "  (open at exit)" : "");
    out += line;
  }
  return out;
}

}  // namespace session

namespace {

// The module's message: one file written per line.
void add_written(const std::string& text, std::vector<std::string>* written) {
  if (written == nullptr) return;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = text.find('\n', start);
    const std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!line.empty()) written->push_back(line);
    if (end == std::string::npos) break;
    start = end + 1;
  }
}

std::optional<Error> write_snapshot_report(const SessionSnapshot& snapshot, const session::SessionSamples* samples, const std::string& dir,
                                           std::vector<std::string>* written) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Error{"cannot create the folder " + dir + ": " + ec.message()};
  std::string tried;
  void* symbol = detail::report_module_symbol(samples != nullptr ? session::kReportModuleSampledEntry : session::kReportModuleEntry, &tried);
  if (symbol != nullptr) {
    std::vector<char> message(16384, '\0');
    const int rc = samples != nullptr ? reinterpret_cast<session::ReportModuleSampledEntry>(symbol)(&snapshot, samples, HWPROF_VERSION_STRING,
                                                                                                    dir.c_str(), message.data(), message.size())
                                      : reinterpret_cast<session::ReportModuleEntry>(symbol)(&snapshot, HWPROF_VERSION_STRING, dir.c_str(),
                                                                                             message.data(), message.size());
    const std::string text(message.data());
    if (rc != 0) return Error{text.empty() ? "the report module failed" : text};
    add_written(text, written);
    return std::nullopt;  // the module stays loaded: unloading at exit gains nothing
  }
  // No module: the regions as a plain table, and where the full reports would come from.
  const std::string path = (fs::path(dir) / "regions.txt").string();
  const std::string why = "the report module " + std::string(session::kReportModuleFile) +
                          " (profile.json, the roofline, report.html, trace.json) was not found; looked in " + tried +
                          ". Install hwprof's full package, or set HWPROF_REPORT_MODULE to the module's path";
  if (auto error = write_file_atomically(path, "Only this table: " + why + "\n\n" + session::regions_text_table(snapshot))) return error;
  if (written != nullptr) written->push_back(path);
  return Error{"wrote only " + path + ": " + why +
               (samples != nullptr ? ". The sampling breakdown (HWPROF_SAMPLE) needs the report module too: its samples were not written" : "")};
}

}  // namespace

// Memory may run out here (a program at its address-space limit, at exit): that is an error
// to report, never an exception through the program's exit. A file is written whole or not
// at all either way.
std::optional<Error> write_session_report(const Session& session, const std::string& dir, std::vector<std::string>* written) {
  return session::write_session_report_sampled(session, nullptr, dir, written);
}

namespace {

// `write`'s answer, or an error naming `dir` where memory ran out on the way.
template <class Write>
std::optional<Error> unless_out_of_memory(const std::string& dir, Write&& write) {
  try {
    return write();
  } catch (const std::bad_alloc&) {
    return Error{"not enough memory to write the reports into " + dir};
  }
}

}  // namespace

std::optional<Error> session::write_session_report_sampled(const Session& session, const SessionSamples* samples, const std::string& dir,
                                                           std::vector<std::string>* written) {
  return unless_out_of_memory(dir, [&] { return write_snapshot_report(session.snapshot(), samples, dir, written); });
}

std::optional<Error> session::write_snapshot_report_sampled(const SessionSnapshot& snapshot, const SessionSamples* samples, const std::string& dir,
                                                            std::vector<std::string>* written) {
  return unless_out_of_memory(dir, [&] { return write_snapshot_report(snapshot, samples, dir, written); });
}

}  // namespace hwprof

extern "C" HWPROF_API void hwprof_set_report_module(const char* path) {
  hwprof::session::set_report_module_hint(path);
}
