// The sampler against a simulated kernel (the Syscalls seam): what it opens on which thread
// and CPU, which ring each event writes into, the reader left out, records written into the
// rings coming out after stop(), and every refusal with its reason (docs/sampling.md).
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <unistd.h>

#include "common/stages.hpp"
#include "perf_records.hpp"
#include "sampling/sample_spec.hpp"
#include "sampling/sampler.hpp"

namespace hwprof::sampling {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr std::uint64_t kSampleType = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
const std::size_t kPage = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));

class FakeKernel : public Syscalls {
 public:
  struct Event {
    perf_event_attr attr;
    pid_t pid;
    int cpu;
    int output = -1;  // PERF_EVENT_IOC_SET_OUTPUT's target
  };
  struct Mapping {
    std::vector<std::uint64_t> memory;
    std::size_t bytes = 0;
    bool unmapped = false;
  };

  std::vector<pid_t> thread_list = {100, 101, 102};
  bool with_real_threads = false;  // this process's threads too (the reader among them)
  bool threads_never_settle = false;
  std::vector<int> cpus = {0, 1};
  std::function<int(const perf_event_attr&, pid_t, int)> open_error = [](const perf_event_attr&, pid_t, int) { return 0; };
  std::function<int(std::size_t)> map_error = [](std::size_t) { return 0; };
  int set_output_error = 0;
  std::map<int, Event> events;
  std::vector<int> closed;
  std::vector<std::pair<int, unsigned long>> ioctls;
  std::map<int, std::unique_ptr<Mapping>> rings;  // by the fd mapped
  std::atomic<bool> reader_asleep{false};         // poll() does not return until stop()

  int perf_event_open(perf_event_attr& attr, pid_t pid, int cpu, int group_fd, unsigned long flags) noexcept override {
    EXPECT_TRUE(flags & PERF_FLAG_FD_CLOEXEC);
    EXPECT_EQ(group_fd, -1);
    if (const int e = open_error(attr, pid, cpu)) return -e;
    const int fd = next_fd_++;
    events[fd] = Event{attr, pid, cpu};
    return fd;
  }
  int ioctl(int fd, unsigned long request, unsigned long argument) noexcept override {
    ioctls.emplace_back(fd, request);
    if (request == PERF_EVENT_IOC_SET_OUTPUT) {
      if (set_output_error != 0) return -set_output_error;
      events.at(fd).output = static_cast<int>(argument);
    }
    return 0;
  }
  int close(int fd) noexcept override {
    closed.push_back(fd);
    return 0;
  }
  std::vector<pid_t> threads() noexcept override {
    std::vector<pid_t> list = thread_list;
    if (threads_never_settle) thread_list.push_back(thread_list.back() + 1);
    if (with_real_threads) {
      for (const pid_t t : Syscalls::threads()) list.push_back(t);
    }
    return list;
  }
  std::vector<int> online_cpus() noexcept override { return cpus; }
  std::string pmu_devices() const override { return "/nonexistent-sysfs"; }  // no PMU described
  void* map_ring(int fd, std::size_t bytes, int* error) noexcept override {
    if (const int e = map_error(bytes)) {
      *error = e;
      return nullptr;
    }
    auto m = std::make_unique<Mapping>();
    m->memory.assign(bytes / 8, 0);
    m->bytes = bytes;
    auto* page = reinterpret_cast<perf_event_mmap_page*>(m->memory.data());
    page->data_offset = kPage;
    page->data_size = bytes - kPage;
    void* address = m->memory.data();
    rings[fd] = std::move(m);
    return address;
  }
  void unmap_ring(void* ring, std::size_t bytes) noexcept override {
    for (auto& [fd, m] : rings) {
      if (m->memory.data() == ring) {
        EXPECT_EQ(m->bytes, bytes);
        m->unmapped = true;  // the memory stays, for the test to look at
      }
    }
  }
  int poll(pollfd* fds, std::size_t n, int) noexcept override {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    // A reader held asleep wakes only for its eventfd (stop()), the last of the fds.
    while (reader_asleep.load()) {
      std::uint64_t count = 0;
      if (n > 0 && ::read(fds[n - 1].fd, &count, sizeof count) == static_cast<ssize_t>(sizeof count)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return 0;
  }

  // Writes records into the ring `fd` owns the way the kernel does: the data, then data_head
  // with a release store.
  void publish(int fd, const std::vector<std::uint64_t>& words) {
    Mapping& m = *rings.at(fd);
    auto* page = reinterpret_cast<perf_event_mmap_page*>(m.memory.data());
    std::uint64_t* data = m.memory.data() + page->data_offset / 8;
    const std::uint64_t size = page->data_size;
    std::atomic_ref<decltype(page->data_head)> head(page->data_head);
    std::uint64_t at = head.load(std::memory_order_relaxed);
    for (const std::uint64_t w : words) {
      data[(at % size) / 8] = w;
      at += 8;
    }
    head.store(at, std::memory_order_release);
  }
  std::uint64_t tail_of(int fd) {
    auto* page = reinterpret_cast<perf_event_mmap_page*>(rings.at(fd)->memory.data());
    return std::atomic_ref<decltype(page->data_tail)>(page->data_tail).load(std::memory_order_acquire);
  }
  std::uint64_t head_of(int fd) {
    auto* page = reinterpret_cast<perf_event_mmap_page*>(rings.at(fd)->memory.data());
    return std::atomic_ref<decltype(page->data_head)>(page->data_head).load(std::memory_order_acquire);
  }

  std::vector<const Event*> open_events() const {
    std::vector<const Event*> out;
    for (const auto& [fd, e] : events) {
      if (std::find(closed.begin(), closed.end(), fd) == closed.end()) out.push_back(&e);
    }
    return out;
  }
  int fd_of(pid_t pid, int cpu) const {
    for (const auto& [fd, e] : events) {
      if (e.pid == pid && e.cpu == cpu && std::find(closed.begin(), closed.end(), fd) == closed.end()) return fd;
    }
    return -1;
  }
  int requests(unsigned long request) const {
    return static_cast<int>(std::count_if(ioctls.begin(), ioctls.end(), [&](const auto& i) { return i.second == request; }));
  }

 private:
  int next_fd_ = 10;
};

SampleSpec spec_of(const std::string& text) {
  auto r = parse_sample_spec(text, SamplingLimits{100000, 127}, "/nonexistent-sysfs");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : SampleSpec{};
}

Sampler opened(FakeKernel& kernel, const std::string& text = "cpu-clock", SamplerOptions options = {}) {
  auto r = Sampler::open(spec_of(text), options, kernel);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return std::move(r).value();
}

std::string refusal(FakeKernel& kernel, const std::string& text = "cpu-clock", SamplerOptions options = {}) {
  auto r = Sampler::open(spec_of(text), options, kernel);
  EXPECT_FALSE(r.ok());
  return r.ok() ? std::string() : r.error().message;
}

TEST(Sampler, OpensOneSamplingEventPerThreadAndCpu) {
  FakeKernel kernel;
  Sampler sampler = opened(kernel);
  const auto events = kernel.open_events();
  ASSERT_EQ(events.size(), 6u);  // 3 threads × 2 CPUs
  for (const auto* e : events) {
    EXPECT_EQ(e->attr.sample_type, kSampleType);
    EXPECT_EQ(e->attr.type, static_cast<std::uint32_t>(PERF_TYPE_SOFTWARE));
    EXPECT_EQ(e->attr.config, static_cast<std::uint64_t>(PERF_COUNT_SW_CPU_CLOCK));
    EXPECT_EQ(e->attr.freq, 1u);
    EXPECT_EQ(e->attr.sample_freq, 1000u);
    EXPECT_EQ(e->attr.inherit, 1u);
    EXPECT_EQ(e->attr.disabled, 1u);
    EXPECT_EQ(e->attr.use_clockid, 1u);
    EXPECT_EQ(e->attr.clockid, CLOCK_MONOTONIC);
    EXPECT_EQ(e->attr.sample_id_all, 1u);
    EXPECT_EQ(e->attr.mmap2, 1u);
    EXPECT_EQ(e->attr.comm, 1u);
    EXPECT_EQ(e->attr.task, 1u);
    EXPECT_EQ(e->attr.exclude_kernel, 0u);
    EXPECT_EQ(e->attr.exclude_hv, 1u);
    EXPECT_EQ(e->attr.enable_on_exec, 0u);
    EXPECT_EQ(e->attr.sample_max_stack, 127u);
    EXPECT_EQ(e->attr.watermark, 1u);
    EXPECT_GE(e->cpu, 0);  // an inherited event's ring can be mapped only on one CPU
  }
  const SamplerStats stats = sampler.stats();
  EXPECT_EQ(stats.threads_opened, 3u);
  EXPECT_EQ(stats.cpus, 2u);
  EXPECT_EQ(stats.ring_bytes, std::size_t{1} << 20);  // 1000 Hz × 1 KiB, a power of two
  EXPECT_TRUE(stats.kernel_frames);
  EXPECT_EQ(stats.rate, "1000 Hz");
}

TEST(Sampler, EachCpuHasOneRingThatItsOtherEventsWriteInto) {
  FakeKernel kernel;
  Sampler sampler = opened(kernel);
  ASSERT_EQ(kernel.rings.size(), 2u);
  for (const int cpu : {0, 1}) {
    const int owner = kernel.fd_of(100, cpu);
    ASSERT_TRUE(kernel.rings.count(owner)) << "CPU " << cpu;
    EXPECT_EQ(kernel.rings.at(owner)->bytes, kPage + (std::size_t{1} << 20));
    EXPECT_EQ(kernel.events.at(owner).output, -1);
    for (const pid_t t : {101, 102}) EXPECT_EQ(kernel.events.at(kernel.fd_of(t, cpu)).output, owner) << "thread " << t << ", CPU " << cpu;
  }
}

TEST(Sampler, TheReaderThreadIsNeverOpenedAndTheMainThreadOwnsTheRings) {
  FakeKernel kernel;
  kernel.with_real_threads = true;
  Sampler sampler = opened(kernel);
  ASSERT_NE(sampler.reader_tid(), 0);
  EXPECT_NE(sampler.reader_tid(), ::gettid());
  for (const auto* e : kernel.open_events()) EXPECT_NE(e->pid, sampler.reader_tid());
  EXPECT_NE(kernel.fd_of(::getpid(), 0), -1);
  EXPECT_TRUE(kernel.rings.count(kernel.fd_of(::getpid(), 0)));
}

TEST(Sampler, RecordsWrittenIntoTheRingsComeOutInTimeOrderAfterStop) {
  FakeKernel kernel;
  Sampler sampler = opened(kernel);
  sampler.start();
  EXPECT_EQ(kernel.requests(PERF_EVENT_IOC_ENABLE), 6);
  const int ring0 = kernel.fd_of(100, 0);
  const int ring1 = kernel.fd_of(100, 1);
  kernel.publish(ring0, test::sample_record(7, 100, 100, 0x10, {test::kKernelMarker, 0xffffffff81000000, test::kUserMarker, 0x10}));
  kernel.publish(ring1, test::sample_record(7, 101, 300, 0x30, {test::kUserMarker, 0x30}));
  kernel.publish(ring0, test::lost_record(4, 350));
  kernel.publish(ring0, test::throttle_record(true, 400));
  kernel.publish(ring0, test::sample_record(7, 100, 500, 0x50, {test::kUserMarker, 0x50, 0x60}));
  kernel.publish(ring1, test::mmap2_record(7, 0x7f0000000000, 0x1000, 0, "/usr/lib/libbar.so", 200));
  EXPECT_TRUE(sampler.data().samples().empty());  // not before stop()
  sampler.stop();
  EXPECT_EQ(kernel.requests(PERF_EVENT_IOC_DISABLE), 6);

  const SampleStore& data = sampler.data();
  ASSERT_EQ(data.samples().size(), 3u);
  EXPECT_EQ(data.samples()[0].time_ns, 100u);
  EXPECT_EQ(data.samples()[1].time_ns, 300u);
  EXPECT_EQ(data.samples()[2].time_ns, 500u);
  EXPECT_EQ(data.samples()[1].tid, 101u);
  const auto frames = data.frames(data.samples()[2]);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0], 0x50u);
  EXPECT_EQ(frames[1], 0x60u);
  ASSERT_EQ(data.mappings.size(), 1u);
  EXPECT_EQ(data.mappings[0].filename, "/usr/lib/libbar.so");

  const SamplerStats stats = sampler.stats();
  EXPECT_EQ(stats.samples, 3u);
  EXPECT_EQ(stats.lost, 4u);
  EXPECT_EQ(stats.throttled, 1u);
  EXPECT_EQ(stats.threads_seen, 2u);
  const auto warnings = sampler.warnings();
  EXPECT_THAT(warnings, Contains(HasSubstr("the kernel lost 4 samples")));
  EXPECT_THAT(warnings, Contains(HasSubstr("throttled sampling 1 times")));

  // The reader handed every byte back to the kernel, then everything was closed and unmapped.
  for (const int ring : {ring0, ring1}) {
    EXPECT_EQ(kernel.tail_of(ring), kernel.head_of(ring));
    EXPECT_TRUE(kernel.rings.at(ring)->unmapped);
  }
  EXPECT_TRUE(kernel.open_events().empty());
}

TEST(Sampler, NothingSampledIsSaidNotHidden) {
  FakeKernel kernel;
  Sampler sampler = opened(kernel);
  sampler.start();
  sampler.stop();
  EXPECT_EQ(sampler.stats().samples, 0u);
  EXPECT_THAT(sampler.warnings(), Contains(HasSubstr("no sample was taken")));
}

TEST(Sampler, KernelFramesAreLeftOutWhereTheKernelRefusesThemAndThatIsSaid) {
  FakeKernel kernel;
  kernel.open_error = [](const perf_event_attr& attr, pid_t, int) { return attr.exclude_kernel ? 0 : EACCES; };
  Sampler sampler = opened(kernel);
  ASSERT_EQ(kernel.open_events().size(), 6u);
  for (const auto* e : kernel.open_events()) {
    EXPECT_EQ(e->attr.exclude_kernel, 1u);
    EXPECT_EQ(e->attr.exclude_callchain_kernel, 1u);
  }
  EXPECT_FALSE(sampler.stats().kernel_frames);
  EXPECT_THAT(sampler.warnings(), Contains(AllOf(HasSubstr("kernel frames are left out"), HasSubstr("perf_event_paranoid"))));
}

TEST(Sampler, UserSpaceOnlyWhenAskedWithoutAFallbackNote) {
  FakeKernel kernel;
  Sampler sampler = opened(kernel, "cpu-clock:u@200");
  for (const auto* e : kernel.open_events()) {
    EXPECT_EQ(e->attr.exclude_kernel, 1u);
    EXPECT_EQ(e->attr.sample_freq, 200u);
  }
  EXPECT_THAT(sampler.warnings(), Not(Contains(HasSubstr("kernel frames"))));
}

TEST(Sampler, AFixedPeriodAndPreciseIpReachTheKernel) {
  FakeKernel kernel;
  Sampler sampler = opened(kernel, "cycles:pp@p200000");
  for (const auto* e : kernel.open_events()) {
    EXPECT_EQ(e->attr.type, static_cast<std::uint32_t>(PERF_TYPE_HARDWARE));
    EXPECT_EQ(e->attr.freq, 0u);
    EXPECT_EQ(e->attr.sample_period, 200000u);
    EXPECT_EQ(e->attr.precise_ip, 2u);
  }
}

TEST(Sampler, NoPermissionIsRefusedWithTheParanoidLevelAndTheFix) {
  FakeKernel kernel;
  kernel.open_error = [](const perf_event_attr&, pid_t, int) { return EACCES; };
  EXPECT_THAT(refusal(kernel), AllOf(HasSubstr("cannot sample 'cpu-clock'"), HasSubstr("kernel.perf_event_paranoid"), HasSubstr("CAP_PERFMON")));
  EXPECT_TRUE(kernel.open_events().empty());
}

TEST(Sampler, AHardwareEventWithoutAPmuIsRefusedSayingSo) {
  FakeKernel kernel;
  kernel.open_error = [](const perf_event_attr& attr, pid_t, int) { return attr.type == PERF_TYPE_HARDWARE ? ENOENT : 0; };
  EXPECT_THAT(refusal(kernel, "cycles@p100000"),
              AllOf(HasSubstr("cannot sample 'cycles@p100000'"), HasSubstr("no hardware PMU"), HasSubstr("cpu-clock")));
  EXPECT_TRUE(kernel.open_events().empty());
}

TEST(Sampler, AnEventThatCannotSampleIsRefusedWithTheReason) {
  FakeKernel kernel;
  kernel.open_error = [](const perf_event_attr&, pid_t, int) { return EOPNOTSUPP; };
  EXPECT_THAT(refusal(kernel, "page-faults@p10"), AllOf(HasSubstr("'page-faults@p10'"), HasSubstr("EOPNOTSUPP"), HasSubstr("count but not sample")));
}

TEST(Sampler, AThreadThatEndedWhileOpeningIsSkipped) {
  FakeKernel kernel;
  kernel.open_error = [](const perf_event_attr&, pid_t pid, int) { return pid == 101 ? ESRCH : 0; };
  Sampler sampler = opened(kernel);
  EXPECT_EQ(kernel.open_events().size(), 4u);
  EXPECT_EQ(sampler.stats().threads_opened, 2u);
}

TEST(Sampler, AFirstThreadThatEndedLeavesTheRingsToTheNext) {
  FakeKernel kernel;
  kernel.open_error = [](const perf_event_attr&, pid_t pid, int) { return pid == 100 ? ESRCH : 0; };
  Sampler sampler = opened(kernel);
  EXPECT_EQ(kernel.open_events().size(), 4u);
  for (const int cpu : {0, 1}) {
    EXPECT_TRUE(kernel.rings.count(kernel.fd_of(101, cpu))) << "CPU " << cpu;
    EXPECT_EQ(kernel.events.at(kernel.fd_of(102, cpu)).output, kernel.fd_of(101, cpu));
  }
}

TEST(Sampler, TooManyEventsForTheFileLimitSaysWhy) {
  FakeKernel kernel;
  kernel.open_error = [&kernel](const perf_event_attr&, pid_t, int) { return kernel.events.size() >= 4 ? EMFILE : 0; };
  EXPECT_THAT(refusal(kernel), AllOf(HasSubstr("3 threads × 2 CPUs"), HasSubstr("ulimit -n")));
  EXPECT_TRUE(kernel.open_events().empty());
}

TEST(Sampler, SmallerRingsWhereLockedMemoryIsShortAndThatIsSaid) {
  FakeKernel kernel;
  kernel.map_error = [](std::size_t bytes) { return bytes > kPage + (std::size_t{256} << 10) ? EPERM : 0; };
  Sampler sampler = opened(kernel);
  EXPECT_EQ(sampler.stats().ring_bytes, std::size_t{256} << 10);
  EXPECT_THAT(sampler.warnings(), Contains(AllOf(HasSubstr("256 KiB per CPU instead of 1024 KiB"), HasSubstr("perf_event_mlock_kb"))));
}

TEST(Sampler, NoRingAtAllIsRefusedWithTheLockedMemoryLimit) {
  FakeKernel kernel;
  kernel.map_error = [](std::size_t) { return EPERM; };
  EXPECT_THAT(refusal(kernel), AllOf(HasSubstr("could not be mapped"), HasSubstr("perf_event_mlock_kb")));
  EXPECT_TRUE(kernel.open_events().empty());
}

TEST(Sampler, EventsThatCannotShareARingAreRefused) {
  FakeKernel kernel;
  kernel.set_output_error = EINVAL;
  EXPECT_THAT(refusal(kernel), HasSubstr("could not share one ring buffer"));
  EXPECT_TRUE(kernel.open_events().empty());
  for (const auto& [fd, m] : kernel.rings) EXPECT_TRUE(m->unmapped);
}

TEST(Sampler, AnotherProcessIsEnabledAtItsExecWithItsMappingsAndNames) {
  FakeKernel kernel;
  SamplerOptions options;
  options.pid = 4242;
  options.enable_on_exec = true;
  Sampler sampler = opened(kernel, "cpu-clock", options);
  const auto events = kernel.open_events();
  ASSERT_EQ(events.size(), 2u);  // one per CPU
  for (const auto* e : events) {
    EXPECT_EQ(e->pid, 4242);
    EXPECT_EQ(e->attr.enable_on_exec, 1u);
    EXPECT_EQ(e->attr.mmap2, 1u);
    EXPECT_EQ(e->attr.comm_exec, 1u);
  }
  sampler.start();
  EXPECT_EQ(kernel.requests(PERF_EVENT_IOC_ENABLE), 0);  // the kernel enables them at exec
  sampler.stop();
  EXPECT_EQ(kernel.requests(PERF_EVENT_IOC_DISABLE), 2);
}

TEST(Sampler, AProcessThatIsGoneIsRefused) {
  FakeKernel kernel;
  kernel.open_error = [](const perf_event_attr&, pid_t, int) { return ESRCH; };
  SamplerOptions options;
  options.pid = 4242;
  EXPECT_THAT(refusal(kernel, "cpu-clock", options), AllOf(HasSubstr("in process 4242"), HasSubstr("ESRCH")));
}

TEST(Sampler, ThreadsThatKeepStartingWhileOpeningAreSaid) {
  FakeKernel kernel;
  kernel.threads_never_settle = true;
  Sampler sampler = opened(kernel);
  EXPECT_THAT(sampler.warnings(), Contains(HasSubstr("threads kept starting")));
}

TEST(Sampler, NoOnlineCpuIsRefused) {
  FakeKernel kernel;
  kernel.cpus.clear();
  EXPECT_THAT(refusal(kernel), HasSubstr("lists no CPU"));
}

// pause() drains the rings itself, so that the reader need not wake while a sampled pass runs
// (docs/sampling.md, "Cost"): here the reader sleeps throughout.
TEST(Sampler, PauseDisablesTheEventsAndDrainsTheRingsWithoutTheReader) {
  FakeKernel kernel;
  Sampler sampler = opened(kernel);
  kernel.reader_asleep = true;
  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the reader is in poll()
  sampler.start();
  const int ring0 = kernel.fd_of(100, 0);
  const int ring1 = kernel.fd_of(100, 1);
  kernel.publish(ring0, test::sample_record(7, 100, 100, 0x10, {test::kUserMarker, 0x10}));
  kernel.publish(ring1, test::sample_record(7, 101, 200, 0x20, {test::kUserMarker, 0x20}));
  sampler.pause();
  EXPECT_EQ(kernel.requests(PERF_EVENT_IOC_DISABLE), 6);
  for (const int ring : {ring0, ring1}) EXPECT_EQ(kernel.tail_of(ring), kernel.head_of(ring)) << "ring of fd " << ring << " not drained";
  sampler.resume();
  kernel.publish(ring0, test::sample_record(7, 100, 300, 0x30, {test::kUserMarker, 0x30}));
  sampler.stop();
  EXPECT_EQ(sampler.stats().samples, 3u);
  EXPECT_EQ(sampler.stats().lost, 0u);
}

TEST(Sampler, StopIsIdempotentAndAMovedSamplerKeepsWorking) {
  FakeKernel kernel;
  Sampler first = opened(kernel);
  Sampler sampler = std::move(first);
  sampler.start();
  kernel.publish(kernel.fd_of(100, 0), test::sample_record(7, 100, 100, 0x10, {test::kUserMarker, 0x10}));
  sampler.stop();
  sampler.stop();
  EXPECT_EQ(sampler.stats().samples, 1u);
  const SampleStore taken = sampler.take_data();
  EXPECT_EQ(taken.samples().size(), 1u);
}

}  // namespace
}  // namespace hwprof::sampling
