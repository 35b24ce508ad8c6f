// Every event of every group of one counter family, resolved with libpfm4 forced to that
// family's PMU (LIBPFM_FORCE_PMU). ctest runs this binary once per family with
// LIBPFM_FORCE_PMU and HWPROF_FORCED_FAMILY set (tests/CMakeLists.txt); run by hand without
// them, the tests skip.
#include <gtest/gtest.h>
#include <linux/perf_event.h>

#include <cstdlib>
#include <map>
#include <string>

#include "common/stages.hpp"
#include "counters/event_resolver.hpp"
#include "hwprof/event_group.hpp"

namespace hwprof::counters {
namespace {

const std::string kCountersDir = HWPROF_COUNTERS_DIR;

struct Encoding {
  const char* group;
  const char* id;
  std::uint64_t config;
};

struct FamilyCase {
  const char* pmu;  // libpfm4's PMU for the family; the hardware families only
  std::vector<Encoding> encodings;
};

const std::vector<Encoding> kIntelCommon = {
    {"ipc", "cycles", 0x3c},        {"ipc", "instr", 0xc0},         {"flops_dp", "dp_scalar", 0x1c7}, {"flops_dp", "dp_128", 0x4c7},
    {"flops_dp", "dp_256", 0x10c7}, {"flops_dp", "dp_512", 0x40c7}, {"flops_sp", "sp_scalar", 0x2c7}, {"flops_sp", "sp_128", 0x8c7},
    {"flops_sp", "sp_256", 0x20c7}, {"flops_sp", "sp_512", 0x80c7}, {"llc", "refs", 0x4f2e},          {"llc", "misses", 0x412e},
};

std::vector<Encoding> amd(std::uint64_t flops) {
  return {{"ipc", "cycles", 0x76}, {"ipc", "instr", 0xc0}, {"flops", "flops", flops}, {"flops", "cycles", 0x76}};
}

const std::map<std::string, FamilyCase>& families() {
  static const std::map<std::string, FamilyCase> cases = {
      {"skylake-sp", {"skx", kIntelCommon}},
      {"icelake-sp", {"icx", kIntelCommon}},
      {"sapphire-rapids", {"spr", kIntelCommon}},
      {"zen2", {"amd64_fam17h_zen2", amd(0xf03)}},
      {"zen3", {"amd64_fam19h_zen3", amd(0xf03)}},
      {"zen4", {"amd64_fam19h_zen4", amd(0x1f03)}},
      {"generic", {nullptr, {}}},
      {"software", {nullptr, {}}},
  };
  return cases;
}

class ForcedPmu : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* family = std::getenv("HWPROF_FORCED_FAMILY");
    const char* forced = std::getenv("LIBPFM_FORCE_PMU");
    if (family == nullptr || forced == nullptr) GTEST_SKIP() << "run through ctest, which sets LIBPFM_FORCE_PMU and HWPROF_FORCED_FAMILY";
    family_ = family;
    forced_ = forced;
    const auto it = families().find(family_);
    ASSERT_NE(it, families().end()) << "unknown HWPROF_FORCED_FAMILY " << family_;
    case_ = &it->second;
    if (case_->pmu != nullptr) {
      ASSERT_EQ(forced_, case_->pmu) << "ctest entry forces the wrong PMU for " << family_;
    }
    auto groups = load_family_groups(kCountersDir, family_);
    ASSERT_TRUE(groups.ok()) << groups.error().message;
    groups_ = std::move(*groups);
  }

  std::string family_;
  std::string forced_;
  const FamilyCase* case_ = nullptr;
  std::vector<EventGroup> groups_;
};

TEST_F(ForcedPmu, LibpfmSeesOnlyTheForcedPmu) {
  EXPECT_EQ(detected_pmus(), std::vector<std::string>{forced_});
}

TEST_F(ForcedPmu, EveryEventOfEveryGroupResolves) {
  int core = 0;
  int uncore = 0;
  for (const EventGroup& group : groups_) {
    for (const GroupEvent& e : group.events) {
      SCOPED_TRACE(group.file + ":" + std::to_string(e.line) + " " + e.event);
      auto r = resolve_event(e.event);
      if (group.scope == GroupScope::uncore) {
        // A VM, and a forced libpfm4, have no uncore PMUs; a machine that has them resolves.
        if (r.ok()) {
          EXPECT_TRUE(r->uncore);
          EXPECT_FALSE(r->instances.empty());
          EXPECT_FALSE(r->exclude_kernel);
        } else {
          EXPECT_NE(r.error().message.find("not exposed"), std::string::npos) << r.error().message;
        }
        ++uncore;
        continue;
      }
      ASSERT_TRUE(r.ok()) << r.error().message;
      ++core;
      EXPECT_FALSE(r->uncore);
      if (group.scope == GroupScope::software) {
        EXPECT_EQ(r->type, PERF_TYPE_SOFTWARE);
        EXPECT_TRUE(r->software);
      } else if (case_->pmu == nullptr) {
        EXPECT_EQ(r->type, PERF_TYPE_HARDWARE);  // the generic family, from our own table
        EXPECT_EQ(r->pmu, "perf");
      } else {
        EXPECT_EQ(r->type, PERF_TYPE_RAW);
        EXPECT_EQ(r->pmu, forced_);
        EXPECT_EQ(r->canonical.rfind(forced_ + "::", 0), 0u) << r->canonical;
        EXPECT_TRUE(r->exclude_kernel);  // PFM_PLM3: user space only
      }
    }
  }
  EXPECT_GT(core, 0);
  if (case_->pmu != nullptr) {
    EXPECT_GT(uncore, 0) << "every hardware family has an uncore group (dram)";
  }
}

TEST_F(ForcedPmu, KeyEncodings) {
  for (const Encoding& expected : case_->encodings) {
    SCOPED_TRACE(std::string(expected.group) + "/" + expected.id);
    const EventGroup* group = nullptr;
    for (const EventGroup& g : groups_) {
      if (g.name == expected.group) group = &g;
    }
    ASSERT_NE(group, nullptr);
    const GroupEvent* event = nullptr;
    for (const GroupEvent& e : group->events) {
      if (e.id == expected.id) event = &e;
    }
    ASSERT_NE(event, nullptr);
    auto r = resolve_event(event->event);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->type, PERF_TYPE_RAW);
    EXPECT_EQ(r->config, expected.config) << std::hex << "0x" << r->config << " for " << event->event;
  }
}

TEST_F(ForcedPmu, TheBriefsExampleEncodings) {
  if (case_->pmu == nullptr) GTEST_SKIP() << family_ << " has no libpfm4 PMU of its own";
  if (family_.rfind("zen", 0) == 0) {
    auto flops = resolve_event("RETIRED_SSE_AVX_FLOPS:ANY");
    ASSERT_TRUE(flops.ok()) << flops.error().message;
    EXPECT_EQ(flops->config, family_ == "zen4" ? 0x1f03u : 0xf03u);
    EXPECT_EQ(flops->canonical, forced_ + "::RETIRED_SSE_AVX_FLOPS:ANY");
    return;
  }
  for (const auto& [name, config] : std::map<std::string, std::uint64_t>{{"FP_ARITH_INST_RETIRED:SCALAR_DOUBLE", 0x1c7},
                                                                         {"FP_ARITH_INST_RETIRED:256B_PACKED_DOUBLE", 0x10c7},
                                                                         {"FP_ARITH_INST_RETIRED:512B_PACKED_SINGLE", 0x80c7}}) {
    auto r = resolve_event(name);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->type, PERF_TYPE_RAW);
    EXPECT_EQ(r->config, config) << name;
    EXPECT_EQ(r->canonical, forced_ + "::" + name);
  }
}

TEST_F(ForcedPmu, OtherFamiliesEventsSayWhichPmusArePresent) {
  if (case_->pmu == nullptr) GTEST_SKIP() << family_ << " has no libpfm4 PMU of its own";
  const bool amd = family_.rfind("zen", 0) == 0;
  auto r = resolve_event(amd ? "FP_ARITH_INST_RETIRED:SCALAR_DOUBLE" : "RETIRED_SSE_AVX_FLOPS:ANY");
  ASSERT_FALSE(r.ok());
  const std::string& message = r.error().message;
  EXPECT_NE(message.find("detected"), std::string::npos) << message;
  EXPECT_NE(message.find(forced_, message.find("detected")), std::string::npos) << message;
  // Forced to an Intel PMU, libpfm4 still lists the AMD ones, so the message names the PMUs the
  // event needs; forced to an AMD PMU, it lists no Intel core PMU, and the event is unknown.
  if (!amd) {
    EXPECT_NE(message.find("belongs to PMU amd64_fam17h_zen2, amd64_fam19h_zen3, amd64_fam19h_zen4"), std::string::npos) << message;
  }
}

TEST_F(ForcedPmu, GenericAndSoftwareNamesNeedNoLibpfmPmu) {
  // Forced, libpfm4 no longer knows its "perf" PMU; our own table still resolves these.
  for (const std::string other : {"generic", "software"}) {
    auto groups = load_family_groups(kCountersDir, other);
    ASSERT_TRUE(groups.ok()) << groups.error().message;
    for (const EventGroup& group : *groups) {
      for (const GroupEvent& e : group.events) {
        auto r = resolve_event(e.event);
        ASSERT_TRUE(r.ok()) << e.event << ": " << r.error().message;
        EXPECT_EQ(r->pmu, "perf");
        EXPECT_EQ(r->type, other == "software" ? PERF_TYPE_SOFTWARE : PERF_TYPE_HARDWARE);
      }
    }
  }
  auto task = resolve_event("perf::TASK-CLOCK");
  ASSERT_TRUE(task.ok()) << task.error().message;
  EXPECT_EQ(task->unit, "ns");
}

}  // namespace
}  // namespace hwprof::counters
