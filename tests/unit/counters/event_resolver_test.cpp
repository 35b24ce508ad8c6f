// Event-name resolution without hardware: the kernel's generic events, sysfs raw specs against
// a fake sysfs tree, and libpfm4's error paths. The forced-PMU encodings of every family are
// checked by forced_pmu_test.cpp.
#include <utility>

#include <gtest/gtest.h>
#include <linux/perf_event.h>

#include <unistd.h>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "common/stages.hpp"
#include "counters/event_resolver.hpp"
#include "hwprof/counters.hpp"

namespace hwprof::counters {
namespace {

ResolvedEvent resolved(const std::string& name) {
  auto r = resolve_event(name);
  EXPECT_TRUE(r.ok()) << name << ": " << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : ResolvedEvent{};
}

std::string error_of(const std::string& name, const std::string& sysfs = "/sys/bus/event_source/devices") {
  auto r = resolve_event(name, sysfs);
  EXPECT_FALSE(r.ok()) << name << " resolved";
  return r.ok() ? std::string() : r.error().message;
}

// ---- the kernel's generic events -----------------------------------------------------------

TEST(ResolveGeneric, CyclesFromOurOwnTable) {
  const ResolvedEvent cycles = resolved("cycles");
  EXPECT_EQ(cycles.type, PERF_TYPE_HARDWARE);
  EXPECT_EQ(cycles.config, PERF_COUNT_HW_CPU_CYCLES);
  EXPECT_EQ(cycles.pmu, "perf");
  EXPECT_EQ(cycles.canonical, "perf::PERF_COUNT_HW_CPU_CYCLES");
  EXPECT_EQ(cycles.name, "cycles");
  EXPECT_TRUE(cycles.exclude_kernel);
  EXPECT_FALSE(cycles.software);
  EXPECT_FALSE(cycles.uncore);
  EXPECT_TRUE(cycles.instances.empty());
  EXPECT_EQ(cycles.unit, "count");
}

struct GenericCase {
  const char* name;
  std::uint32_t type;
  std::uint64_t config;
  const char* unit;
};

// perf(1)'s names, their aliases, and libpfm4's perf:: spellings.
const GenericCase kGenericCases[] = {
    {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, "count"},
    {"cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "count"},
    {"cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, "count"},
    {"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, "count"},
    {"branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "count"},
    {"branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "count"},
    {"branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, "count"},
    {"bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, "count"},
    {"ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, "count"},
    {"stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, "count"},
    {"stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND, "count"},
    {"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, "ns"},
    {"cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, "ns"},
    {"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "count"},
    {"faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "count"},
    {"minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, "count"},
    {"major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, "count"},
    {"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, "count"},
    {"cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, "count"},
    {"cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, "count"},
    {"migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, "count"},
    {"alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS, "count"},
    {"emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS, "count"},
    {"perf::TASK-CLOCK", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, "ns"},
    {"perf::PAGE-FAULTS", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "count"},
    {"perf::CONTEXT-SWITCHES", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, "count"},
    {"perf::PERF_COUNT_SW_CPU_MIGRATIONS", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, "count"},
    {"perf::cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "count"},
    {"perf::IDLE-CYCLES-BACKEND", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND, "count"},
    {"PERF_COUNT_HW_INSTRUCTIONS", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, "count"},
};

TEST(ResolveGeneric, EveryNameAliasAndSpelling) {
  for (const GenericCase& c : kGenericCases) {
    SCOPED_TRACE(c.name);
    const ResolvedEvent r = resolved(c.name);
    EXPECT_EQ(r.type, c.type);
    EXPECT_EQ(r.config, c.config);
    EXPECT_EQ(r.unit, c.unit);
    EXPECT_EQ(r.name, c.name);
    EXPECT_EQ(r.pmu, "perf");
    EXPECT_EQ(r.software, c.type == PERF_TYPE_SOFTWARE);
  }
}

// Every event carries what it measures from where it was resolved (docs/counters.md, "Event
// kinds"): the kernel's type and config, PAPI's preset, libpfm4's event of a PMU.
TEST(EventKinds, FromTheKernelsEncodingPapisPresetsAndThePmusEvents) {
  const std::pair<const char*, EventKind> generic[] = {
      {"cycles", EventKind::core_cycles},          {"cpu-cycles", EventKind::core_cycles},    {"perf::CYCLES", EventKind::core_cycles},
      {"ref-cycles", EventKind::reference_cycles}, {"instructions", EventKind::instructions}, {"cache-misses", EventKind::memory},
      {"branch-misses", EventKind::other},         {"task-clock", EventKind::task_clock},     {"cpu-clock", EventKind::task_clock},
      {"perf::TASK-CLOCK", EventKind::task_clock}, {"page-faults", EventKind::software},      {"context-switches", EventKind::software},
  };
  for (const auto& [name, kind] : generic) {
    SCOPED_TRACE(name);
    EXPECT_EQ(resolved(name).kind, kind);
    EXPECT_EQ(papi_event_kind(name), kind);
  }
  EXPECT_EQ(papi_event_kind("PAPI_TOT_CYC"), EventKind::core_cycles);
  EXPECT_EQ(papi_event_kind("PAPI_REF_CYC"), EventKind::reference_cycles);
  EXPECT_EQ(papi_event_kind("PAPI_DP_OPS"), EventKind::fp);
  EXPECT_EQ(papi_event_kind("PAPI_L3_TCM"), EventKind::memory);
  EXPECT_EQ(papi_event_kind("PAPI_BR_MSP"), EventKind::other);
  const std::pair<const char*, EventKind> pmu[] = {
      {"skx::CPU_CLK_UNHALTED:THREAD_P", EventKind::core_cycles},
      {"CPU_CLK_UNHALTED.THREAD", EventKind::core_cycles},
      {"CYCLES_NOT_IN_HALT", EventKind::core_cycles},
      {"LS_NOT_HALTED_CYC", EventKind::core_cycles},
      {"skx::CPU_CLK_UNHALTED:REF_TSC", EventKind::reference_cycles},
      {"CPU_CLK_UNHALTED.REF_TSC", EventKind::reference_cycles},
      {"INST_RETIRED:ANY_P", EventKind::instructions},
      {"amd64_fam19h_zen3::RETIRED_INSTRUCTIONS", EventKind::instructions},
      {"skx::FP_ARITH_INST_RETIRED:SCALAR_DOUBLE", EventKind::fp},
      {"amd64_fam19h_zen3::RETIRED_SSE_AVX_FLOPS:ANY", EventKind::fp},
      {"LONGEST_LAT_CACHE:MISS", EventKind::memory},
      {"BR_MISP_RETIRED:ALL_BRANCHES", EventKind::other},
  };
  for (const auto& [name, kind] : pmu) EXPECT_EQ(pmu_event_kind(name, ""), kind) << name;
  EXPECT_EQ(pmu_event_kind("", "uncore_imc_0"), EventKind::memory);
  EXPECT_EQ(pmu_event_kind("", "cpu"), EventKind::other);
  // The names round-trip, and nothing else parses.
  for (EventKind k : {EventKind::other, EventKind::software, EventKind::task_clock, EventKind::wall_time, EventKind::core_cycles,
                      EventKind::reference_cycles, EventKind::instructions, EventKind::fp, EventKind::memory}) {
    EXPECT_EQ(parse_event_kind(event_kind_name(k)), k);
  }
  EXPECT_FALSE(parse_event_kind("cycles").has_value());
  EXPECT_FALSE(is_hardware_kind(EventKind::task_clock));
  EXPECT_FALSE(is_hardware_kind(EventKind::wall_time));
  EXPECT_TRUE(is_hardware_kind(EventKind::other));
}

TEST(ResolveGeneric, PrivilegeLevels) {
  EXPECT_TRUE(resolved("cycles:u").exclude_kernel);
  EXPECT_FALSE(resolved("cycles:k").exclude_kernel);
  EXPECT_FALSE(resolved("cycles:uk").exclude_kernel);
  EXPECT_FALSE(resolved("perf::TASK-CLOCK:ku").exclude_kernel);
  // The scheduler reports these with kernel registers: user-only would always read 0.
  EXPECT_FALSE(resolved("context-switches").exclude_kernel);
  EXPECT_FALSE(resolved("cpu-migrations").exclude_kernel);
  EXPECT_TRUE(resolved("context-switches:u").exclude_kernel);  // asked for, so given
  // Faults taken while the kernel writes into the program's memory are the program's: kernel
  // mode is counted, with a user-only fallback where it is refused (kernel_optional).
  EXPECT_FALSE(resolved("page-faults").exclude_kernel);
  EXPECT_TRUE(resolved("page-faults").kernel_optional);
  EXPECT_TRUE(resolved("page-faults:u").exclude_kernel);
  EXPECT_FALSE(resolved("page-faults:u").kernel_optional);  // asked for, so no fallback needed
  EXPECT_FALSE(resolved("context-switches").kernel_optional);
  EXPECT_TRUE(resolved("task-clock").exclude_kernel);
  EXPECT_EQ(error_of("cycles:x"), "'cycles:x': unknown modifier 'x'; expected :u (user), :k (kernel) or :uk after a generic event");
  EXPECT_EQ(error_of("cycles:uu"), "'cycles:uu': unknown modifier 'uu'; expected :u (user), :k (kernel) or :uk after a generic event");
}

TEST(ResolveGeneric, EveryNameResolvesToADistinctEncoding) {
  std::set<std::pair<std::uint32_t, std::uint64_t>> seen;
  for (const char* name : {"cycles", "instructions", "cache-references", "cache-misses", "branches", "branch-misses", "bus-cycles", "ref-cycles",
                           "stalled-cycles-frontend", "stalled-cycles-backend", "task-clock", "cpu-clock", "page-faults", "minor-faults",
                           "major-faults", "context-switches", "cpu-migrations", "alignment-faults", "emulation-faults"}) {
    const ResolvedEvent r = resolved(name);
    EXPECT_TRUE(seen.insert({r.type, r.config}).second) << name;
    EXPECT_EQ(r.software, r.type == PERF_TYPE_SOFTWARE) << name;
  }
}

TEST(ResolveErrors, EmptyAndUnknownNamesSuggestTheNearest) {
  EXPECT_EQ(error_of(""),
            "empty event name; expected for example cycles, FP_ARITH_INST_RETIRED:SCALAR_DOUBLE or "
            "uncore_imc/event=0x04,umask=0x0f/");
  const std::string typo = error_of("cyclse");
  EXPECT_EQ(typo.rfind("'cyclse': unknown event 'cyclse' (did you mean 'cycles'?); names are the kernel's generic events", 0), 0u) << typo;
  EXPECT_NE(typo.find("detected: "), std::string::npos) << typo;
  const std::string nothing = error_of("NO_SUCH_EVENT_ANYWHERE");
  EXPECT_NE(nothing.find("unknown event 'NO_SUCH_EVENT_ANYWHERE'"), std::string::npos) << nothing;
}

// ---- libpfm4 ------------------------------------------------------------------------------

TEST(ResolveLibpfm, DetectsAtLeastTheKernelPmu) {
  const auto pmus = detected_pmus();
  EXPECT_FALSE(pmus.empty());
}

// A core PMU that libpfm4 knows but this machine does not have.
std::string absent_core_pmu() {
  const auto present = detected_pmus();
  for (const char* pmu : {"icx", "skx", "amd64_fam19h_zen3", "spr"}) {
    if (std::find(present.begin(), present.end(), pmu) == present.end()) return pmu;
  }
  return {};
}

// A sysfs devices folder that lists a core PMU ("cpu") or none, as a VM without PMU
// passthrough does: which of the two decides what an event of an absent PMU is told.
class SysfsDevices {
 public:
  explicit SysfsDevices(bool core_pmu)
      : root_(std::filesystem::temp_directory_path() / ("hwprof-devices-" + std::to_string(::getpid()) + (core_pmu ? "-cpu" : "-none"))) {
    std::filesystem::create_directories(root_ / "software");
    if (core_pmu) std::filesystem::create_directories(root_ / "cpu");
  }
  ~SysfsDevices() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  SysfsDevices(const SysfsDevices&) = delete;
  SysfsDevices& operator=(const SysfsDevices&) = delete;
  std::string path() const { return root_.string(); }

 private:
  std::filesystem::path root_;
};

TEST(ResolveLibpfm, APmuThisCpuLacksIsNamedWithThePresentOnes) {
  const std::string pmu = absent_core_pmu();
  ASSERT_FALSE(pmu.empty());
  const std::string name = pmu + "::" + (pmu.rfind("amd64", 0) == 0 ? "RETIRED_INSTRUCTIONS" : "INST_RETIRED:ANY_P");
  const SysfsDevices with_cpu(true);
  const std::string message = error_of(name, with_cpu.path());
  EXPECT_NE(message.find("needs PMU '" + pmu + "'"), std::string::npos) << message;
  EXPECT_NE(message.find("which this CPU does not have; detected PMUs: "), std::string::npos) << message;
}

TEST(ResolveLibpfm, AnEventOfOtherCpusSaysWhichPmusHaveIt) {
  const auto present = detected_pmus();
  if (std::find(present.begin(), present.end(), "amd64_fam19h_zen3") != present.end()) GTEST_SKIP() << "this is a Zen 3";
  if (std::find(present.begin(), present.end(), "amd64_fam19h_zen4") != present.end()) GTEST_SKIP() << "this is a Zen 4";
  if (std::find(present.begin(), present.end(), "amd64_fam17h_zen2") != present.end()) GTEST_SKIP() << "this is a Zen 2";
  const SysfsDevices with_cpu(true);
  const std::string message = error_of("RETIRED_SSE_AVX_FLOPS:ANY", with_cpu.path());
  EXPECT_NE(message.find("belongs to PMU amd64_fam17h_zen2, amd64_fam19h_zen3, amd64_fam19h_zen4, none of which this CPU has"), std::string::npos)
      << message;
}

// Seen on a Sapphire Rapids guest without PMU passthrough: libpfm4 activated no core PMU, and
// the family's own group was told to "use the event group of this CPU's family".
TEST(ResolveLibpfm, WithoutAHardwarePmuAnEventOfAbsentPmusSaysSoNotAnotherGroup) {
  const SysfsDevices none(false);
  for (const std::string& name :
       std::vector<std::string>{"CPU_CLK_UNHALTED:THREAD_P", "RETIRED_SSE_AVX_FLOPS:ANY", absent_core_pmu() + "::INST_RETIRED:ANY_P"}) {
    auto r = resolve_event(name, none.path());
    if (r.ok()) continue;  // this machine's libpfm4 has the PMU active (forced, or a host with one)
    const std::string& message = r.error().message;
    EXPECT_EQ(message.rfind("'" + name + "': this machine exposes no hardware PMU", 0), 0u) << message;
    EXPECT_NE(message.find("libpfm4 activated none of the PMUs that have this event ("), std::string::npos) << message;
    EXPECT_EQ(message.find("event group of this CPU's family"), std::string::npos) << message;
  }
}

TEST(ResolveLibpfm, UnknownPmuPrefix) {
  const std::string message = error_of("nosuchpmu::CYCLES");
  EXPECT_EQ(message.rfind("'nosuchpmu::CYCLES': libpfm4 knows no PMU 'nosuchpmu'", 0), 0u) << message;
}

TEST(ResolveLibpfm, AnUncorePmuThatIsNotExposed) {
  const auto present = detected_pmus();
  if (std::find(present.begin(), present.end(), "skx_unc_imc0") != present.end()) GTEST_SKIP() << "this machine has it";
  const std::string message = error_of("skx_unc_imc0::UNC_M_CAS_COUNT:RD", "/nonexistent-sysfs");
  EXPECT_NE(message.find("uncore PMU 'skx_unc_imc0'"), std::string::npos) << message;
  EXPECT_NE(message.find("is not exposed on this machine"), std::string::npos) << message;
  EXPECT_NE(message.find("/nonexistent-sysfs/uncore_imc_0"), std::string::npos) << message;
}

// ---- sysfs raw specs, against a fake /sys/bus/event_source/devices ---------------------------

class FakeSysfs : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("hwprof-sysfs-" + std::to_string(::getpid()) + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    for (const auto& [name, type] : {std::pair{"uncore_imc_0", 15}, {"uncore_imc_1", 16}, {"uncore_imc_2", 17}, {"uncore_imc_10", 25}}) {
      pmu(name, type, true, {{"event", "config:0-7"}, {"umask", "config:8-15"}});
    }
    write("uncore_imc_0/events/cas_count_read", "event=0x04,umask=0x03\n");
    write("uncore_imc_0/events/cas_count_read.scale", "6.103515625e-5\n");
    pmu("amd_df", 12, true, {{"event", "config:0-7,32-35,59-60"}, {"umask", "config:8-15"}});
    pmu("amd_umc_0", 20, true, {{"event", "config:0-7"}, {"rdwrmask", "config:8-9"}});
    pmu("amd_umc_1", 21, true, {{"event", "config:0-7"}, {"rdwrmask", "config:8-9"}});
    pmu("cpu", 4, false, {{"event", "config:0-7"}, {"umask", "config:8-15"}, {"edge", "config:18"}, {"ldlat", "config1:0-15"}});
    pmu("broken", 30, true, {{"event", "configX:0-7"}});
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }

  void write(const std::string& relative, const std::string& text) {
    std::filesystem::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative) << text;
  }
  void pmu(const std::string& name, int type, bool uncore, const std::vector<std::pair<std::string, std::string>>& formats) {
    write(name + "/type", std::to_string(type) + "\n");
    if (uncore) write(name + "/cpumask", "0\n");
    for (const auto& [term, format] : formats) write(name + "/format/" + term, format + "\n");
  }
  ResolvedEvent raw(const std::string& spec) {
    auto r = resolve_event(spec, root_.string());
    EXPECT_TRUE(r.ok()) << spec << ": " << (r.ok() ? "" : r.error().message);
    return r.ok() ? *r : ResolvedEvent{};
  }
  std::string raw_error(const std::string& spec) { return error_of(spec, root_.string()); }

  std::filesystem::path root_;
};

TEST_F(FakeSysfs, APmuNameWithoutSuffixCoversEveryInstanceInNumericOrder) {
  const ResolvedEvent r = raw("uncore_imc/event=0x04,umask=0x0f/");
  EXPECT_EQ(r.config, 0x0f04u);
  EXPECT_EQ(r.pmu, "uncore_imc");
  EXPECT_TRUE(r.uncore);
  EXPECT_FALSE(r.exclude_kernel);  // uncore drivers refuse exclude bits
  EXPECT_FALSE(r.software);
  ASSERT_EQ(r.instances.size(), 4u);
  EXPECT_EQ(r.instances[0].name, "uncore_imc_0");
  EXPECT_EQ(r.instances[1].name, "uncore_imc_1");
  EXPECT_EQ(r.instances[2].name, "uncore_imc_2");
  EXPECT_EQ(r.instances[3].name, "uncore_imc_10");
  EXPECT_EQ(r.instances[3].type, 25u);
  EXPECT_EQ(r.type, 15u);
  EXPECT_EQ(r.canonical, "uncore_imc/event=0x04,umask=0x0f/");
}

TEST_F(FakeSysfs, OneInstanceByItsFullName) {
  const ResolvedEvent r = raw("uncore_imc_1/event=0x05,umask=0xcf/");
  EXPECT_EQ(r.pmu, "uncore_imc_1");
  EXPECT_EQ(r.type, 16u);
  EXPECT_EQ(r.config, 0xcf05u);
  ASSERT_EQ(r.instances.size(), 1u);
  EXPECT_EQ(r.instances[0].name, "uncore_imc_1");
}

TEST_F(FakeSysfs, NamedEventsFromTheEventsFolder) {
  EXPECT_EQ(raw("uncore_imc_0/cas_count_read/").config, 0x0304u);
}

TEST_F(FakeSysfs, FieldsSpreadOverSeveralBitRanges) {
  // amd_df: event 0x1C7 = low 8 bits in config 0-7, the next 4 in config 32-35.
  const ResolvedEvent r = raw("amd_df/event=0x1c7,umask=0x38/");
  EXPECT_EQ(r.config, 0x1000038c7ULL);
  EXPECT_EQ(r.type, 12u);
  EXPECT_TRUE(r.uncore);
  EXPECT_EQ(raw("amd_df/event=0x3107/").config, (0x07ULL) | (0x1ULL << 32) | (0x3ULL << 59));
  EXPECT_EQ(raw("amd_umc/event=0x0a,rdwrmask=0x2/").config, 0x20au);
  EXPECT_EQ(raw("amd_umc/event=0x0a,rdwrmask=0x2/").instances.size(), 2u);
}

TEST_F(FakeSysfs, CorePmuRawEventsAreUserOnlyUnlessAsked) {
  const ResolvedEvent r = raw("cpu/event=0x3c,edge,ldlat=3/");
  EXPECT_EQ(r.config, 0x4003cu);
  EXPECT_EQ(r.config1, 3u);
  EXPECT_FALSE(r.uncore);
  EXPECT_TRUE(r.instances.empty());
  EXPECT_TRUE(r.exclude_kernel);
  EXPECT_FALSE(raw("cpu/event=0x3c/k").exclude_kernel);
  EXPECT_FALSE(raw("cpu/event=0x3c/uk").exclude_kernel);
  EXPECT_TRUE(raw("cpu/event=0x3c/u").exclude_kernel);
}

TEST_F(FakeSysfs, ErrorsSayWhatIsWrong) {
  EXPECT_EQ(raw_error("uncore_cha/event=0x01/"),
            "'uncore_cha/event=0x01/': uncore PMU 'uncore_cha' is not exposed by this kernel: there is no " + (root_ / "uncore_cha").string() +
                " nor uncore_cha_<N> (a VM without a virtual PMU, or the uncore driver is not loaded: modprobe intel_uncore or "
                "amd_uncore)");
  EXPECT_EQ(raw_error("uncore_imc/evnt=0x04/"),
            "'uncore_imc/evnt=0x04/': PMU 'uncore_imc_0' has no format term or event 'evnt' (did you mean 'event'?); "
            "expected one of event, umask, cas_count_read");
  EXPECT_EQ(raw_error("amd_umc/event=0x0a,rdwrmask=0x4/"),
            "'amd_umc/event=0x0a,rdwrmask=0x4/': the value 0x4 of 'rdwrmask' does not fit its bits (config:8-9)");
  EXPECT_EQ(raw_error("uncore_imc/event=zz/"), "'uncore_imc/event=zz/': the value of 'event' is not a number: 'zz'");
  EXPECT_EQ(raw_error("uncore_imc/event=0x04"),
            "'uncore_imc/event=0x04': expected 'pmu/term=value,.../', for example uncore_imc/event=0x04,umask=0x0f/");
  EXPECT_EQ(raw_error("/event=1/"), "'/event=1/': expected 'pmu/term=value,.../', for example uncore_imc/event=0x04,umask=0x0f/");
  EXPECT_EQ(raw_error("cpu/event=0x3c/x"), "'cpu/event=0x3c/x': unknown modifier 'x' after the last '/'; expected u, k or uk");
  EXPECT_EQ(raw_error("../cpu/event=1/"), "'../cpu/event=1/': the PMU name '..' has characters no PMU name has");
  EXPECT_EQ(raw_error("cpu/../type/"), "'cpu/../type/': the term '../type' has characters no format or event name has");
  EXPECT_EQ(raw_error("broken/event=1/"), "'broken/event=1/': cannot understand the sysfs format of 'event': 'configX:0-7'");
}

TEST(ResolveRaw, TheRealSysfsOfAVmHasNoUncorePmus) {
  std::error_code ec;
  if (std::filesystem::exists("/sys/bus/event_source/devices/uncore_imc_0", ec)) GTEST_SKIP() << "this machine has IMC PMUs";
  const std::string message = error_of("uncore_imc/event=0x04,umask=0x0f/");
  EXPECT_NE(message.find("uncore PMU 'uncore_imc' is not exposed by this kernel"), std::string::npos) << message;
}

}  // namespace
}  // namespace hwprof::counters

namespace hwprof {
namespace {

TEST(SplitEventList, CommasInsideRawTermsAndBracesSeparateNothing) {
  using V = std::vector<std::string>;
  EXPECT_EQ(split_event_list("cycles,instructions"), (V{"cycles", "instructions"}));
  EXPECT_EQ(split_event_list("uncore_imc/event=0x04,umask=0x0f/"), (V{"uncore_imc/event=0x04,umask=0x0f/"}));
  EXPECT_EQ(split_event_list("cpu/event=0x3c,umask=0x00/,task-clock"), (V{"cpu/event=0x3c,umask=0x00/", "task-clock"}));
  EXPECT_EQ(split_event_list("{cycles,instructions},page-faults"), (V{"{cycles,instructions}", "page-faults"}));
  EXPECT_EQ(split_event_list(" cycles , ,,instructions "), (V{"cycles", "instructions"}));
  EXPECT_EQ(split_event_list(""), V{});
  // An unclosed raw event keeps the rest whole rather than inventing events from its terms.
  EXPECT_EQ(split_event_list("cpu/event=0x3c,umask=0"), (V{"cpu/event=0x3c,umask=0"}));
}

}  // namespace
}  // namespace hwprof
