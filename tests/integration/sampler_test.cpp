// The sampler on the real kernel (docs/sampling.md): cpu-clock samples of a thread that
// existed before it opened and of one started after, on the session's clock, with callchains,
// never of the reader; another process sampled from its exec with its mappings and names; a
// hardware event refused where the machine has no PMU; code written at run time into anonymous
// memory, sampled and named through the process's perf map file. Skips where perf_event_open is
// not permitted. Counts are held to generous lower bounds, never to a time.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/stages.hpp"
#include "counters/system_info.hpp"
#include "sampling/sample_spec.hpp"
#include "sampling/sampler.hpp"
#include "symbols/perf_map.hpp"
#include "symbols/symbols.hpp"

namespace hwprof::symbols {
namespace {

using ::testing::HasSubstr;

constexpr double kSpinCpuSeconds = 0.3;
constexpr std::uint64_t kHz = 1000;

std::uint64_t clock_ns(clockid_t clock) {
  timespec ts{};
  ::clock_gettime(clock, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ULL + static_cast<std::uint64_t>(ts.tv_nsec);
}

// Each thread spins in a function of its own until it has had kSpinCpuSeconds of CPU (the
// work is defined by CPU time, so a busy host stretches it instead of starving it), and
// returns the CPU time it had.
__attribute__((noinline)) double spin_before() {
  const std::uint64_t start = clock_ns(CLOCK_THREAD_CPUTIME_ID);
  volatile double x = 1.0;
  while (clock_ns(CLOCK_THREAD_CPUTIME_ID) - start < static_cast<std::uint64_t>(kSpinCpuSeconds * 1e9)) {
    for (int i = 0; i < 20000; ++i) x = x * 1.0000001 + 1e-9;
  }
  return static_cast<double>(clock_ns(CLOCK_THREAD_CPUTIME_ID) - start) / 1e9;
}

__attribute__((noinline)) double spin_after() {
  const std::uint64_t start = clock_ns(CLOCK_THREAD_CPUTIME_ID);
  volatile double y = 2.0;
  while (clock_ns(CLOCK_THREAD_CPUTIME_ID) - start < static_cast<std::uint64_t>(kSpinCpuSeconds * 1e9)) {
    for (int i = 0; i < 20000; ++i) y = y * 0.9999999 + 2e-9;
  }
  return static_cast<double>(clock_ns(CLOCK_THREAD_CPUTIME_ID) - start) / 1e9;
}

// The sampler opened; or why this machine does not permit sampling (the test then skips).
// Any other refusal fails the test.
struct Opened {
  std::optional<Sampler> sampler;
  std::string skip;
};

Opened open_sampler(const std::string& text, const SamplerOptions& options = {}) {
  Opened out;
  auto spec = parse_sample_spec(text);
  if (!spec.ok()) {
    ADD_FAILURE() << spec.error().message;
    return out;
  }
  auto opened = Sampler::open(*spec, options);
  if (opened.ok()) {
    out.sampler.emplace(std::move(opened).value());
  } else if (opened.error().message.find("not permitted") != std::string::npos) {
    out.skip = "perf_event_open is not permitted here: " + opened.error().message;
  } else {
    ADD_FAILURE() << opened.error().message;
  }
  return out;
}

struct ThreadSamples {
  std::vector<const SampleRecord*> samples;
  std::size_t in_function = 0;  // whose ip lies in the thread's spin function
};

ThreadSamples samples_of(const SampleStore& data, pid_t tid, std::uintptr_t function) {
  ThreadSamples out;
  for (const SampleRecord& s : data.samples()) {
    if (s.tid != static_cast<std::uint32_t>(tid)) continue;
    out.samples.push_back(&s);
    // The spinning loop sits within the first few hundred bytes of its function.
    if (s.ip >= function && s.ip < function + 4096) ++out.in_function;
  }
  return out;
}

void expect_sampled(const SampleStore& data, const ThreadSamples& t, double cpu_seconds, std::uint64_t t0, std::uint64_t t1, const char* name) {
  const double expected = cpu_seconds * static_cast<double>(kHz);
  EXPECT_GE(static_cast<double>(t.samples.size()), 0.1 * expected)
      << name << ": " << t.samples.size() << " samples for " << cpu_seconds << " s of CPU";
  // More than twice the CPU time would mean the thread was sampled by two events at once.
  EXPECT_LE(static_cast<double>(t.samples.size()), 2.0 * expected + 20) << name << " sampled twice over?";
  EXPECT_GE(t.in_function * 2, t.samples.size()) << name << ": only " << t.in_function << " of " << t.samples.size()
                                                 << " samples in its spin function";
  std::uint64_t last = 0;
  for (const SampleRecord* s : t.samples) {
    EXPECT_GE(s->time_ns, t0) << name;
    EXPECT_LE(s->time_ns, t1) << name;
    EXPECT_GT(s->time_ns, last) << name << ": sample times must increase per thread";
    last = s->time_ns;
    EXPECT_GT(s->frame_count, 0u) << name << ": an empty callchain";
    EXPECT_FALSE(data.frames(*s).empty());
  }
}

TEST(SamplerKernel, ThreadsStartedBeforeAndAfterOpeningAreSampledOnTheMonotonicClock) {
  std::atomic<bool> go{false};
  std::atomic<pid_t> before_tid{0};
  double before_cpu = 0;
  std::thread before([&] {
    before_tid = ::gettid();
    while (!go.load()) std::this_thread::yield();
    before_cpu = spin_before();
  });
  while (before_tid.load() == 0) std::this_thread::yield();

  Opened opened = open_sampler("cpu-clock@1000");
  if (!opened.sampler) {
    go = true;
    before.join();
    if (!opened.skip.empty()) GTEST_SKIP() << opened.skip;
    return;  // the failure is already reported
  }
  Sampler& sampler = *opened.sampler;
  const std::uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
  sampler.start();
  go = true;
  std::atomic<pid_t> after_tid{0};
  double after_cpu = 0;
  std::thread after([&] {
    after_tid = ::gettid();
    after_cpu = spin_after();
  });
  before.join();
  after.join();
  sampler.stop();
  const std::uint64_t t1 = clock_ns(CLOCK_MONOTONIC);

  const SampleStore& data = sampler.data();
  const SamplerStats stats = sampler.stats();
  std::printf("cpu-clock@1000: %llu samples kept, %llu lost, %llu throttled, %llu dropped; %zu threads opened, %zu seen; %zu rings of %zu KiB\n",
              static_cast<unsigned long long>(stats.samples), static_cast<unsigned long long>(stats.lost),
              static_cast<unsigned long long>(stats.throttled), static_cast<unsigned long long>(stats.dropped), stats.threads_opened,
              stats.threads_seen, stats.cpus, stats.ring_bytes >> 10);
  for (const std::string& w : sampler.warnings()) std::printf("warning: %s\n", w.c_str());

  const ThreadSamples b = samples_of(data, before_tid, reinterpret_cast<std::uintptr_t>(&spin_before));
  const ThreadSamples a = samples_of(data, after_tid, reinterpret_cast<std::uintptr_t>(&spin_after));
  std::printf("thread started before opening: %zu samples (%zu in spin_before) for %.3f s of CPU\n", b.samples.size(), b.in_function, before_cpu);
  std::printf("thread started after opening:  %zu samples (%zu in spin_after) for %.3f s of CPU\n", a.samples.size(), a.in_function, after_cpu);
  expect_sampled(data, b, before_cpu, t0, t1, "the thread started before opening");
  expect_sampled(data, a, after_cpu, t0, t1, "the thread started after opening");

  ASSERT_NE(sampler.reader_tid(), 0);
  for (const SampleRecord& s : data.samples()) ASSERT_NE(s.tid, static_cast<std::uint32_t>(sampler.reader_tid())) << "the reader was sampled";
  EXPECT_GE(stats.threads_seen, 2u);
  if (stats.lost > 0) {
    EXPECT_THAT(sampler.warnings(), testing::Contains(HasSubstr("lost")));
  }
  EXPECT_EQ(stats.dropped, 0u);
  EXPECT_EQ(stats.malformed, 0u);
}

TEST(SamplerKernel, AnotherProcessIsSampledFromItsExecWithItsMappingsAndName) {
  int gate[2];
  ASSERT_EQ(::pipe(gate), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Waits for the sampler to open, then becomes a shell that spins a while.
    char c = 0;
    ::close(gate[1]);
    if (::read(gate[0], &c, 1) != 1) ::_exit(3);
    ::execl("/bin/sh", "sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(gate[0]);
  SamplerOptions options;
  options.pid = child;
  options.enable_on_exec = true;
  Opened opened = open_sampler("cpu-clock@1000", options);
  if (!opened.sampler) {
    ::close(gate[1]);  // the child reads end of file and exits
    ::waitpid(child, nullptr, 0);
    if (!opened.skip.empty()) GTEST_SKIP() << opened.skip;
    return;
  }
  Sampler& sampler = *opened.sampler;
  sampler.start();
  ASSERT_EQ(::write(gate[1], "x", 1), 1);
  ::close(gate[1]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  sampler.stop();

  const SampleStore& data = sampler.data();
  const auto of_child = static_cast<std::size_t>(
      std::count_if(data.samples().begin(), data.samples().end(), [&](const SampleRecord& s) { return s.pid == static_cast<std::uint32_t>(child); }));
  std::printf("child: %zu samples, %zu mappings, %zu names, %zu fork/exit records; lost %llu\n", of_child, data.mappings.size(), data.comms.size(),
              data.tasks.size(), static_cast<unsigned long long>(sampler.stats().lost));
  EXPECT_GE(of_child, 10u);
  EXPECT_TRUE(std::any_of(data.comms.begin(), data.comms.end(), [&](const CommRecord& c) {
    return c.exec && c.pid == static_cast<std::uint32_t>(child);
  })) << "no COMM record of the exec";
  EXPECT_TRUE(std::any_of(data.mappings.begin(), data.mappings.end(), [&](const MappingRecord& m) {
    return m.pid == static_cast<std::uint32_t>(child) && (m.prot & PROT_EXEC) != 0 && !m.filename.empty();
  })) << "no executable MMAP2 record of the child";
  EXPECT_TRUE(std::any_of(data.tasks.begin(), data.tasks.end(), [&](const TaskRecord& t) {
    return t.exit && t.pid == static_cast<std::uint32_t>(child);
  })) << "no EXIT record of the child";
}

TEST(SamplerKernel, AHardwareEventIsRefusedWhereThereIsNoPmu) {
  auto spec = parse_sample_spec("cycles@p1000000");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  auto opened = Sampler::open(*spec);
  if (!hardware_pmu_exposed()) {
    ASSERT_FALSE(opened.ok()) << "cycles sampled on a machine that lists no hardware PMU";
    EXPECT_THAT(opened.error().message, HasSubstr("no hardware PMU"));
    EXPECT_THAT(opened.error().message, HasSubstr("'cycles@p1000000'"));
    return;
  }
  if (!opened.ok()) GTEST_SKIP() << "this machine has a PMU, but cycles cannot be sampled here: " << opened.error().message;
  Sampler sampler = std::move(opened).value();
  sampler.start();
  const double cpu = spin_before();
  sampler.stop();
  EXPECT_GT(sampler.stats().samples, 0u) << "no cycles sample in " << cpu << " s of CPU";
}

// A JIT's code as Linux perf's convention names it (docs/sampling.md, "Perf map files"): a spin
// loop written as machine code into an anonymous executable page, and this process's
// /tmp/perf-PID.map naming it; the samples taken in it are named from the file.
class JitPerfMap : public ::testing::Test {
 protected:
  void TearDown() override {
    if (wrote_map_) std::remove(perf_map_path(::getpid()).c_str());
    if (page_ != MAP_FAILED) ::munmap(page_, page_bytes_);
  }
  void* page_ = MAP_FAILED;
  std::size_t page_bytes_ = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  bool wrote_map_ = false;
};

TEST_F(JitPerfMap, SamplesInCodeWrittenAtRunTimeAreNamedFromThePerfMapFile) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "the spin function is x86-64 machine code; this is another architecture";
#else
  page_ = ::mmap(nullptr, page_bytes_, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page_ == MAP_FAILED) GTEST_SKIP() << "this system refuses executable anonymous memory: " << std::strerror(errno);
  // dec rdi; jnz -5 (back to the dec); ret: spins its first argument down to 0.
  const unsigned char code[] = {0x48, 0xff, 0xcf, 0x75, 0xfb, 0xc3};
  std::memcpy(page_, code, sizeof code);
  __builtin___clear_cache(static_cast<char*>(page_), static_cast<char*>(page_) + sizeof code);
  const auto start = reinterpret_cast<std::uintptr_t>(page_);
  {
    FILE* f = std::fopen(perf_map_path(::getpid()).c_str(), "w");
    ASSERT_NE(f, nullptr) << perf_map_path(::getpid()) << ": " << std::strerror(errno);
    wrote_map_ = true;
    std::fprintf(f, "%lx %zx hwprof_jit_spin\n", static_cast<unsigned long>(start), sizeof code);
    ASSERT_EQ(std::fclose(f), 0);
  }
  Opened opened = open_sampler("cpu-clock@1000");
  if (!opened.skip.empty()) GTEST_SKIP() << opened.skip;
  ASSERT_TRUE(opened.sampler);
  Sampler& sampler = *opened.sampler;
  using Spin = void (*)(std::uint64_t);
  const auto spin = reinterpret_cast<Spin>(page_);
  sampler.start();
  // Spins for kSpinCpuSeconds of CPU, in calls short next to a sample's period.
  const std::uint64_t cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
  while (clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0 < static_cast<std::uint64_t>(kSpinCpuSeconds * 1e9)) spin(2'000'000);
  const double cpu_seconds = static_cast<double>(clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0) / 1e9;
  sampler.stop();

  auto symbolizer = symbolizer_for_process(::getpid());
  ASSERT_TRUE(symbolizer) << symbolizer.error().message;
  std::size_t mine = 0;
  std::size_t named = 0;
  for (const SampleRecord& s : sampler.data().samples()) {
    if (s.tid != static_cast<std::uint32_t>(::gettid())) continue;
    ++mine;
    const Symbol& symbol = symbolizer->resolve(s.ip);
    if (symbol.source == SymbolSource::perf_map && symbol.function == "hwprof_jit_spin") ++named;
  }
  EXPECT_GE(static_cast<double>(mine), 0.1 * cpu_seconds * static_cast<double>(kHz)) << mine << " samples for " << cpu_seconds << " s of CPU";
  EXPECT_GE(named * 2, mine) << "only " << named << " of " << mine << " samples named hwprof_jit_spin from the perf map";
  EXPECT_GT(named, 0u);
#endif
}

}  // namespace
}  // namespace hwprof::symbols
