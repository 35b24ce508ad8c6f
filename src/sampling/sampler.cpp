#include "sampling/sampler.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <ctime>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/cpu_topology.hpp"
#include "common/monotonic_clock.hpp"
#include "common/stages.hpp"
#include "counters/perf_event_backend.hpp"
#include "counters/system_info.hpp"

namespace hwprof::sampling {
namespace {

constexpr std::uint64_t kSampleType = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
// The reader drains every ring at least this often, whether or not the kernel woke it: a
// fallback for a ring whose owning event hung up (its thread ended), which then wakes nobody.
// Rings hold about a second of one CPU's samples (ring_size_for) and the kernel wakes the
// reader when one is a quarter full, so half a second loses nothing; a shorter timeout only
// wakes the reader in the middle of the program's work, on a CPU its threads want
// (docs/sampling.md, "Cost"). Between the profiler's passes, pause() drains the rings itself.
constexpr int kPollMs = 500;
// Open, list the threads again, and open anew while threads keep appearing.
constexpr int kOpenAttempts = 8;
// A ring holds about a second of one CPU's samples at the rate asked, at this size a sample
// (a deep callchain), within these bounds; all rings together stay under kMaxAllRings.
constexpr std::size_t kBytesPerSample = 1024;
constexpr std::size_t kMinRingBytes = std::size_t{512} << 10;
constexpr std::size_t kMaxRingBytes = std::size_t{8} << 20;
constexpr std::size_t kMaxAllRings = std::size_t{256} << 20;
// Where the kernel's locked-memory limit forces smaller rings, no smaller than this many pages.
constexpr std::size_t kSmallestRingPages = 8;

std::size_t round_up_pow2(std::size_t n) {
  std::size_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

std::string quoted(const std::string& s) {
  return "'" + s + "'";
}

std::string kib(std::size_t bytes) {
  return std::to_string(bytes >> 10) + " KiB";
}

}  // namespace

// One CPU's ring buffer: the mmap page, then `size` bytes of records.
struct SamplerRing {
  int cpu = -1;
  int fd = -1;  // the event whose buffer it is; the other events of this CPU write into it
  void* map = nullptr;
  std::size_t map_bytes = 0;
  perf_event_mmap_page* page = nullptr;
  const std::uint64_t* data = nullptr;
  std::uint64_t size = 0;
  std::uint64_t tail = 0;
};

enum class SamplerPhase { opening, running, abandoned };

struct SamplerState {
  SamplerState(Syscalls& s, SampleSpec sp, const SamplerOptions& o)
      : sys(s), spec(std::move(sp)), options(o), store(o.max_samples, o.max_frames), scratch(std::make_unique<RingScratch>()) {}
  ~SamplerState() {
    stop_reader();
    close_events();
    if (wake_fd >= 0) ::close(wake_fd);
  }
  SamplerState(const SamplerState&) = delete;
  SamplerState& operator=(const SamplerState&) = delete;

  std::optional<Error> start_reader();
  std::optional<Error> open_events();
  void run_reader();
  void stop_reader() noexcept;
  void close_events() noexcept;
  void read_rings() noexcept;
  // Copies every ring's new records into the store; the reader and pause() both call it.
  void drain_all() noexcept;

 private:
  perf_event_attr make_attr() const;
  std::vector<pid_t> target_threads() const;
  std::optional<Error> probe(const std::vector<pid_t>& threads, const std::vector<int>& cpus, perf_event_attr& attr);
  std::optional<Error> open_on(const std::vector<pid_t>& threads, const std::vector<int>& cpus, const perf_event_attr& attr);
  std::optional<Error> map_ring(SamplerRing& ring);
  std::string refusal(int error, const std::string& where) const;

 public:
  Syscalls& sys;
  SampleSpec spec;
  SamplerOptions options;
  std::vector<int> fds;  // every event, on every thread and CPU
  std::vector<SamplerRing> rings;
  std::vector<pollfd> poll_fds;  // the rings', then wake_fd
  std::size_t page_bytes = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  std::size_t ring_bytes = 0;
  int wake_fd = -1;
  std::thread reader;
  std::mutex mutex;
  std::mutex drain_mutex;            // one drain at a time: the reader's, or pause()'s on the caller's thread
  std::uint64_t reader_wakeups = 0;  // drains of the reader's own while sampling (under drain_mutex)
  std::condition_variable changed;
  SamplerPhase phase = SamplerPhase::opening;
  pid_t reader_tid = 0;
  std::atomic<bool> stopping{false};
  std::atomic<bool> sampling{false};  // between start() or resume() and pause() or stop()
  bool started = false;
  bool stopped = false;
  bool kernel_frames = false;
  std::size_t threads_opened = 0;
  std::size_t ring_count = 0;  // kept after stop() closes the rings
  std::uint64_t start_ns = 0;
  std::uint64_t stop_ns = 0;
  std::vector<std::string> notes;  // said at open: kernel frames left out, smaller rings, ...
  SampleStore store;
  std::unique_ptr<RingScratch> scratch;
};

namespace {

// Where the kernel's (and so the sampler's) ring buffers have to be: a ring per CPU, sized
// from the rate (docs/sampling.md, "The ring buffers").
std::size_t ring_size_for(const SampleSpec& spec, std::size_t cpus, std::size_t page) {
  std::uint64_t hz = kDefaultSampleHz;
  if (spec.frequency) {
    hz = spec.rate;
  } else if (spec.resolved.unit == "ns") {
    hz = std::max<std::uint64_t>(1, 1'000'000'000 / spec.rate);
  }
  std::size_t bytes = std::clamp<std::size_t>(round_up_pow2(static_cast<std::size_t>(std::min<std::uint64_t>(hz, 1u << 20)) * kBytesPerSample),
                                              kMinRingBytes, kMaxRingBytes);
  while (bytes > kMinRingBytes && bytes * cpus > kMaxAllRings) bytes /= 2;
  return std::max(bytes, page * kSmallestRingPages);
}

}  // namespace

perf_event_attr SamplerState::make_attr() const {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = spec.resolved.type;
  attr.config = spec.resolved.config;
  attr.config1 = spec.resolved.config1;
  attr.config2 = spec.resolved.config2;
  attr.sample_type = kSampleType;
  if (spec.frequency) {
    attr.freq = 1;
    attr.sample_freq = spec.rate;
  } else {
    attr.sample_period = spec.rate;
  }
  attr.precise_ip = spec.precise_ip;
  attr.disabled = 1;
  attr.inherit = 1;
  // Kernel frames unless :u was written; probe() falls back to user space where refused.
  const bool kernel = spec.levels_given ? !spec.resolved.exclude_kernel : true;
  attr.exclude_kernel = kernel ? 0 : 1;
  attr.exclude_callchain_kernel = attr.exclude_kernel;
  attr.exclude_hv = 1;
  // Sample times on the clock the session's timestamps convert to (docs/sampling.md, "Time").
  attr.use_clockid = 1;
  attr.clockid = CLOCK_MONOTONIC;
  attr.sample_id_all = 1;
  if (options.task_records) {
    attr.mmap = 1;
    attr.mmap2 = 1;
    attr.comm = 1;
    attr.comm_exec = 1;
    attr.task = 1;
  }
  attr.watermark = 1;
  attr.wakeup_watermark = static_cast<std::uint32_t>(std::min<std::size_t>(ring_bytes / 4, UINT32_MAX));
  attr.sample_max_stack = static_cast<std::uint16_t>(std::min<std::uint32_t>(spec.callchain_depth, UINT16_MAX));
  attr.enable_on_exec = (options.pid != 0 && options.enable_on_exec) ? 1 : 0;
  return attr;
}

// This process's threads but the reader, the main thread first (its events own the rings and
// it usually lives longest); or the other process.
std::vector<pid_t> SamplerState::target_threads() const {
  if (options.pid != 0) return {options.pid};
  std::vector<pid_t> threads = sys.threads();
  threads.erase(std::remove(threads.begin(), threads.end(), reader_tid), threads.end());
  const pid_t main = ::getpid();
  const auto it = std::find(threads.begin(), threads.end(), main);
  if (it != threads.end()) std::rotate(threads.begin(), it, it + 1);
  if (threads.empty()) threads.push_back(::gettid());
  return threads;
}

std::string SamplerState::refusal(int error, const std::string& where) const {
  const bool hardware = !spec.resolved.software;
  std::string reason = reason_from_errno(error, hardware, false);
  if (hardware && (error == ENOENT || error == EOPNOTSUPP) && !hardware_pmu_exposed(sys.pmu_devices())) {
    reason =
        "this machine exposes no hardware PMU (a virtual machine without PMU passthrough?), so hardware events cannot be "
        "sampled here; sample a software event instead: cpu-clock (the default) or task-clock";
  } else if (error == EOPNOTSUPP) {
    reason += "; an event whose PMU raises no overflow interrupt can count but not sample: sample cpu-clock instead";
  } else if (error == EINVAL && spec.precise_ip > 0) {
    reason += "; precise_ip " + std::to_string(spec.precise_ip) + " may be more than this PMU offers: try fewer p's";
  } else if (error == EMFILE || error == ENFILE) {
    reason += "; the sampler opens one event per thread and online CPU";
  } else if ((error == EACCES || error == EPERM) && options.pid != 0) {
    reason += "; sampling another process also needs the permission to ptrace it";
  }
  return "cannot sample " + quoted(spec.text) + where + ": " + reason;
}

std::optional<Error> SamplerState::start_reader() {
  wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd < 0) return Error{"the sampler could not create its reader's eventfd: " + std::string(std::strerror(errno)) + "; nothing is sampled"};
  try {
    reader = std::thread([this] { read_rings(); });
  } catch (const std::system_error& e) {
    return Error{"the sampler's reader thread could not start (" + std::string(e.what()) + "); nothing is sampled"};
  }
  std::unique_lock<std::mutex> lock(mutex);
  changed.wait(lock, [this] { return reader_tid != 0; });
  return std::nullopt;
}

// The event alone on the first thread (that has not ended) and CPU: refused with its reason,
// or opened with kernel frames left out where the kernel refuses them and the user did not
// ask for them.
std::optional<Error> SamplerState::probe(const std::vector<pid_t>& threads, const std::vector<int>& cpus, perf_event_attr& attr) {
  std::size_t t = 0;
  auto open_first = [&] {
    int fd = open_event(sys, attr, threads[t], cpus.front(), -1, PERF_FLAG_FD_CLOEXEC);
    // A main thread that called pthread_exit stays listed; the next thread will do.
    while (fd == -ESRCH && options.pid == 0 && t + 1 < threads.size())
      fd = open_event(sys, attr, threads[++t], cpus.front(), -1, PERF_FLAG_FD_CLOEXEC);
    return fd;
  };
  int fd = open_first();
  if ((fd == -EACCES || fd == -EPERM) && attr.exclude_kernel == 0 && !spec.levels_given) {
    attr.exclude_kernel = 1;
    attr.exclude_callchain_kernel = 1;
    fd = open_first();
    if (fd >= 0) {
      notes.push_back("kernel frames are left out (user space only): the kernel refused kernel-mode sampling (kernel.perf_event_paranoid is " +
                      read_first_line("/proc/sys/kernel/perf_event_paranoid") +
                      "), so time spent in system calls and page faults is not attributed. Fix: `sudo sysctl kernel.perf_event_paranoid=1` "
                      "or CAP_PERFMON (scripts/enable-counters.sh)");
    }
  }
  if (fd < 0) return Error{refusal(-fd, options.pid != 0 ? " in process " + std::to_string(options.pid) : "")};
  sys.close(fd);
  kernel_frames = attr.exclude_kernel == 0;
  return std::nullopt;
}

std::optional<Error> SamplerState::map_ring(SamplerRing& ring) {
  for (;;) {
    int error = 0;
    ring.map_bytes = page_bytes + ring_bytes;
    ring.map = sys.map_ring(ring.fd, ring.map_bytes, &error);
    if (ring.map != nullptr) break;
    if ((error == EPERM || error == ENOMEM) && ring_bytes > page_bytes * kSmallestRingPages) {
      ring_bytes /= 2;  // the locked-memory limit: try a smaller ring, and say so below
      continue;
    }
    return Error{"cannot sample " + quoted(spec.text) + ": the ring buffer of CPU " + std::to_string(ring.cpu) + " (" + kib(ring.map_bytes) +
                 ") could not be mapped: " + std::strerror(error) +
                 (error == EPERM
                      ? ". The locked-memory limit is kernel.perf_event_mlock_kb (" + read_first_line("/proc/sys/kernel/perf_event_mlock_kb") +
                            " KiB per CPU) plus `ulimit -l`; raise it with `sudo sysctl kernel.perf_event_mlock_kb=2048`"
                      : "")};
  }
  ring.page = static_cast<perf_event_mmap_page*>(ring.map);
  // data_offset and data_size are set by kernels since 4.1; before, the data follows the page.
  const std::uint64_t offset = ring.page->data_offset != 0 ? ring.page->data_offset : page_bytes;
  ring.size = ring.page->data_size != 0 ? ring.page->data_size : ring_bytes;
  ring.data = reinterpret_cast<const std::uint64_t*>(static_cast<const char*>(ring.map) + offset);
  ring.tail = std::atomic_ref<decltype(ring.page->data_tail)>(ring.page->data_tail).load(std::memory_order_relaxed);
  return std::nullopt;
}

// One event per thread and CPU; the first event of each CPU owns that CPU's ring, the others
// write into it (PERF_EVENT_IOC_SET_OUTPUT).
std::optional<Error> SamplerState::open_on(const std::vector<pid_t>& threads, const std::vector<int>& cpus, const perf_event_attr& attr) {
  std::vector<bool> opened(threads.size(), false);
  for (const int cpu : cpus) {
    SamplerRing ring;
    ring.cpu = cpu;
    for (std::size_t t = 0; t < threads.size(); ++t) {
      perf_event_attr a = attr;
      const int fd = open_event(sys, a, threads[t], cpu, -1, PERF_FLAG_FD_CLOEXEC);
      if (fd == -ESRCH && options.pid == 0) continue;  // the thread ended before we got to it
      if (fd < 0) {
        const std::string where =
            " on thread " + std::to_string(threads[t]) + ", CPU " + std::to_string(cpu) +
            (fd == -EMFILE || fd == -ENFILE ? " (" + std::to_string(threads.size()) + " threads × " + std::to_string(cpus.size()) + " CPUs)" : "");
        return Error{refusal(-fd, where)};
      }
      fds.push_back(fd);
      opened[t] = true;
      if (ring.fd < 0) {
        ring.fd = fd;
        rings.push_back(ring);
        if (auto failed = map_ring(rings.back())) {
          rings.pop_back();
          return failed;
        }
      } else if (const int error = sys.ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, static_cast<unsigned long>(ring.fd)); error != 0) {
        return Error{refusal(-error, " (its events on CPU " + std::to_string(cpu) + " could not share one ring buffer)")};
      }
    }
  }
  threads_opened = static_cast<std::size_t>(std::count(opened.begin(), opened.end(), true));
  return std::nullopt;
}

std::optional<Error> SamplerState::open_events() {
  const std::vector<int> cpus = sys.online_cpus();
  if (cpus.empty()) return Error{"cannot sample " + quoted(spec.text) + ": /sys/devices/system/cpu/online lists no CPU"};
  ring_bytes = options.ring_bytes != 0 ? round_up_pow2(std::max(options.ring_bytes, page_bytes)) : ring_size_for(spec, cpus.size(), page_bytes);
  const std::size_t asked_ring = ring_bytes;
  perf_event_attr attr = make_attr();
  if (auto refused = probe(target_threads(), cpus, attr)) return refused;
  bool stable = false;
  for (int attempt = 0; attempt < kOpenAttempts && !stable; ++attempt) {
    close_events();
    const std::vector<pid_t> threads = target_threads();
    if (auto failed = open_on(threads, cpus, attr)) return failed;
    // A thread started meanwhile by one not yet opened has no event: list them again, and
    // open anew while new ones appear (one started by an opened thread inherited its events,
    // but we cannot tell them apart).
    std::vector<pid_t> after = options.pid != 0 ? threads : target_threads();
    stable = std::all_of(after.begin(), after.end(), [&](pid_t t) { return std::find(threads.begin(), threads.end(), t) != threads.end(); });
  }
  if (!stable) {
    notes.push_back("threads kept starting while the sampler opened (" + std::to_string(kOpenAttempts) +
                    " attempts): a thread started during the last one may be missing from the samples");
  }
  if (ring_bytes < asked_ring) {
    notes.push_back("ring buffers are " + kib(ring_bytes) + " per CPU instead of " + kib(asked_ring) +
                    ": the kernel's locked-memory limit (kernel.perf_event_mlock_kb, `ulimit -l`) allowed no more, so samples are lost "
                    "sooner at high rates. Fix: `sudo sysctl kernel.perf_event_mlock_kb=2048`");
  }
  ring_count = rings.size();
  for (const SamplerRing& ring : rings) poll_fds.push_back({ring.fd, POLLIN, 0});
  poll_fds.push_back({wake_fd, POLLIN, 0});
  return std::nullopt;
}

void SamplerState::run_reader() {
  const std::lock_guard<std::mutex> lock(mutex);
  phase = SamplerPhase::running;
  changed.notify_all();
}

void SamplerState::drain_all() noexcept {
  const std::lock_guard<std::mutex> lock(drain_mutex);
  for (SamplerRing& ring : rings) {
    // The kernel's protocol (include/uapi/linux/perf_event.h, struct perf_event_mmap_page):
    // read data_head, then the records (acquire); write data_tail after reading them (release),
    // and only then may the kernel reuse their space.
    const std::uint64_t head = std::atomic_ref<decltype(ring.page->data_head)>(ring.page->data_head).load(std::memory_order_acquire);
    ring.tail = drain_ring(ring.data, ring.size, ring.tail, head, *scratch, store);
    std::atomic_ref<decltype(ring.page->data_tail)>(ring.page->data_tail).store(ring.tail, std::memory_order_release);
  }
}

// The reader thread: waits for the kernel's wake-up (a ring a quarter full) or kPollMs, and
// copies the records out; after stop_reader(), drains what is left.
void SamplerState::read_rings() noexcept {
  sigset_t all;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_BLOCK, &all, nullptr);  // the program's signals go to its own threads
  ::pthread_setname_np(::pthread_self(), "hwprof-sampler");
  {
    std::unique_lock<std::mutex> lock(mutex);
    reader_tid = ::gettid();
    changed.notify_all();
    changed.wait(lock, [this] { return phase != SamplerPhase::opening; });
    if (phase == SamplerPhase::abandoned) return;
  }
  while (!stopping.load(std::memory_order_acquire)) {
    const int ready = sys.poll(poll_fds.data(), poll_fds.size(), kPollMs);
    if (ready < 0) {
      timespec pause{0, kPollMs * 1'000'000L};
      ::nanosleep(&pause, nullptr);
    }
    for (std::size_t i = 0; i + 1 < poll_fds.size(); ++i) {
      // An event whose thread ended reports POLLHUP for good; the others of its CPU still write
      // into its ring, which is drained on the timeout from now on.
      if ((poll_fds[i].revents & (POLLHUP | POLLERR | POLLNVAL)) != 0) poll_fds[i].fd = -1;
    }
    if (sampling.load(std::memory_order_relaxed)) {
      const std::lock_guard<std::mutex> lock(drain_mutex);
      ++reader_wakeups;
    }
    drain_all();
  }
  drain_all();
}

void SamplerState::stop_reader() noexcept {
  if (!reader.joinable()) return;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (phase == SamplerPhase::opening) phase = SamplerPhase::abandoned;
    changed.notify_all();
  }
  stopping.store(true, std::memory_order_release);
  const std::uint64_t one = 1;
  if (wake_fd >= 0) (void)!::write(wake_fd, &one, sizeof one);
  try {
    reader.join();
  } catch (const std::system_error&) {
    // Not joinable after all (checked above): nothing to wait for.
  }
}

void SamplerState::close_events() noexcept {
  for (SamplerRing& ring : rings) sys.unmap_ring(ring.map, ring.map_bytes);
  rings.clear();
  for (auto it = fds.rbegin(); it != fds.rend(); ++it) sys.close(*it);
  fds.clear();
}

Result<Sampler> Sampler::open(const SampleSpec& spec, const SamplerOptions& options, Syscalls& sys) {
  try {
    auto state = std::make_unique<SamplerState>(sys, spec, options);
    if (auto failed = state->start_reader()) return *failed;
    if (auto failed = state->open_events()) return *failed;  // the state's destructor joins the reader
    state->run_reader();
    return Sampler(std::move(state));
  } catch (const std::exception& e) {
    return Error{"cannot sample " + quoted(spec.text) + ": " + e.what()};
  } catch (...) {
    return Error{"cannot sample " + quoted(spec.text) + ": an unknown error while opening"};
  }
}

Sampler::Sampler(std::unique_ptr<SamplerState> state) noexcept : state_(std::move(state)) {}
Sampler::Sampler(Sampler&&) noexcept = default;
Sampler& Sampler::operator=(Sampler&&) noexcept = default;
Sampler::~Sampler() {
  stop();
}

void Sampler::start() noexcept {
  if (!state_ || state_->started || state_->stopped) return;
  state_->start_ns = monotonic_ns();
  if (!(state_->options.pid != 0 && state_->options.enable_on_exec)) {
    for (const int fd : state_->fds) state_->sys.ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
  }
  state_->sampling.store(true, std::memory_order_relaxed);
  state_->started = true;
}

// The events disabled (the ioctl returns once no CPU writes into the rings), the rings are
// drained here, on the caller's thread, while nothing is sampled: the reader then sleeps through
// the next sampled pass (docs/sampling.md, "Cost").
void Sampler::pause() noexcept {
  if (!state_ || !state_->started || state_->stopped) return;
  for (const int fd : state_->fds) state_->sys.ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
  state_->sampling.store(false, std::memory_order_relaxed);
  state_->drain_all();
}

void Sampler::resume() noexcept {
  if (!state_ || !state_->started || state_->stopped) return;
  state_->sampling.store(true, std::memory_order_relaxed);
  for (const int fd : state_->fds) state_->sys.ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
}

void Sampler::stop() noexcept {
  if (!state_ || state_->stopped) return;
  for (const int fd : state_->fds) state_->sys.ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
  state_->sampling.store(false, std::memory_order_relaxed);
  state_->stop_ns = monotonic_ns();
  state_->stop_reader();
  state_->close_events();
  state_->store.sort_by_time();
  state_->stopped = true;
}

const SampleStore& Sampler::data() const noexcept {
  static const SampleStore kEmpty(0, 0);
  return state_ && state_->stopped ? state_->store : kEmpty;
}

SampleStore Sampler::take_data() noexcept {
  if (!state_ || !state_->stopped) return SampleStore(0, 0);
  return std::move(state_->store);
}

pid_t Sampler::reader_tid() const noexcept {
  return state_ ? state_->reader_tid : 0;
}

SamplerStats Sampler::stats() const {
  SamplerStats s;
  if (!state_) return s;
  const SamplerState& st = *state_;
  s.spec = st.spec.text;
  s.rate = describe_rate(st.spec);
  s.threads_opened = st.threads_opened;
  s.cpus = st.ring_count;
  s.ring_bytes = st.ring_bytes;
  s.kernel_frames = st.kernel_frames;
  s.callchain_depth = st.spec.callchain_depth;
  if (!st.stopped) return s;
  const SampleStore& data = st.store;
  s.samples = data.samples().size();
  s.lost = data.counts.lost;
  s.throttled = data.counts.throttled;
  s.dropped = data.dropped();
  s.malformed = data.counts.malformed;
  s.reader_wakeups = st.reader_wakeups;
  std::vector<std::uint32_t> tids;
  tids.reserve(data.samples().size());
  for (const SampleRecord& r : data.samples()) tids.push_back(r.tid);
  std::sort(tids.begin(), tids.end());
  s.threads_seen = static_cast<std::size_t>(std::unique(tids.begin(), tids.end()) - tids.begin());
  if (st.started && st.stop_ns > st.start_ns) {
    s.seconds = static_cast<double>(st.stop_ns - st.start_ns) / 1e9;
    s.samples_per_second = static_cast<double>(s.samples + s.lost + s.dropped) / s.seconds;
  }
  return s;
}

std::vector<std::string> Sampler::warnings() const {
  std::vector<std::string> out;
  if (!state_) return out;
  const SamplerState& st = *state_;
  out.insert(out.end(), st.spec.notes.begin(), st.spec.notes.end());
  out.insert(out.end(), st.notes.begin(), st.notes.end());
  if (!st.stopped) return out;
  const SamplerStats s = stats();
  if (s.lost > 0) {
    out.push_back("the kernel lost " + std::to_string(s.lost) + " samples (" + std::to_string(st.store.counts.lost_records) +
                  " times a ring buffer was full before the reader emptied it): the profile misses them. Fix: a lower rate, or bigger rings");
  }
  if (s.throttled > 0) {
    out.push_back("the kernel throttled sampling " + std::to_string(s.throttled) +
                  " times (too many sampling interrupts for kernel.perf_event_max_sample_rate, " +
                  read_first_line("/proc/sys/kernel/perf_event_max_sample_rate") +
                  " Hz now): samples are missing for those ticks. Fix: a lower rate");
  }
  if (s.dropped > 0) {
    out.push_back("hwprof dropped " + std::to_string(s.dropped) + " samples past its cap (" + std::to_string(st.options.max_samples) + " samples, " +
                  std::to_string(st.options.max_frames) +
                  " callchain frames): the profile misses the last of the run. Fix: a lower rate or a shorter run");
  }
  if (s.malformed > 0) out.push_back(std::to_string(s.malformed) + " records of the ring buffers were not understood and skipped");
  if (st.started && s.samples == 0 && s.lost == 0 && s.dropped == 0) {
    out.push_back("no sample was taken: the threads sampled did not run long enough on a CPU for one at " + s.rate);
  }
  return out;
}

}  // namespace hwprof::sampling
