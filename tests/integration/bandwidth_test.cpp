// The STREAM kernels on this CPU (every ISA variant it supports, normal and non-temporal
// stores), and a small sweep on pinned workers. No timing thresholds: only orderings that
// hold on any machine (L1 above DRAM) and results that must be sane.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include <pthread.h>
#include <sched.h>

#include "calibrate/bandwidth.hpp"
#include "calibrate/pinned_team.hpp"
#include "common/stages.hpp"

namespace hwprof::calibration {
namespace {

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

// The largest cache CPU 0 reports (its last level), or 32 MiB when sysfs does not say.
std::int64_t last_level_cache_bytes() {
  std::int64_t largest = 0;
  for (int index = 0; index < 8; ++index) {
    std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/size");
    std::string size;
    if (!(in >> size)) continue;
    std::int64_t bytes = std::atoll(size.c_str());
    if (size.back() == 'K') bytes <<= 10;
    if (size.back() == 'M') bytes <<= 20;
    largest = std::max(largest, bytes);
  }
  return largest > 0 ? largest : std::int64_t{32} << 20;
}

struct Freed {
  void operator()(double* p) const { std::free(p); }
};
using Array = std::unique_ptr<double[], Freed>;
Array aligned_array(std::size_t n) {
  return Array(static_cast<double*>(std::aligned_alloc(64, n * sizeof(double))));
}

TEST(StreamKernels, EveryVariantComputesStreamsDefinitions) {
  constexpr std::size_t n = 40 * kStreamBlock;
  constexpr double s = 3.0;
  for (Isa isa : supported_isas()) {
    for (bool nontemporal : {false, true}) {
      for (StreamKernel kernel : {StreamKernel::copy, StreamKernel::scale, StreamKernel::add, StreamKernel::triad}) {
        Array a = aligned_array(n), b = aligned_array(n), c = aligned_array(n);
        for (std::size_t i = 0; i < n; ++i) {
          a[i] = 1.0 + static_cast<double>(i);
          b[i] = 2.0 - static_cast<double>(i);
          c[i] = 0.5 * static_cast<double>(i);
        }
        ASSERT_TRUE(run_stream_kernel(kernel, isa, nontemporal, a.get(), b.get(), c.get(), n, s));
        for (std::size_t i = 0; i < n; ++i) {
          const double x = static_cast<double>(i);
          const double want_a = kernel == StreamKernel::triad ? (2.0 - x) + s * 0.5 * x : 1.0 + x;
          const double want_b = kernel == StreamKernel::scale ? s * 0.5 * x : 2.0 - x;
          const double want_c = kernel == StreamKernel::copy ? 1.0 + x : kernel == StreamKernel::add ? 3.0 : 0.5 * x;
          ASSERT_DOUBLE_EQ(a[i], want_a) << isa_name(isa) << " " << stream_kernel_name(kernel) << (nontemporal ? " nt" : "") << " i=" << i;
          ASSERT_DOUBLE_EQ(b[i], want_b) << isa_name(isa) << " " << stream_kernel_name(kernel) << (nontemporal ? " nt" : "") << " i=" << i;
          ASSERT_DOUBLE_EQ(c[i], want_c) << isa_name(isa) << " " << stream_kernel_name(kernel) << (nontemporal ? " nt" : "") << " i=" << i;
        }
      }
    }
  }
}

void expect_sane(const std::vector<BandwidthSample>& samples, const BandwidthOptions& options) {
  ASSERT_EQ(samples.size(), options.working_sets.size() * options.kernels.size());
  for (const BandwidthSample& s : samples) {
    const std::string what = std::string(stream_kernel_name(s.kernel)) + " at " + std::to_string(s.working_set) + " bytes";
    EXPECT_TRUE(std::isfinite(s.best_gbps) && s.best_gbps > 0.0) << what;
    EXPECT_TRUE(std::isfinite(s.median_gbps) && s.median_gbps > 0.0) << what;
    EXPECT_LE(s.median_gbps, s.best_gbps) << what;
    EXPECT_TRUE(std::isfinite(s.spread) && s.spread >= 0.0) << what;
    EXPECT_EQ(s.repetitions, options.repetitions) << what;
    EXPECT_EQ(s.nontemporal, options.nontemporal) << what;
    EXPECT_FALSE(s.isa.empty()) << what;
    EXPECT_GT(s.working_set, 0) << what;
    // sched_getcpu() in each worker after every repetition found it on its CPU. (The note may
    // still say that another process shared a CPU: this machine is not ours alone.)
    EXPECT_TRUE(s.pinned) << what << ": " << s.note;
    EXPECT_EQ(s.note.find("unpinned"), std::string::npos) << what << ": " << s.note;
    EXPECT_EQ(s.note.find("found on CPU"), std::string::npos) << what << ": " << s.note;
  }
}

BandwidthOptions small_sweep(std::vector<int> cpus) {
  BandwidthOptions options;
  const auto workers = static_cast<std::int64_t>(cpus.size());
  options.cpus = std::move(cpus);
  options.working_sets = {6144 * workers, std::max<std::int64_t>(4 * last_level_cache_bytes(), std::int64_t{64} << 20)};
  options.kernels = {StreamKernel::copy, StreamKernel::triad};
  options.seconds_per_point = 0.002;
  options.repetitions = 3;
  return options;
}

void expect_l1_above_dram(const std::vector<BandwidthSample>& samples) {
  // Sizes outer, kernels inner: [copy L1, triad L1, copy DRAM, triad DRAM].
  ASSERT_EQ(samples.size(), 4u);
  EXPECT_EQ(samples[1].kernel, StreamKernel::triad);
  EXPECT_GT(samples[1].best_gbps, samples[3].best_gbps);
  EXPECT_GT(samples[0].best_gbps, samples[2].best_gbps);
}

TEST(MeasureBandwidth, OneWorkerL1AboveDram) {
  const std::vector<int> cpus = allowed_cpus();
  ASSERT_FALSE(cpus.empty());
  const BandwidthOptions options = small_sweep({cpus.back()});
  std::string why;
  const auto samples = measure_bandwidth(options, &why);
  ASSERT_FALSE(samples.empty()) << why;
  expect_sane(samples, options);
  expect_l1_above_dram(samples);
}

TEST(MeasureBandwidth, TwoWorkersPinnedToTheirCpus) {
  const std::vector<int> cpus = allowed_cpus();
  if (cpus.size() < 2) GTEST_SKIP() << "this process may run on one CPU only";
  const BandwidthOptions options = small_sweep({cpus[0], cpus[1]});
  std::string why;
  const auto samples = measure_bandwidth(options, &why);
  ASSERT_FALSE(samples.empty()) << why;
  expect_sane(samples, options);
  expect_l1_above_dram(samples);
}

TEST(MeasureBandwidth, NonTemporalStoresAtDramSize) {
  const std::vector<int> cpus = allowed_cpus();
  ASSERT_FALSE(cpus.empty());
  BandwidthOptions options = small_sweep({cpus.front()});
  options.working_sets = {options.working_sets.back()};
  options.nontemporal = true;
  std::string why;
  const auto samples = measure_bandwidth(options, &why);
  ASSERT_FALSE(samples.empty()) << why;
  expect_sane(samples, options);
}

TEST(MeasureBandwidth, EveryIsaThisCpuHas) {
  const std::vector<int> cpus = allowed_cpus();
  ASSERT_FALSE(cpus.empty());
  for (Isa isa : supported_isas()) {
    BandwidthOptions options = small_sweep({cpus.front()});
    options.working_sets = {options.working_sets.front()};
    options.isa = isa;
    std::string why;
    const auto samples = measure_bandwidth(options, &why);
    ASSERT_FALSE(samples.empty()) << isa_name(isa) << ": " << why;
    expect_sane(samples, options);
    EXPECT_EQ(samples.front().isa, isa_name(isa));
  }
}

TEST(MeasureBandwidth, SaysWhenAnotherThreadSharedAWorkersCpu) {
  const std::vector<int> cpus = allowed_cpus();
  ASSERT_FALSE(cpus.empty());
  const int cpu = cpus.back();
  std::atomic<bool> stop{false};
  std::thread rival([&] {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    while (!stop.load(std::memory_order_relaxed)) {
    }
  });
  BandwidthOptions options = small_sweep({cpu});
  options.working_sets = {options.working_sets.front()};
  options.kernels = {StreamKernel::triad};
  options.seconds_per_point = 0.02;  // several scheduler slices: the rival surely gets some
  const auto samples = measure_bandwidth(options);
  stop = true;
  rival.join();
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_TRUE(samples[0].pinned);
  EXPECT_NE(samples[0].note.find("shared a worker's CPU"), std::string::npos) << samples[0].note;
  EXPECT_GT(samples[0].best_gbps, 0.0);
}

// Beside a thread that keeps one worker's CPU busy, that worker waits for its CPU after
// every release. The warm-up once took that wait for work, ran one call per repetition, and
// a 2-worker L1 point came out at 0.003 GB/s against 18 GB/s for DRAM (40 runs in 40 beside
// stress-ng). L1 must stay above DRAM; the wait may lower it, and the note may say so.
TEST(MeasureBandwidth, ARivalOnOneWorkersCpuDoesNotShrinkTheRepetitions) {
  const std::vector<int> cpus = allowed_cpus();
  if (cpus.size() < 2) GTEST_SKIP() << "this process may run on one CPU only";
  std::atomic<bool> stop{false};
  std::thread rival([&, cpu = cpus[1]] {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    while (!stop.load(std::memory_order_relaxed)) {
    }
  });
  const BandwidthOptions options = small_sweep({cpus[0], cpus[1]});
  std::string why;
  const auto samples = measure_bandwidth(options, &why);
  stop = true;
  rival.join();
  ASSERT_FALSE(samples.empty()) << why;
  expect_l1_above_dram(samples);
}

TEST(MeasureBandwidth, SizesRoundToWholeBlocksPerWorker) {
  const std::vector<int> cpus = allowed_cpus();
  ASSERT_FALSE(cpus.empty());
  BandwidthOptions options = small_sweep({cpus.front()});
  options.working_sets = {1, 10000};
  options.kernels = {StreamKernel::copy, StreamKernel::add};
  const auto samples = measure_bandwidth(options);
  ASSERT_EQ(samples.size(), 4u);
  EXPECT_EQ(samples[0].working_set, 16 * static_cast<std::int64_t>(kStreamBlock));  // at least one block
  EXPECT_EQ(samples[1].working_set, 24 * static_cast<std::int64_t>(kStreamBlock));
  EXPECT_EQ(samples[2].working_set, 16 * 608);  // 10000 / 16 = 625 elements, down to 19 blocks
  EXPECT_EQ(samples[3].working_set, 24 * 416);  // 10000 / 24 = 416 elements: 13 blocks
}

TEST(MeasureBandwidth, WrongOptionsSayWhatIsWrong) {
  const std::vector<int> cpus = allowed_cpus();
  ASSERT_FALSE(cpus.empty());
  const BandwidthOptions good = small_sweep({cpus.front()});
  EXPECT_EQ(bandwidth_options_error(good), "");

  const auto error_of = [](const BandwidthOptions& options) {
    std::string why;
    EXPECT_TRUE(measure_bandwidth(options, &why).empty());
    EXPECT_EQ(why, bandwidth_options_error(options));
    return why;
  };
  BandwidthOptions o = good;
  o.cpus = {};
  EXPECT_NE(error_of(o).find("no CPUs"), std::string::npos);
  o = good;
  o.cpus = {CPU_SETSIZE + 5};
  EXPECT_NE(error_of(o).find("CPU " + std::to_string(CPU_SETSIZE + 5)), std::string::npos);
  o = good;
  o.cpus = {cpus.front(), cpus.front()};
  EXPECT_NE(error_of(o).find("twice"), std::string::npos);
  o = good;
  o.working_sets = {};
  EXPECT_NE(error_of(o).find("no working-set sizes"), std::string::npos);
  o = good;
  o.working_sets = {4096, -1};
  EXPECT_NE(error_of(o).find("-1 bytes"), std::string::npos);
  o = good;
  o.kernels = {};
  EXPECT_NE(error_of(o).find("no kernels"), std::string::npos);
  o = good;
  o.seconds_per_point = 0.0;
  EXPECT_NE(error_of(o).find("seconds per point"), std::string::npos);
  o = good;
  o.repetitions = 0;
  EXPECT_NE(error_of(o).find("repetitions"), std::string::npos);
  o = good;
  o.working_sets = {std::int64_t{1} << 50};
  EXPECT_NE(error_of(o).find("more than half"), std::string::npos);
  const auto isas = supported_isas();
  if (std::find(isas.begin(), isas.end(), Isa::avx512f) == isas.end()) {
    o = good;
    o.isa = Isa::avx512f;
    EXPECT_NE(error_of(o).find("avx512f"), std::string::npos);
  }
}

// The team's three timings, ordered by construction whatever the machine does: the shortest
// worker's own run, inside the span from the first start to the last finish, inside the
// caller's clock from before the release to after the last finish. Worker 1 finishes first
// and worker 0 only after it, so the shortest run is strictly inside the span.
TEST(PinnedTeam, TimingsNestAndTheShortestIsOneWorkersOwnRun) {
  std::vector<int> cpus = allowed_cpus();
  if (cpus.size() < 2) GTEST_SKIP() << "this process may run on one CPU only";
  cpus.resize(2);
  PinnedTeam team(cpus);
  ASSERT_EQ(team.error(), "");
  std::atomic<bool> one_done{false};
  std::atomic<int> runs[2] = {0, 0};
  const PinnedTeam::Task task = [&](std::size_t worker) {
    ++runs[worker];
    if (worker == 1) {
      one_done = true;
      return;
    }
    while (!one_done) std::this_thread::yield();
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
    while (std::chrono::steady_clock::now() < until) {
    }
  };
  for (int r = 0; r < 3; ++r) {
    one_done = false;
    const PinnedTeam::Timing t = team.run(task);
    EXPECT_GT(t.shortest, 0.0);
    EXPECT_LT(t.shortest, t.worked);
    EXPECT_LE(t.worked, t.released);
  }
  EXPECT_EQ(runs[0], 3);
  EXPECT_EQ(runs[1], 3);
}

// A task's exception reaches the caller once every worker is done, and the next run starts
// clean.
TEST(PinnedTeam, RethrowsAWorkersExceptionOnceAndRunsOnAfterIt) {
  const std::vector<int> cpus = allowed_cpus();
  ASSERT_FALSE(cpus.empty());
  PinnedTeam team({cpus.front()});
  ASSERT_EQ(team.error(), "");
  EXPECT_THROW(team.run([](std::size_t) { throw std::runtime_error("worker failed"); }), std::runtime_error);
  int ran = 0;
  EXPECT_NO_THROW(team.run([&](std::size_t) { ++ran; }));
  EXPECT_EQ(ran, 1);
  EXPECT_TRUE(team.on_their_cpus()) << team.placement_note();
}

}  // namespace
}  // namespace hwprof::calibration
