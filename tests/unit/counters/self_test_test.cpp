// The counter self-test's expectations, against a simulated PMU that counts the way the
// vendors document their events — not the way the group files' ids say — so a group whose
// ids, weights or encodings disagree with the hardware fails here. And the real kernels run.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <string>

#include "common/stages.hpp"
#include "counters/self_test.hpp"
#include "hwprof/event_group.hpp"

namespace hwprof::counters {
namespace {

const std::string kCountersDir = HWPROF_COUNTERS_DIR;

std::vector<EventGroup> family_groups(const std::string& family) {
  auto groups = load_family_groups(kCountersDir, family);
  EXPECT_TRUE(groups.ok()) << groups.error().message;
  return groups.ok() ? *groups : std::vector<EventGroup>{};
}

std::uint64_t hex_after(const std::string& name, const std::string& key) {
  const auto at = name.find(key + "=0x");
  if (at == std::string::npos) return 0;
  return std::stoull(name.substr(at + key.size() + 3), nullptr, 16);
}

// What a correct PMU counts, per event name, for a kernel. Facts (with the group files'
// sources): Intel FP_ARITH_INST_RETIRED (event 0xC7) umask bits 0x01 scalar DP, 0x02 scalar
// SP, 0x04/0x08 128-bit DP/SP, 0x10/0x20 256-bit, 0x40/0x80 512-bit, counting instructions,
// FMA twice; AMD RETIRED_SSE_AVX_FLOPS (event 0x03) counts FLOPs, a MAC as 2; on Zen 5 umask
// bits 5-7 filter 2 scalar SP, 3 packed SP, 4 scalar DP, 5 packed DP; DRAM: one CAS per 64
// bytes (Granite Rapids: half on each subchannel event, 0x05 and 0x06).
struct PmuModel {
  bool intel_fma_counts_once = false;  // a broken PMU (or a broken group) for the negative test
  bool gnr_second_subchannel_lost = false;
  bool has_second_subchannel = false;  // Granite Rapids: a CAS event per DDR5 subchannel

  double count(const std::string& event, const SelfTestKernel& k) const {
    const bool sp = k.precision == FpPrecision::single;
    const bool scalar = k.width == SimdWidth::scalar;
    std::uint64_t intel_umask = 0;
    if (event.rfind("FP_ARITH_INST_RETIRED:", 0) == 0) {
      static const std::map<std::string, std::uint64_t> umask = {
          {"SCALAR_DOUBLE", 0x01},      {"SCALAR_SINGLE", 0x02},      {"128B_PACKED_DOUBLE", 0x04}, {"128B_PACKED_SINGLE", 0x08},
          {"256B_PACKED_DOUBLE", 0x10}, {"256B_PACKED_SINGLE", 0x20}, {"512B_PACKED_DOUBLE", 0x40}, {"512B_PACKED_SINGLE", 0x80}};
      intel_umask = umask.at(event.substr(event.find(':') + 1));
    } else if (event.rfind("cpu/", 0) == 0 && hex_after(event, "event") == 0xc7) {
      intel_umask = hex_after(event, "umask");
    }
    if (intel_umask != 0) {
      if (!k.fp) return 0;
      const int bit = k.width == SimdWidth::scalar ? 0 : k.width == SimdWidth::sse ? 2 : k.width == SimdWidth::avx2 ? 4 : 6;
      const std::uint64_t mine = 1ULL << (bit + (sp ? 1 : 0));
      return (intel_umask & mine) != 0 ? k.instructions * (k.fma && !intel_fma_counts_once ? 2 : 1) : 0;
    }
    if (event.rfind("RETIRED_SSE_AVX_FLOPS", 0) == 0) return k.fp ? k.flops : 0;
    if (event.rfind("cpu/", 0) == 0 && hex_after(event, "event") == 0x03) {
      if (!k.fp) return 0;
      const std::uint64_t type = hex_after(event, "umask") >> 5;
      const std::uint64_t mine = scalar ? (sp ? 2 : 4) : (sp ? 3 : 5);
      return type == 0 || type == mine ? k.flops : 0;
    }
    const double lines = k.fp ? 0 : k.read_bytes / 64;
    if (event.rfind("amd_umc/", 0) == 0) return hex_after(event, "rdwrmask") == 0x1 ? lines : 0;
    if (event.rfind("uncore_imc/", 0) == 0) {
      if (hex_after(event, "umask") != 0xcf && hex_after(event, "umask") != 0x0f) return 0;  // writes
      const std::uint64_t code = hex_after(event, "event");
      if (!has_second_subchannel) return lines;  // Ice Lake 0x04/0x0f, Sapphire Rapids 0x05/0xcf
      if (code == 0x06) return gnr_second_subchannel_lost ? 0 : lines / 2;
      return lines / 2;
    }
    if (event.find("UNC_M_CAS_COUNT:RD") != std::string::npos) return lines / 6;  // Skylake-SP: six channels
    if (event.find("UNC_M_CAS_COUNT:WR") != std::string::npos) return 0;
    if (event.rfind("amd_df/", 0) == 0) return lines / 8;  // Zen 2/3: eight channels
    return 1e6;                                            // cycles, instructions: not checked
  }
};

class FakeSet : public CounterSet {
 public:
  FakeSet(const EventGroup& group, std::map<std::string, double>* totals, bool unavailable) : totals_(totals), unavailable_(unavailable) {
    for (const GroupEvent& e : group.events) {
      EventInfo info;
      info.name = e.event;
      if (unavailable) {
        info.status = CounterStatus::unsupported;
        info.reason = "the simulated machine exposes no PMU";
      }
      events_.push_back(info);
    }
  }
  BackendKind backend() const noexcept override { return BackendKind::perf; }
  void start() noexcept override {}
  void stop() noexcept override {}
  void read(CounterSnapshot& out) noexcept override {
    for (std::size_t i = 0; i < events_.size(); ++i) {
      out.valid[i] = !unavailable_;
      out.value[i] = static_cast<std::uint64_t>((*totals_)[events_[i].name]);
      out.time_enabled[i] = out.time_running[i] = ++tick_;
    }
  }

 private:
  std::map<std::string, double>* totals_;
  bool unavailable_;
  std::uint64_t tick_ = 0;
};

// The self-test's kernels with their counts, each "run" adding what the simulated PMU would
// count to the running totals of every event of the group being tested.
struct Simulation {
  PmuModel model;
  std::map<std::string, double> totals;
  std::vector<std::string> events;  // of the group now open
  std::vector<SelfTestKernel> kernels;
  bool unavailable = false;

  explicit Simulation(const std::string& family) {
    model.has_second_subchannel = family == "granite-rapids";
    kernels = self_test_kernels(1000, 1 << 20);
    for (SelfTestKernel& k : kernels) {
      k.unsupported.clear();
      const SelfTestKernel* self = &k;
      k.run = [this, self] {
        for (const std::string& e : events) totals[e] += model.count(e, *self);
      };
    }
  }
  SelfTestReport run(const std::vector<EventGroup>& groups) {
    return run_self_test(groups, kernels, [this](const EventGroup& g) {
      events.clear();
      for (const GroupEvent& e : g.events) events.push_back(e.event);
      return std::make_unique<FakeSet>(g, &totals, unavailable);
    });
  }
};

const std::vector<std::string> kHardwareFamilies = {"skylake-sp", "icelake-sp", "sapphire-rapids", "granite-rapids", "zen2", "zen3", "zen4", "zen5"};

TEST(SelfTest, EveryFamilysFlopAndDramGroupsPassOnACorrectPmu) {
  for (const std::string& family : kHardwareFamilies) {
    SCOPED_TRACE(family);
    Simulation sim(family);
    const SelfTestReport report = sim.run(family_groups(family));
    EXPECT_EQ(report.failed(), 0);
    EXPECT_EQ(report.unavailable(), 0);
    EXPECT_TRUE(report.skipped.empty());
    int flop_metric_checks = 0;
    int dram_checks = 0;
    for (const SelfTestCheck& c : report.checks) {
      EXPECT_TRUE(c.pass) << c.group << " / " << c.kernel << " / " << c.what << ": " << c.measured.value_or(-1) << " vs " << c.expected;
      flop_metric_checks += c.what.find("FLOP") != std::string::npos;
      dram_checks += c.what.rfind("DRAM", 0) == 0;
    }
    // 16 FLOP kernels + the stream under each FLOP group; the stream under the DRAM group.
    const int flop_groups = family.rfind("zen", 0) == 0 ? (family == "zen5" ? 3 : 1) : 2;
    EXPECT_EQ(flop_metric_checks, flop_groups * 17);
    EXPECT_EQ(dram_checks, 1);
  }
}

TEST(SelfTest, AnFmaCountedOnceFailsEveryFmaKernelAndNothingElse) {
  Simulation sim("skylake-sp");
  sim.model.intel_fma_counts_once = true;
  const SelfTestReport report = sim.run(family_groups("skylake-sp"));
  ASSERT_GT(report.failed(), 0);
  for (const SelfTestCheck& c : report.checks) {
    const bool fma = c.kernel.find("fma") != std::string::npos;
    const bool counted = c.expected > 0;
    EXPECT_EQ(c.pass, !(fma && counted)) << c.group << " / " << c.kernel << " / " << c.what;
    if (fma && counted) {
      EXPECT_DOUBLE_EQ(*c.measured / c.expected, 0.5) << c.kernel << " " << c.what;
    }
  }
}

TEST(SelfTest, ALostSubchannelHalvesGraniteRapidsDramBytes) {
  Simulation sim("granite-rapids");
  sim.model.gnr_second_subchannel_lost = true;
  const SelfTestReport report = sim.run(family_groups("granite-rapids"));
  EXPECT_EQ(report.failed(), 1);
  for (const SelfTestCheck& c : report.checks) {
    if (c.what.rfind("DRAM", 0) == 0) {
      EXPECT_FALSE(c.pass);
      EXPECT_DOUBLE_EQ(*c.measured / c.expected, 0.5);
    }
  }
}

TEST(SelfTest, UnavailableEventsAreUnavailableNotFailures) {
  Simulation sim("zen4");
  sim.unavailable = true;
  const SelfTestReport report = sim.run(family_groups("zen4"));
  EXPECT_EQ(report.failed(), 0);
  EXPECT_GT(report.unavailable(), 0);
  for (const SelfTestCheck& c : report.checks) {
    EXPECT_FALSE(c.measured.has_value());
    EXPECT_NE(c.note.find("no PMU"), std::string::npos) << c.note;
  }
}

TEST(SelfTest, ExpectationsFollowTheEventIdsAndWeights) {
  const auto groups = family_groups("sapphire-rapids");
  const EventGroup* sp = nullptr;
  for (const EventGroup& g : groups) {
    if (g.name == "flops_sp") sp = &g;
  }
  ASSERT_NE(sp, nullptr);
  SelfTestKernel k;
  k.width = SimdWidth::avx2;
  k.precision = FpPrecision::single;
  k.fma = true;
  k.instructions = 8;
  k.flops = 8 * 8 * 2;
  auto expect = [&](const std::string& id) {
    for (const GroupEvent& e : sp->events) {
      if (e.id == id) return expected_event_count(*sp, e, k);
    }
    ADD_FAILURE() << id;
    return std::optional<double>();
  };
  EXPECT_EQ(expect("sp_256"), 16.0);  // 8 FMAs, each counted twice
  EXPECT_EQ(expect("sp_512"), 0.0);
  EXPECT_EQ(expect("sp_scalar"), 0.0);
  EXPECT_FALSE(expect("cycles").has_value());
  EXPECT_EQ(expected_metric_value(*sp, *checked_metric(*sp), k), 128.0);
  k.precision = FpPrecision::double_;
  EXPECT_EQ(expect("sp_256"), 0.0);
}

TEST(SelfTest, ToleranceIsTwoPercentForFlopsAndAsymmetricForDram) {
  EXPECT_TRUE(within_tolerance(1.015e9, 1e9, false));
  EXPECT_FALSE(within_tolerance(1.03e9, 1e9, false));
  EXPECT_TRUE(within_tolerance(900, 0, false));  // the harness's few instructions
  EXPECT_FALSE(within_tolerance(5000, 0, false));
  EXPECT_TRUE(within_tolerance(1.2e9, 1e9, true));
  EXPECT_FALSE(within_tolerance(0.85e9, 1e9, true));
  EXPECT_FALSE(within_tolerance(std::nan(""), 1e9, true));
}

TEST(SelfTest, TheRealKernelsRunOrSayWhyNot) {
  const auto kernels = self_test_kernels(1000, 1 << 20);
  ASSERT_EQ(kernels.size(), 17u);
  for (const SelfTestKernel& k : kernels) {
    SCOPED_TRACE(k.name);
    if (k.run) {
      k.run();  // executes the assembly: an encoding this CPU lacks would fault here
    } else {
      EXPECT_FALSE(k.unsupported.empty());
    }
    if (k.fp) {
      EXPECT_EQ(k.instructions, 8000.0);
      EXPECT_EQ(k.flops, k.instructions * elements_per_register(k.width, k.precision) * (k.fma ? 2 : 1));
    } else {
      EXPECT_EQ(k.read_bytes, double(1 << 20));
    }
  }
  EXPECT_EQ(kernels.front().name, "scalar sp fma");
  EXPECT_TRUE(kernels[2].run) << "scalar add/multiply needs only SSE2, which every x86-64 has";
}

}  // namespace
}  // namespace hwprof::counters
