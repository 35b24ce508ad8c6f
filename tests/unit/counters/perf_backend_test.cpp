// The perf_event backend against a simulated kernel (the Syscalls seam): every failure the
// real one can return, group splitting, id mapping, threads that come and go.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <linux/perf_event.h>

#include "common/stages.hpp"
#include "counters/perf_event_backend.hpp"
#include "counters/syscalls.hpp"

namespace hwprof::counters {
namespace {

using ::testing::HasSubstr;

// A kernel in miniature: every opened event counts `base(type, config) + 1000·thread index`;
// groups read back with their members in reverse order, so only ids can map them.
class FakeKernel : public Syscalls {
 public:
  struct Event {
    perf_event_attr attr;
    pid_t pid;
    int cpu;
    int leader;  // fd of the group leader (itself for a leader)
    std::uint64_t id;
  };

  std::vector<pid_t> thread_list = {100};
  std::vector<pid_t> threads_after_first_call;  // threads() returns these from the second call on
  std::function<int(const perf_event_attr&, pid_t, int group_fd)> open_error = [](const perf_event_attr&, pid_t, int) { return 0; };
  int max_group_size = 64;
  int eintr_reads = 0;  // the next reads fail with EINTR this many times
  bool short_reads = false;
  double running_share = 1.0;
  std::map<int, Event> events;
  std::vector<int> closed;
  std::vector<std::pair<int, unsigned long>> ioctls;
  int thread_calls = 0;

  int perf_event_open(perf_event_attr& attr, pid_t pid, int cpu, int group_fd, unsigned long flags) noexcept override {
    EXPECT_TRUE(flags & PERF_FLAG_FD_CLOEXEC);
    if (int e = open_error(attr, pid, group_fd)) return -e;
    if (group_fd >= 0) {
      const auto members = std::count_if(events.begin(), events.end(), [&](const auto& kv) { return kv.second.leader == group_fd; });
      if (members >= max_group_size) return -EINVAL;  // the PMU cannot schedule a bigger group
    }
    const int fd = next_fd_++;
    events[fd] = Event{attr, pid, cpu, group_fd >= 0 ? group_fd : fd, static_cast<std::uint64_t>(fd) * 7 + 3};
    return fd;
  }

  int read_calls = 0;

  long read(int fd, void* buffer, std::size_t size) noexcept override {
    ++read_calls;
    if (eintr_reads > 0) {
      --eintr_reads;
      return -EINTR;
    }
    std::vector<const Event*> members;
    for (const auto& [other, e] : events) {
      if (e.leader == fd && std::find(closed.begin(), closed.end(), other) == closed.end()) members.push_back(&e);
    }
    std::reverse(members.begin(), members.end());
    const int reads_so_far = reads_[fd];
    const std::uint64_t enabled = 1000 * static_cast<std::uint64_t>(reads_so_far + 1);
    std::vector<std::uint64_t> words = {members.size(), enabled, static_cast<std::uint64_t>(static_cast<double>(enabled) * running_share)};
    for (const Event* e : members) {
      words.push_back(value_of(*e, reads_so_far));
      words.push_back(e->id);
    }
    std::size_t bytes = std::min(size, words.size() * sizeof(std::uint64_t));
    if (short_reads) bytes -= 8;
    std::memcpy(buffer, words.data(), bytes);
    ++reads_[fd];
    return static_cast<long>(bytes);
  }

  int ioctl(int fd, unsigned long request, unsigned long argument) noexcept override {
    ioctls.emplace_back(fd, request);
    if (request == PERF_EVENT_IOC_ID) *reinterpret_cast<std::uint64_t*>(argument) = events.at(fd).id;
    return 0;
  }

  int close(int fd) noexcept override {
    closed.push_back(fd);
    return 0;
  }

  bool threads_never_settle = false;  // every listing shows one more thread
  std::string devices = "/sys/bus/event_source/devices";
  std::string pmu_devices() const override { return devices; }

  std::vector<pid_t> threads() noexcept override {
    if (threads_never_settle) {
      thread_list.push_back(static_cast<pid_t>(200 + thread_calls++));
      return thread_list;
    }
    return thread_calls++ > 0 && !threads_after_first_call.empty() ? threads_after_first_call : thread_list;
  }

  // Counts grow with every read of the group, like real counters.
  std::uint64_t value_of(const Event& e, int reads_so_far) const {
    const std::size_t thread_index = static_cast<std::size_t>(std::find(thread_list.begin(), thread_list.end(), e.pid) - thread_list.begin());
    return (e.attr.type * 100 + e.attr.config + 1) * static_cast<std::uint64_t>(reads_so_far + 1) + 1000 * thread_index;
  }

  std::vector<int> open_fds() const {
    std::vector<int> open;
    for (const auto& [fd, e] : events) {
      if (std::find(closed.begin(), closed.end(), fd) == closed.end()) open.push_back(fd);
    }
    return open;
  }
  std::vector<const Event*> leaders() const {
    std::vector<const Event*> out;
    for (const auto& [fd, e] : events) {
      if (e.leader == fd && std::find(closed.begin(), closed.end(), fd) == closed.end()) out.push_back(&e);
    }
    return out;
  }

 private:
  int next_fd_ = 10;
  std::map<int, int> reads_;  // per group leader
};

std::unique_ptr<CounterSet> open_with(FakeKernel& kernel, std::vector<std::string> names, pid_t pid = 0, bool on_exec = false) {
  CounterOptions options;
  options.events = std::move(names);
  options.pid = pid;
  options.enable_on_exec = on_exec;
  return open_perf_events(options, kernel);
}

std::vector<CounterReading> interval(CounterSet& set) {
  CounterSnapshot a;
  CounterSnapshot b;
  set.read(a);
  set.read(b);
  return readings_between(set, a, b);
}

TEST(PerfBackend, SoftwareEventsOpenAsOneGroupOnEveryThread) {
  FakeKernel kernel;
  kernel.thread_list = {100, 101, 102};
  auto set = open_with(kernel, {"task-clock", "page-faults"});
  ASSERT_EQ(set->events().size(), 2u);
  for (const EventInfo& e : set->events()) EXPECT_EQ(e.status, CounterStatus::ok) << e.name << ": " << e.reason;
  const auto leaders = kernel.leaders();
  ASSERT_EQ(leaders.size(), 3u);  // one group per thread
  std::vector<pid_t> pids;
  for (const auto* l : leaders) {
    pids.push_back(l->pid);
    EXPECT_EQ(l->attr.disabled, 1u);
    EXPECT_EQ(l->attr.inherit, 1u);  // threads they start later count too
    EXPECT_EQ(l->attr.read_format, PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING);
  }
  EXPECT_THAT(pids, ::testing::UnorderedElementsAre(100, 101, 102));
  for (const auto& [fd, e] : kernel.events) {
    if (e.leader != fd) {
      EXPECT_EQ(e.attr.disabled, 0u) << "siblings follow their leader";
    }
  }
  set->start();
  EXPECT_EQ(std::count_if(kernel.ioctls.begin(), kernel.ioctls.end(), [](const auto& c) { return c.second == PERF_EVENT_IOC_ENABLE; }), 3);

  const auto r = interval(*set);
  // Each read adds (type·100 + config + 1) per thread: task-clock (1,1) → 102, page-faults (1,2) → 103.
  EXPECT_EQ(r[0].status, CounterStatus::ok);
  EXPECT_DOUBLE_EQ(r[0].value, 3 * 102.0);
  EXPECT_DOUBLE_EQ(r[1].value, 3 * 103.0);
}

TEST(PerfBackend, ClosesEveryDescriptorItOpened) {
  FakeKernel kernel;
  kernel.thread_list = {100, 101};
  { auto set = open_with(kernel, {"task-clock", "page-faults", "context-switches"}); }
  EXPECT_TRUE(kernel.open_fds().empty());
}

struct ErrnoCase {
  int error;
  CounterStatus status;
  const char* reason;
};

class PerfBackendErrno : public ::testing::TestWithParam<ErrnoCase> {};

TEST_P(PerfBackendErrno, HardwareFailureIsReportedWithStatusAndReasonWhileSoftwareStillCounts) {
  FakeKernel kernel;
  const ErrnoCase c = GetParam();
  kernel.open_error = [&](const perf_event_attr& attr, pid_t, int) { return attr.type == PERF_TYPE_HARDWARE ? c.error : 0; };
  auto set = open_with(kernel, {"cycles", "task-clock"});
  ASSERT_EQ(set->events().size(), 2u);
  EXPECT_EQ(set->events()[0].status, c.status);
  EXPECT_THAT(set->events()[0].reason, HasSubstr(c.reason));
  EXPECT_EQ(set->events()[1].status, CounterStatus::ok);
  const auto r = interval(*set);
  EXPECT_FALSE(r[0].has_value()) << "an unavailable counter must never read as 0";
  EXPECT_EQ(r[0].status, c.status);
  EXPECT_TRUE(r[1].has_value());
  EXPECT_TRUE(kernel.open_fds().size() == 1u);
}

INSTANTIATE_TEST_SUITE_P(
    Injected, PerfBackendErrno,
    ::testing::Values(ErrnoCase{EACCES, CounterStatus::no_permission, "perf_event_paranoid"},
                      ErrnoCase{EPERM, CounterStatus::no_permission, "CAP_PERFMON"}, ErrnoCase{EOPNOTSUPP, CounterStatus::unsupported, "PMU"},
                      ErrnoCase{EINVAL, CounterStatus::unsupported, "EINVAL"}, ErrnoCase{ENOENT, CounterStatus::unsupported, "PMU"},
                      ErrnoCase{EMFILE, CounterStatus::not_counted, "ulimit -n"}, ErrnoCase{EBUSY, CounterStatus::not_counted, "in use"}),
    [](const auto& param_info) {
      return std::string(std::strerror(param_info.param.error)).substr(0, 6) == "Permis" ? std::to_string(param_info.index) + "_permission"
                                                                                         : "errno_" + std::to_string(param_info.param.error);
    });

TEST(PerfBackend, PageFaultsIncludeKernelModeAndFallBackToUserSpaceWithANote) {
  FakeKernel kernel;
  {
    auto set = open_with(kernel, {"page-faults"});
    EXPECT_EQ(kernel.leaders().front()->attr.exclude_kernel, 0u);  // faults in copy_to_user count
    EXPECT_TRUE(set->events()[0].reason.empty());
  }
  FakeKernel strict;  // perf_event_paranoid 2 without CAP_PERFMON: kernel mode refused
  strict.open_error = [](const perf_event_attr& attr, pid_t, int) { return attr.exclude_kernel ? 0 : EACCES; };
  auto set = open_with(strict, {"page-faults", "context-switches"});
  EXPECT_EQ(set->events()[0].status, CounterStatus::ok);
  EXPECT_THAT(set->events()[0].reason, HasSubstr("user space only"));
  EXPECT_EQ(strict.leaders().front()->attr.exclude_kernel, 1u);
  // context-switches happen in the kernel: user-only would always read 0, so no fallback.
  EXPECT_EQ(set->events()[1].status, CounterStatus::no_permission);
}

TEST(PerfBackend, UnknownNamesAreUnsupportedAndTheRestStillCount) {
  FakeKernel kernel;
  auto set = open_with(kernel, {"task-clok", "page-faults"});
  EXPECT_EQ(set->events()[0].status, CounterStatus::unsupported);
  EXPECT_FALSE(set->events()[0].reason.empty());
  EXPECT_EQ(set->events()[1].status, CounterStatus::ok);
  EXPECT_TRUE(interval(*set)[1].has_value());
}

TEST(PerfBackend, GroupsThatDoNotFitAreSplitNeverDropped) {
  FakeKernel kernel;
  kernel.max_group_size = 2;
  auto set = open_with(kernel, {"cycles", "instructions", "branches", "branch-misses", "cache-misses"});
  for (const EventInfo& e : set->events()) EXPECT_EQ(e.status, CounterStatus::ok) << e.name << ": " << e.reason;
  EXPECT_EQ(kernel.leaders().size(), 3u);  // 2 + 2 + 1
  const auto r = interval(*set);
  // hardware (type 0): cycles config 0 → 1, instructions 1 → 2, branches 4 → 5, branch-misses 5 → 6, cache-misses 3 → 4
  EXPECT_DOUBLE_EQ(r[0].value, 1.0);
  EXPECT_DOUBLE_EQ(r[1].value, 2.0);
  EXPECT_DOUBLE_EQ(r[2].value, 5.0);
  EXPECT_DOUBLE_EQ(r[3].value, 6.0);
  EXPECT_DOUBLE_EQ(r[4].value, 4.0);
}

TEST(PerfBackend, MultiplexedGroupsAreScaledAndMarked) {
  FakeKernel kernel;
  kernel.running_share = 0.5;  // every interval: enabled +1000 ns, running +500 ns
  auto set = open_with(kernel, {"task-clock"});
  const CounterReading r = interval(*set)[0];
  EXPECT_EQ(r.status, CounterStatus::multiplexed);
  EXPECT_DOUBLE_EQ(r.running_fraction, 0.5);
  EXPECT_EQ(r.raw, 102u);
  EXPECT_DOUBLE_EQ(r.value, 204.0);
}

TEST(PerfBackend, EintrIsRetriedAndShortReadsAreUnavailable) {
  FakeKernel kernel;
  auto set = open_with(kernel, {"task-clock"});
  kernel.eintr_reads = 3;
  EXPECT_TRUE(interval(*set)[0].has_value());
  kernel.short_reads = true;
  const auto r = interval(*set);
  EXPECT_EQ(r[0].status, CounterStatus::not_counted);
  EXPECT_FALSE(r[0].has_value());
}

TEST(PerfBackend, AThreadThatCannotBeCountedMakesTheEventUnavailableNotSmaller) {
  FakeKernel kernel;
  kernel.thread_list = {100, 101};
  kernel.open_error = [](const perf_event_attr&, pid_t pid, int) { return pid == 101 ? EMFILE : 0; };
  auto set = open_with(kernel, {"task-clock", "page-faults"});
  for (const EventInfo& e : set->events()) {
    EXPECT_EQ(e.status, CounterStatus::not_counted);
    EXPECT_THAT(e.reason, HasSubstr("thread 101"));
    EXPECT_THAT(e.reason, HasSubstr("ulimit -n"));
  }
  EXPECT_FALSE(interval(*set)[0].has_value());
  EXPECT_TRUE(kernel.open_fds().empty());
}

TEST(PerfBackend, ThreadsThatEndWhileOpeningAreSkippedAndNewOnesAdded) {
  FakeKernel kernel;
  kernel.thread_list = {100, 101};
  kernel.threads_after_first_call = {100, 101, 102};                                                  // 102 started while we opened
  kernel.open_error = [](const perf_event_attr&, pid_t pid, int) { return pid == 101 ? ESRCH : 0; };  // 101 ended
  auto set = open_with(kernel, {"task-clock"});
  EXPECT_EQ(set->events()[0].status, CounterStatus::ok) << set->events()[0].reason;
  std::vector<pid_t> pids;
  for (const auto* l : kernel.leaders()) pids.push_back(l->pid);
  EXPECT_THAT(pids, ::testing::UnorderedElementsAre(100, 102));
}

TEST(PerfBackend, NewThreadsRestartTheOpeningSoNoThreadIsCountedTwice) {
  FakeKernel kernel;
  kernel.thread_list = {100};
  kernel.threads_after_first_call = {100, 102};  // 102 appeared: perhaps inherited from 100 already
  auto set = open_with(kernel, {"task-clock"});
  EXPECT_EQ(set->events()[0].status, CounterStatus::ok);
  // The first attempt's counters were closed; the second opened 100 and 102 once each.
  std::vector<pid_t> pids;
  for (const auto* l : kernel.leaders()) pids.push_back(l->pid);
  EXPECT_THAT(pids, ::testing::UnorderedElementsAre(100, 102));
}

TEST(PerfBackend, ThreadsThatNeverSettleMakeTheCountUnavailable) {
  FakeKernel kernel;
  kernel.threads_never_settle = true;
  auto set = open_with(kernel, {"task-clock"});
  EXPECT_EQ(set->events()[0].status, CounterStatus::not_counted);
  EXPECT_THAT(set->events()[0].reason, HasSubstr("threads kept starting"));
  EXPECT_FALSE(interval(*set)[0].has_value());
  EXPECT_TRUE(kernel.open_fds().empty());
}

// Two memory-controller instances, each listing CPUs 0 and 2 (one per socket).
class PerfBackendUncore : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("hwprof-uncore-" + std::to_string(::getpid()) + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    for (const auto& [name, type] : {std::pair{"uncore_imc_0", 20}, {"uncore_imc_1", 21}}) {
      write(std::string(name) + "/type", std::to_string(type));
      write(std::string(name) + "/cpumask", "0,2");
      write(std::string(name) + "/format/event", "config:0-7");
      write(std::string(name) + "/format/umask", "config:8-15");
    }
    write("software/type", "1");
    kernel_.devices = root_.string();
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  void write(const std::string& relative, const std::string& text) {
    std::filesystem::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative) << text << "\n";
  }
  std::filesystem::path root_;
  FakeKernel kernel_;
};

TEST_F(PerfBackendUncore, OpensEveryInstanceOnOneCpuPerSocketAndSumsThem) {
  auto set = open_with(kernel_, {"uncore_imc/event=0x04,umask=0x03/", "uncore_imc/event=0x04,umask=0x0c/", "task-clock"});
  for (const EventInfo& e : set->events()) EXPECT_EQ(e.status, CounterStatus::ok) << e.name << ": " << e.reason;
  std::vector<std::pair<std::uint32_t, int>> uncore;
  for (const auto* l : kernel_.leaders()) {
    if (l->attr.type == PERF_TYPE_SOFTWARE) continue;
    uncore.emplace_back(l->attr.type, l->cpu);
    EXPECT_EQ(l->pid, -1);                  // system-wide
    EXPECT_EQ(l->attr.inherit, 0u);         // inherit makes no sense system-wide
    EXPECT_EQ(l->attr.exclude_kernel, 0u);  // uncore PMUs reject the exclude bits
    EXPECT_EQ(l->attr.exclude_hv, 0u);
  }
  EXPECT_THAT(uncore, ::testing::UnorderedElementsAre(std::pair{20u, 0}, std::pair{20u, 2}, std::pair{21u, 0}, std::pair{21u, 2}));
  // Each group read adds (type·100 + config + 1): summed over 2 CPUs of 2 instances.
  const auto r = interval(*set);
  EXPECT_DOUBLE_EQ(r[0].value, 2 * (20 * 100 + 0x0304 + 1) + 2 * (21 * 100 + 0x0304 + 1));
  EXPECT_DOUBLE_EQ(r[1].value, 2 * (20 * 100 + 0x0c04 + 1) + 2 * (21 * 100 + 0x0c04 + 1));
}

TEST_F(PerfBackendUncore, SystemWideCountingNeedsPermissionAndSaysHowToGetIt) {
  kernel_.open_error = [](const perf_event_attr&, pid_t pid, int) { return pid == -1 ? EACCES : 0; };
  auto set = open_with(kernel_, {"uncore_imc/event=0x04,umask=0x03/", "task-clock"});
  EXPECT_EQ(set->events()[0].status, CounterStatus::no_permission);
  EXPECT_THAT(set->events()[0].reason, HasSubstr("perf_event_paranoid=0"));
  EXPECT_EQ(set->events()[1].status, CounterStatus::ok);
}

TEST_F(PerfBackendUncore, AnAbsentUncorePmuIsUnsupportedWithTheReason) {
  auto set = open_with(kernel_, {"uncore_cha/event=0x01/"});
  EXPECT_EQ(set->events()[0].status, CounterStatus::unsupported);
  EXPECT_THAT(set->events()[0].reason, HasSubstr("uncore_cha"));
}

// The calling thread alone, with pages the kernel lets us rdpmc: reads need no system call.
std::uint64_t fake_pmc(std::uint32_t counter) noexcept {
  return 1000 + counter;
}

class RdpmcKernel : public FakeKernel {
 public:
  bool allow_rdpmc = true;
  int unmapped = 0;
  std::map<int, perf_event_mmap_page> pages;

  const volatile perf_event_mmap_page* map_counter(int fd) noexcept override {
    perf_event_mmap_page& p = pages[fd];
    p = perf_event_mmap_page{};
    p.index = static_cast<std::uint32_t>(fd);  // hardware counter fd - 1
    p.offset = 5;
    p.cap_user_rdpmc = allow_rdpmc ? 1 : 0;
    p.pmc_width = 48;
    p.time_enabled = 77;
    p.time_running = 77;
    return &p;
  }
  void unmap_counter(const volatile perf_event_mmap_page*) noexcept override { ++unmapped; }
  RdpmcFunction rdpmc() const noexcept override { return fake_pmc; }
};

std::unique_ptr<CounterSet> open_calling_thread(FakeKernel& kernel, std::vector<std::string> names) {
  CounterOptions options;
  options.events = std::move(names);
  options.calling_thread_only = true;
  return open_perf_events(options, kernel);
}

TEST(PerfBackendRdpmc, HardwareEventsOfTheCallingThreadAreReadWithoutASystemCall) {
  RdpmcKernel kernel;
  kernel.thread_list = {100, 101};  // other threads exist, but only the caller is counted
  {
    auto set = open_calling_thread(kernel, {"cycles", "instructions"});
    for (const EventInfo& e : set->events()) EXPECT_EQ(e.status, CounterStatus::ok) << e.reason;
    const auto leaders = kernel.leaders();
    ASSERT_EQ(leaders.size(), 1u);
    EXPECT_EQ(leaders[0]->pid, 0);            // the calling thread
    EXPECT_EQ(leaders[0]->attr.inherit, 0u);  // and nothing it starts
    CounterSnapshot snapshot;
    set->read(snapshot);
    EXPECT_EQ(kernel.read_calls, 0);
    // offset 5 + rdpmc(index - 1) = 5 + 1000 + fd - 1
    const auto fds = kernel.open_fds();
    ASSERT_EQ(fds.size(), 2u);
    EXPECT_TRUE(snapshot.valid[0] && snapshot.valid[1]);
    EXPECT_EQ(snapshot.value[0], 5u + 1000u + static_cast<std::uint64_t>(fds[0]) - 1);
    EXPECT_EQ(snapshot.value[1], 5u + 1000u + static_cast<std::uint64_t>(fds[1]) - 1);
    EXPECT_EQ(snapshot.time_enabled[0], 77u);
  }
  EXPECT_EQ(kernel.unmapped, 2);
  EXPECT_TRUE(kernel.open_fds().empty());
}

TEST(PerfBackendRdpmc, WithoutUserRdpmcReadsFallBackToTheSystemCall) {
  RdpmcKernel kernel;
  kernel.allow_rdpmc = false;
  auto set = open_calling_thread(kernel, {"cycles", "instructions"});
  const auto r = interval(*set);
  EXPECT_GT(kernel.read_calls, 0);
  EXPECT_TRUE(r[0].has_value() && r[1].has_value());
}

TEST(PerfBackendRdpmc, SoftwareEventsHaveNoPagesAndUseRead) {
  RdpmcKernel kernel;
  auto set = open_calling_thread(kernel, {"task-clock"});
  EXPECT_TRUE(kernel.pages.empty());
  EXPECT_TRUE(interval(*set)[0].has_value());
  EXPECT_GT(kernel.read_calls, 0);
  EXPECT_EQ(kernel.leaders().front()->attr.inherit, 0u);
}

TEST(PerfBackend, AChildIsCountedFromExec) {
  FakeKernel kernel;
  auto set = open_with(kernel, {"task-clock", "page-faults"}, /*pid=*/4242, /*on_exec=*/true);
  const auto leaders = kernel.leaders();
  ASSERT_EQ(leaders.size(), 1u);
  EXPECT_EQ(leaders[0]->pid, 4242);
  EXPECT_EQ(leaders[0]->attr.enable_on_exec, 1u);
  EXPECT_EQ(leaders[0]->attr.inherit, 1u);
  for (const auto& [fd, e] : kernel.events) {
    if (e.leader != fd) {
      EXPECT_EQ(e.attr.enable_on_exec, 0u);
    }
  }
}

TEST(PerfBackend, TooManyEventsAreRefusedByName) {
  FakeKernel kernel;
  std::vector<std::string> names(kMaxCounterEvents + 2, "task-clock");
  auto set = open_with(kernel, names);
  ASSERT_EQ(set->events().size(), kMaxCounterEvents + 2);
  EXPECT_EQ(set->events().back().status, CounterStatus::unsupported);
  EXPECT_THAT(set->events().back().reason, HasSubstr("more than"));
}

}  // namespace
}  // namespace hwprof::counters
