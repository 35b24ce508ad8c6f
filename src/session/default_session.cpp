// The process-wide session of <hwprof/regions.hpp> and <hwprof/regions.h>: opened on the
// first region from the environment, and its reports written at exit when HWPROF_OUTPUT asks
// (after PAPI's high-level API and Caliper's CALI_CONFIG).
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/launch_rank.hpp"
#include "hwprof/regions.hpp"
#include "session/report_writer.hpp"
#include "session/session_state.hpp"

namespace hwprof {
namespace detail {

std::atomic<std::uintptr_t> default_state_word{0};

namespace {

std::mutex& open_mutex() {
  static auto* mutex = new std::mutex;
  return *mutex;
}
Session* default_session_object = nullptr;  // never destroyed: regions may run until the very end
std::string output_dir;                     // HWPROF_OUTPUT, with the rank folder under MPI

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::string(value) : std::string();
}

bool truthy(const std::string& value) {
  return !value.empty() && value != "0" && value != "false" && value != "no" && value != "off";
}

// The rank of an MPI process (Open MPI, MPICH/PMI, PMIx, Slurm), or -1.
void write_at_exit() {
  if (default_session_object == nullptr || output_dir.empty()) return;
  std::vector<std::string> written;
  const auto error = write_session_report(*default_session_object, output_dir, &written);
  if (error) {
    std::fprintf(stderr, "hwprof: HWPROF_OUTPUT=%s: %s\n", output_dir.c_str(), error->message.c_str());
    return;
  }
  std::string files;
  for (const std::string& f : written) files += (files.empty() ? "" : ", ") + f.substr(f.find_last_of('/') + 1);
  std::fprintf(stderr, "hwprof: wrote %s to %s\n", files.c_str(), output_dir.c_str());
}

// Opens the default session as the environment says; a problem with a variable is said on
// stderr (the user set it) and the session falls back to measuring time only.
Session* open_from_environment() {
  SessionOptions options;
  const std::string output = environment("HWPROF_OUTPUT");
  const std::string backend = environment("HWPROF_BACKEND");
  options.events = split_event_list(environment("HWPROF_EVENTS"));
  options.group = environment("HWPROF_GROUP");
  std::vector<std::string> problems;
  const bool asked_for_counters = !output.empty() || !options.events.empty() || !options.group.empty();
  if (backend.empty()) {
    options.backend = asked_for_counters ? BackendKind::automatic : BackendKind::timer;
  } else if (backend == "auto") {
    options.backend = BackendKind::automatic;
  } else if (backend == "perf") {
    options.backend = BackendKind::perf;
  } else if (backend == "papi") {
    options.backend = BackendKind::papi;
  } else if (backend == "timer") {
    options.backend = BackendKind::timer;
  } else {
    problems.push_back("HWPROF_BACKEND=" + backend + ": unknown backend; expected timer, perf, papi or auto (using auto)");
    options.backend = BackendKind::automatic;
  }
  // Hints are kept for the report; on stderr only when the user asked for output.
  const bool speak = !output.empty() || !backend.empty() || asked_for_counters;
  options.on_hint = [speak](const std::string& hint) {
    if (speak) std::fprintf(stderr, "hwprof: %s\n", hint.c_str());
  };
  auto opened = Session::open(options);
  if (!opened) {
    problems.push_back(opened.error().message + " (from HWPROF_EVENTS / HWPROF_GROUP / HWPROF_BACKEND); regions measure time only");
    SessionOptions fallback;
    fallback.backend = BackendKind::timer;
    fallback.on_hint = options.on_hint;
    opened = Session::open(fallback);
    if (!opened) return nullptr;
  }
  std::unique_ptr<Session> session = std::move(*opened);
  for (const std::string& p : problems) {
    std::fprintf(stderr, "hwprof: %s\n", p.c_str());
    session->state()->hints.push_back(p);
  }
  if (!output.empty()) {
    // One folder per rank of a parallel launch (mpirun, srun, torchrun): never all ranks
    // writing the same files.
    const LaunchRank rank = launch_rank();
    output_dir = rank.known() ? output + "/" + rank_folder(rank.rank) : output;
    std::atexit(write_at_exit);
  }
  return session.release();
}

}  // namespace

Session::State* open_default_state() noexcept {
  try {
    const std::lock_guard<std::mutex> lock(open_mutex());
    const std::uintptr_t word = default_state_word.load(std::memory_order_acquire);
    if (word > 1) return reinterpret_cast<Session::State*>(word);  // NOLINT(performance-no-int-to-ptr)
    if (word == 1) return nullptr;
    if (truthy(environment("HWPROF_DISABLE"))) {
      default_state_word.store(1, std::memory_order_release);
      return nullptr;
    }
    default_session_object = open_from_environment();
    if (default_session_object == nullptr) {
      default_state_word.store(1, std::memory_order_release);
      return nullptr;
    }
    Session::State* state = default_session_object->state();
    default_state_word.store(reinterpret_cast<std::uintptr_t>(state), std::memory_order_release);
    return state;
  } catch (...) {
    return nullptr;  // out of memory while opening: regions are not measured
  }
}

}  // namespace detail

Session& default_session() {
  detail::default_state();
  if (detail::default_session_object == nullptr) {
    // Disabled: a session that measures nothing (its regions still work as calls).
    static Session* idle = [] {
      SessionOptions o;
      o.backend = BackendKind::timer;
      o.overhead_pairs = 0;
      o.max_threads = 1;
      o.max_regions = 1;
      o.timeline_events = 0;
      o.call_paths_per_thread = 0;
      o.on_hint = [](const std::string&) {};
      auto s = Session::open(o);
      return s ? s->release() : nullptr;
    }();
    return *idle;
  }
  return *detail::default_session_object;
}

bool regions_enabled() noexcept {
  return detail::default_state() != nullptr;
}

}  // namespace hwprof
