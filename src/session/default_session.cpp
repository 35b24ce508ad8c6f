// The process-wide session of <hwprof/regions.hpp> and <hwprof/regions.h>: opened on the
// first region from the environment, and its reports written at exit when HWPROF_OUTPUT asks
// (after PAPI's high-level API and Caliper's CALI_CONFIG).
#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cpu_topology.hpp"
#include "common/launch_rank.hpp"
#include "common/printable.hpp"
#include "common/stages.hpp"
#include "hwprof/regions.hpp"
#include "session/default_output.hpp"
#include "session/output_folder.hpp"
#include "session/report_writer.hpp"
#include "session/session_clock.hpp"
#include "session/session_sampling.hpp"
#include "session/session_state.hpp"
#include "session/span_file.hpp"

namespace hwprof {
namespace detail {
std::atomic<std::uintptr_t> default_state_word{0};  // include/hwprof/regions.hpp's default_state() reads it
}  // namespace detail

namespace session {

namespace {

std::mutex& open_mutex() {
  static auto* mutex = new std::mutex;
  return *mutex;
}
Session* default_session_object = nullptr;  // never destroyed: regions may run until the very end
OutputFolder output;                        // HWPROF_OUTPUT (with the rank folder under a launcher), claimed
std::string output_base;                    // the same before the claim: a forked child writes inside it
pid_t output_pid = 0;                       // the process that claimed `output`
SessionSampler* default_sampler = nullptr;  // HWPROF_SAMPLE's; never destroyed, like the session

// A variable's value as a line can show it: at most 32 characters, control characters escaped.
std::string shown(const std::string& value) {
  return printable_name(std::string_view(value).substr(0, 32));
}

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::string(value) : std::string();
}

// HWPROF_DISABLE: unset, empty, 0/false/no/off measure; 1/true/yes/on disable; anything else
// is said and disables (the user meant something by setting it).
bool disabled_by_environment(std::vector<std::string>& problems) {
  const std::string value = environment("HWPROF_DISABLE");
  if (value.empty() || value == "0" || value == "false" || value == "no" || value == "off") return false;
  if (value != "1" && value != "true" && value != "yes" && value != "on") {
    problems.push_back("HWPROF_DISABLE=" + shown(value) + ": expected 1/true/yes/on or 0/false/no/off; taken as set: regions are off");
  }
  return true;
}

bool write_reports(const std::string& dir, const SessionSnapshot& snapshot, const SessionSamples* samples) {
  std::vector<std::string> written;
  const auto error = write_snapshot_report_sampled(snapshot, samples, dir, &written);
  if (error) {
    std::fprintf(stderr, "hwprof: HWPROF_OUTPUT=%s: %s\n", dir.c_str(), error->message.c_str());
    return false;
  }
  std::string files;
  for (const std::string& f : written) files += (files.empty() ? "" : ", ") + f.substr(f.find_last_of('/') + 1);
  std::fprintf(stderr, "hwprof: wrote %s to %s\n", files.c_str(), dir.c_str());
  return true;
}

// The report writer's most time: past it, it is stopped and the program exits.
constexpr int kWriterSeconds = 120;
std::atomic<bool> forking_writer{false};  // the fork is the writer's: the child keeps the session
std::atomic<bool> output_written{false};  // HWPROF_OUTPUT's reports were written (or are being): not again at exit

// In the writer: an escaped exception (nlohmann's destructors allocate, and terminate when
// they cannot) is one line, not libstdc++'s "terminate called ...".
[[noreturn]] void writer_terminated() {
  static const char line[] = "hwprof: HWPROF_OUTPUT: writing the reports failed (out of memory?); nothing half-written was left\n";
  [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, line, sizeof line - 1);
  ::_exit(3);
}

bool write_here(const std::string& dir, const SessionSnapshot& snapshot, const SessionSamples* samples) noexcept {
  try {
    return write_reports(dir, snapshot, samples);
  } catch (const std::bad_alloc&) {
    std::fputs("hwprof: HWPROF_OUTPUT: out of memory while writing the reports; nothing more was written\n", stderr);
  } catch (...) {
    std::fputs("hwprof: HWPROF_OUTPUT: the reports could not be written\n", stderr);
  }
  return false;
}

// Files a writer that was stopped left half-written (write_file_atomically's temporaries).
void remove_temporaries(const std::string& dir) noexcept {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().filename().string().find(".tmp.") != std::string::npos) std::filesystem::remove(entry.path(), ec);
  }
}

// While the writer runs, SIGINT, SIGTERM and SIGHUP stop it instead of the program (a second
// Ctrl-C, a supervisor's SIGTERM): the signal is noted here, the writer stopped and the
// signal not delivered; the program then ends as it was ending. A signal the program ignores
// stays ignored. The dispositions are the program's again when this object ends.
volatile std::sig_atomic_t stopping_signal = 0;
void note_stopping_signal(int signal_number) {
  stopping_signal = signal_number;
}
class StoppingSignals {
 public:
  StoppingSignals() noexcept {
    stopping_signal = 0;
    struct sigaction noting {};
    noting.sa_handler = note_stopping_signal;  // no SA_RESTART: the wait's sleep ends at once
    sigemptyset(&noting.sa_mask);
    for (std::size_t i = 0; i < kSignals.size(); ++i) {
      installed_[i] = ::sigaction(kSignals[i], nullptr, &previous_[i]) == 0 && previous_[i].sa_handler != SIG_IGN &&
                      ::sigaction(kSignals[i], &noting, nullptr) == 0;
    }
  }
  ~StoppingSignals() {
    for (std::size_t i = 0; i < kSignals.size(); ++i) {
      if (installed_[i]) ::sigaction(kSignals[i], &previous_[i], nullptr);
    }
  }
  StoppingSignals(const StoppingSignals&) = delete;
  StoppingSignals& operator=(const StoppingSignals&) = delete;
  static int arrived() noexcept { return stopping_signal; }
  // In the writer: their default action (a terminal's Ctrl-C reaches it with its parent, and
  // a writer left behind by a parent killed with SIGKILL can still be stopped).
  void default_in_writer() const noexcept {
    for (std::size_t i = 0; i < kSignals.size(); ++i) {
      if (installed_[i]) ::signal(kSignals[i], SIG_DFL);
    }
  }

 private:
  static constexpr std::array<int, 3> kSignals{SIGINT, SIGTERM, SIGHUP};
  std::array<struct sigaction, 3> previous_{};
  std::array<bool, 3> installed_{};
};

const char* signal_name(int signal_number) noexcept {
  switch (signal_number) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "a signal";
  }
}

int stopped_by(const std::string& dir, int signal_number) noexcept {
  remove_temporaries(dir);
  std::fprintf(stderr,
               "hwprof: HWPROF_OUTPUT=%s: writing the reports was stopped by %s; the files written before it are whole, nothing "
               "half-written was left\n",
               dir.c_str(), signal_name(signal_number));
  return kStoppedBySignal + signal_number;
}

// Waits for the writer, at most kWriterSeconds, and stops it at once when a stopping signal
// arrives; says how it ended if it did not end well.
int wait_for_writer(pid_t writer, const std::string& dir) noexcept {
  int status = 0;
  for (int waited_ms = 0;; waited_ms += 10) {
    const pid_t done = ::waitpid(writer, &status, WNOHANG);
    if (done == writer) break;
    if (done < 0 && errno != EINTR) return kOutputWritten;  // reaped by the program's own SIGCHLD handling: it has ended
    const int signal_number = StoppingSignals::arrived();
    if (signal_number != 0 || waited_ms >= kWriterSeconds * 1000) {
      ::kill(writer, SIGKILL);
      while (::waitpid(writer, &status, 0) < 0 && errno == EINTR) {
      }
      if (signal_number != 0) return stopped_by(dir, signal_number);
      remove_temporaries(dir);
      std::fprintf(stderr, "hwprof: HWPROF_OUTPUT=%s: writing the reports took over %d s and was stopped\n", dir.c_str(), kWriterSeconds);
      return kOutputFailed;
    }
    ::usleep(10000);
  }
  // The same signal reached the writer too (a terminal's Ctrl-C goes to the process group).
  if (WIFSIGNALED(status) && WTERMSIG(status) == StoppingSignals::arrived()) return stopped_by(dir, WTERMSIG(status));
  if (WIFSIGNALED(status)) {
    std::fprintf(stderr, "hwprof: HWPROF_OUTPUT=%s: the report writer was killed by signal %d (out of memory?); nothing half-written was left\n",
                 dir.c_str(), WTERMSIG(status));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return kOutputWritten;
  remove_temporaries(dir);
  return kOutputFailed;
}

// The session at this moment, taken here, before the writer is forked: the snapshot takes the
// session's locks, which another thread of the program may hold at the moment of the fork (a
// region being entered, a label being made); in the writer, the lock would stay held by a
// thread that does not exist there. Null, said on stderr, when memory runs out.
std::unique_ptr<SessionSnapshot> snapshot_here(const std::string& dir) noexcept {
  try {
    return std::make_unique<SessionSnapshot>(default_session_object->snapshot());
  } catch (...) {
    std::fprintf(stderr, "hwprof: HWPROF_OUTPUT=%s: not enough memory to take the session's snapshot: the reports were not written\n", dir.c_str());
    return nullptr;
  }
}

// This process's reports, in its own folder (a forked child's inside its parent's), written
// by a child process of its own, so that whatever the writing does — runs out of memory,
// aborts inside a library, hangs — the program's exit status is its own and its exit waits
// at most kWriterSeconds. Where no child can be made, written here, each failure one line on
// stderr.
int write_output() noexcept {
  const bool forked_child = ::getpid() != output_pid;
  const std::string dir = forked_child ? own_folder_inside(output_base, ::getpid()) : output.dir;
  const StoppingSignals stopping;
  // The sampler stops first, so that the writer's work is not among the samples.
  const std::unique_ptr<SessionSamples> samples = default_sampler != nullptr ? default_sampler->stop() : nullptr;
  int result = kOutputFailed;
  if (const int signal_number = StoppingSignals::arrived(); signal_number != 0) {
    std::fprintf(stderr, "hwprof: HWPROF_OUTPUT=%s: the reports were not written: %s arrived before writing began\n", dir.c_str(),
                 signal_name(signal_number));
    result = kStoppedBySignal + signal_number;
  } else if (const std::unique_ptr<SessionSnapshot> snapshot = snapshot_here(dir)) {
    forking_writer.store(true);
    const pid_t writer = ::fork();
    forking_writer.store(false);
    if (writer == 0) {
      stopping.default_in_writer();
      std::set_terminate(writer_terminated);
      const bool written = write_here(dir, *snapshot, samples.get());
      std::fflush(stderr);
      ::_exit(written ? 0 : 1);  // not exit(): the program's own at-exit handlers are its, not the writer's
    }
    if (writer > 0) {
      result = wait_for_writer(writer, dir);
    } else {
      result = write_here(dir, *snapshot, samples.get()) ? kOutputWritten : kOutputFailed;
    }
  }
  if (!forked_child && output.owner) release_output_folder(output.dir);
  return result;
}

// At exit, unless the program wrote them before (write_default_output).
void write_at_exit() noexcept {
  if (default_session_object == nullptr || output.dir.empty() || output_written.exchange(true)) return;
  write_output();
}

std::atomic<std::size_t> wanted_call_paths{0};
std::atomic<std::size_t> wanted_step_timeline{0};

// A count from 1 to `most` in variable `name`, or `fallback` (and a problem said) when it is not.
std::size_t count_from_environment(const char* name, const char* what, std::size_t most, std::size_t fallback, std::vector<std::string>& problems) {
  const std::string text = environment(name);
  if (text.empty()) return fallback;
  char* end = nullptr;
  const long long n = std::strtoll(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0' || n < 1 || static_cast<unsigned long long>(n) > most) {
    problems.push_back(std::string(name) + "=" + shown(text) + " is not a number of " + what + " (1 to " + std::to_string(most) +
                       "): " + std::to_string(fallback) + " are kept");
    return fallback;
  }
  return static_cast<std::size_t>(n);
}

// What the environment says wrong besides the counters, each a line for stderr and the report.
void check_environment(std::vector<std::string>& problems, SessionOptions& options) {
  if (std::string clock = clock_override_problem(environment("HWPROF_CLOCK")); !clock.empty()) problems.push_back(std::move(clock));
  // Said here, when the program starts, on stderr only: the report module, which reads the
  // count, puts the same problem among the report's warnings.
  if (const std::string threads = environment("HWPROF_THREADS"); !threads.empty() && !parse_thread_count(threads)) {
    std::fprintf(stderr, "hwprof: HWPROF_THREADS=%s is not a thread count (1 to 65536): the report is placed against one thread per physical core\n",
                 shown(threads).c_str());
  }
  options.max_regions = count_from_environment("HWPROF_MAX_REGIONS", "region names", std::size_t{1} << 20, options.max_regions, problems);
  options.call_paths_per_thread = std::max(options.call_paths_per_thread, wanted_call_paths.load());
  options.call_paths_per_thread =
      count_from_environment("HWPROF_CALL_PATHS", "call paths per thread", std::size_t{1} << 20, options.call_paths_per_thread, problems);
}

// HWPROF_SAMPLE (docs/sampling.md, "Regions programs and PyTorch: HWPROF_SAMPLE"): whether
// to sample, and a timeline long enough to attribute the samples to (HWPROF_TIMELINE_EVENTS
// sets it, with or without sampling). Sampling writes only with the reports.
bool sampling_from_environment(const std::string& output_env, std::vector<std::string>& problems, SessionOptions& options) {
  const bool asked = std::getenv("HWPROF_SAMPLE") != nullptr;
  if (asked && output_env.empty()) {
    problems.push_back(
        "HWPROF_SAMPLE is set but HWPROF_OUTPUT is not: the samples are written with the reports; set HWPROF_OUTPUT=DIR "
        "(the program runs unsampled)");
  }
  const bool sampling = asked && !output_env.empty();
  // Under hwprof record the timeline is what its samples are attributed to, as with HWPROF_SAMPLE.
  const bool recorded = !environment(kRecordSpansVariable).empty();
  const std::size_t steps_timeline = wanted_step_timeline.load();
  const bool step_timeline = steps_timeline > 0 && !sampling && !recorded;
  options.timeline_events = count_from_environment("HWPROF_TIMELINE_EVENTS", "timeline calls", std::size_t{1} << 26,
                                                   sampling || recorded ? kSampledTimelineEvents
                                                   : step_timeline      ? steps_timeline
                                                                        : options.timeline_events,
                                                   problems);
  if (step_timeline) options.timeline_tail = options.timeline_events / 2;
  return sampling;
}

// Opens and starts HWPROF_SAMPLE's sampler on this process; a problem is one line.
void start_sampling(std::vector<std::string>& problems) {
  auto sampler = std::make_unique<SessionSampler>();
  if (std::string problem = sampler->start(environment("HWPROF_SAMPLE")); !problem.empty()) {
    problems.push_back(std::move(problem));
    return;
  }
  default_sampler = sampler.release();
}

BackendKind backend_from(const std::string& backend, bool asked_for_counters, std::vector<std::string>& problems) {
  if (backend.empty()) return asked_for_counters ? BackendKind::automatic : BackendKind::timer;
  if (backend == "auto") return BackendKind::automatic;
  if (backend == "perf") return BackendKind::perf;
  if (backend == "papi") return BackendKind::papi;
  if (backend == "timer") return BackendKind::timer;
  problems.push_back("HWPROF_BACKEND=" + shown(backend) + ": unknown backend; expected timer, perf, papi or auto (using auto)");
  return BackendKind::automatic;
}

// One folder per rank of a parallel launch (mpirun, srun, torchrun), claimed (output_folder.hpp):
// never two processes writing the same files.
void claim_output(const std::string& base, std::vector<std::string>& problems) {
  const LaunchRank rank = launch_rank();
  for (const std::string& p : rank.problems)
    problems.push_back(p + " (the launcher's rank variable; this process writes into its own pid- folder if another claimed the folder)");
  output_base = rank.known() ? base + "/" + rank_folder(rank.rank) : base;
  output = claim_output_folder(output_base);
  output_pid = ::getpid();
  if (!output.problem.empty()) problems.push_back("HWPROF_OUTPUT: " + output.problem + " (tried again at exit)");
  std::atexit(write_at_exit);
}

// Opens the default session as the environment says; a problem with a variable is said on
// stderr (the user set it) and the session falls back to measuring time only.
Session* open_from_environment(std::vector<std::string>& problems) {
  SessionOptions options;
  const std::string output_env = environment("HWPROF_OUTPUT");
  const std::string backend = environment("HWPROF_BACKEND");
  options.events = split_event_list(environment("HWPROF_EVENTS"));
  options.group = environment("HWPROF_GROUP");
  const bool asked_for_counters = !output_env.empty() || !options.events.empty() || !options.group.empty();
  options.backend = backend_from(backend, asked_for_counters, problems);
  check_environment(problems, options);
  const bool sampling = sampling_from_environment(output_env, problems, options);
  // Hints are kept for the report; on stderr only when the user asked for output.
  const bool speak = !output_env.empty() || !backend.empty() || asked_for_counters || !problems.empty();
  options.on_hint = [speak](const std::string& hint) {
    if (speak) std::fprintf(stderr, "hwprof: %s\n", hint.c_str());
  };
  auto opened = Session::open(options);
  if (!opened) {
    problems.push_back(opened.error().message + " (from HWPROF_EVENTS / HWPROF_GROUP / HWPROF_BACKEND); regions measure time only");
    SessionOptions fallback;
    fallback.backend = BackendKind::timer;
    fallback.max_regions = options.max_regions;
    fallback.call_paths_per_thread = options.call_paths_per_thread;
    fallback.timeline_events = options.timeline_events;
    fallback.on_hint = options.on_hint;
    opened = Session::open(fallback);
    if (!opened) return nullptr;
  }
  std::unique_ptr<Session> session = std::move(*opened);
  if (!output_env.empty()) claim_output(output_env, problems);
  if (sampling) start_sampling(problems);
  // Under `hwprof record`: the spans its samples are attributed to (docs/sampling.md).
  if (const std::string spans = environment(kRecordSpansVariable); !spans.empty()) write_span_file_at_exit(*session, spans);
  // Each problem once: the session's hint says it on stderr (speak is true when there are
  // problems) and keeps it for the report.
  for (const std::string& p : problems) session->state()->hint(p);
  return session.release();
}

// fork(): the child's copy of the default session is the parent's, and so are its counters.
// The prepare handler takes the session's locks so that no other thread holds them in the
// child's copy; the child starts its session afresh (Session::State::after_fork) and, at exit,
// writes into its own folder.
pid_t forking_thread = 0;
void before_fork() noexcept {
  open_mutex().lock();
  live_sessions_mutex().lock();
  if (Session::State* s = default_session_object != nullptr ? default_session_object->state() : nullptr) {
    s->registry_mutex.lock();
    s->hints_mutex.lock();
  }
  forking_thread = static_cast<pid_t>(::syscall(SYS_gettid));
}
void unlock_after_fork() noexcept {
  if (Session::State* s = default_session_object != nullptr ? default_session_object->state() : nullptr) {
    s->hints_mutex.unlock();
    s->registry_mutex.unlock();
  }
  live_sessions_mutex().unlock();
  open_mutex().unlock();
}
void in_parent_after_fork() noexcept {
  unlock_after_fork();
}
void in_child_after_fork() noexcept {
  if (default_session_object != nullptr && !forking_writer.load()) default_session_object->state()->after_fork(forking_thread, ::getppid());
  // The sampler's reader and window threads are the parent's: the child does not sample.
  if (default_sampler != nullptr) {
    default_sampler->abandon();
    default_sampler = nullptr;
  }
  unlock_after_fork();
}

}  // namespace

}  // namespace session

// What the public face's inline details (include/hwprof/regions.hpp) call, over this stage's
// state above.
namespace detail {
using namespace session;  // NOLINT(google-build-using-namespace): the state in the anonymous namespace above

void want_step_timeline(std::size_t events) noexcept {
  wanted_step_timeline.store(events);
}

void want_call_paths(std::size_t per_thread) noexcept {
  std::size_t seen = wanted_call_paths.load();
  while (per_thread > seen && !wanted_call_paths.compare_exchange_weak(seen, per_thread)) {
  }
}

Session::State* open_default_state() noexcept {
  try {
    const std::lock_guard<std::mutex> lock(open_mutex());
    const std::uintptr_t word = default_state_word.load(std::memory_order_acquire);
    if (word > 1) return reinterpret_cast<Session::State*>(word);  // NOLINT(performance-no-int-to-ptr)
    if (word == 1) return nullptr;
    std::vector<std::string> problems;
    if (disabled_by_environment(problems)) {
      for (const std::string& p : problems) std::fprintf(stderr, "hwprof: %s\n", p.c_str());
      default_state_word.store(1, std::memory_order_release);
      return nullptr;
    }
    default_session_object = open_from_environment(problems);
    if (default_session_object != nullptr) ::pthread_atfork(before_fork, in_parent_after_fork, in_child_after_fork);
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

namespace session {

int write_default_output() noexcept {
  // Not opened (no region entered yet) or disabled: nothing measured; the at-exit handler,
  // registered when the session opens, writes what comes later.
  if (detail::default_state_word.load(std::memory_order_acquire) <= 1) return kNothingToWrite;
  if (default_session_object == nullptr || output.dir.empty() || output_written.exchange(true)) return kNothingToWrite;
  return write_output();
}

}  // namespace session

Session& default_session() {
  detail::default_state();
  if (session::default_session_object == nullptr) {
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
  return *session::default_session_object;
}

bool regions_enabled() noexcept {
  return detail::default_state() != nullptr;
}

}  // namespace hwprof
