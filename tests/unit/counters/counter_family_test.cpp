// The counter family of a CPU, from the match files of counters/<family>/ (counters/README.md,
// "Which CPUs a family fits"): the format's errors, the shipped files on every boundary of their
// model ranges and on the recorded machines, and data that is missing, broken or ambiguous.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "counters/cpu_identity.hpp"
#include "counters/cpu_match.hpp"
#include "hwprof/cpu.hpp"
#include "hwprof/event_group.hpp"
#include "machine_fixture.hpp"
#include "scratch_dir.hpp"

namespace hwprof {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kShippedCountersDir = HWPROF_COUNTERS_DIR;

CpuIdentity cpu_of(const std::string& vendor, int family, int model) {
  CpuIdentity cpu;
  cpu.vendor = vendor;
  cpu.family = family;
  cpu.model = model;
  return cpu;
}

std::string family_name(const CpuIdentity& cpu, const std::vector<std::string>& dirs = {kShippedCountersDir}) {
  auto family = counter_family(cpu, dirs);
  EXPECT_TRUE(family.ok()) << family.error().message;
  return family.ok() ? family->name : "(error)";
}

// ---- the format ---------------------------------------------------------------------------

TEST(CpuMatchFormat, ReadsRulesAndNotes) {
  const char* text =
      "# a comment\r\n"
      "vendor AuthenticAMD family 0x19 models 0x00-0x0f, 0x20-0x5F\r\n"
      "\n"
      "  note   one  \n"
      "note two\n"
      "vendor HygonGenuine family 0x18 models 0x0\n";
  auto match = counters::parse_cpu_match(text, "zen9/cpus.match");
  ASSERT_TRUE(match.ok()) << match.error().message;
  EXPECT_EQ(match->file, "zen9/cpus.match");
  EXPECT_EQ(match->note, "one two");
  ASSERT_EQ(match->rules.size(), 2u);
  const counters::CpuMatchRule& zen = match->rules[0];
  EXPECT_EQ(zen.vendor, "AuthenticAMD");
  EXPECT_EQ(zen.family, 0x19);
  EXPECT_EQ(zen.line, 2);
  ASSERT_EQ(zen.models.size(), 2u);
  EXPECT_EQ(zen.models[0].first, 0x00);
  EXPECT_EQ(zen.models[0].last, 0x0F);
  EXPECT_EQ(zen.models[1].first, 0x20);
  EXPECT_EQ(zen.models[1].last, 0x5F);
  EXPECT_EQ(match->rules[1].line, 6);
  EXPECT_EQ(match->rules[1].models[0].last, 0);
  EXPECT_EQ(counters::rule_naming(*match, cpu_of("AuthenticAMD", 0x19, 0x0F)), &match->rules[0]);
  EXPECT_EQ(counters::rule_naming(*match, cpu_of("AuthenticAMD", 0x19, 0x10)), nullptr);
  EXPECT_EQ(counters::rule_naming(*match, cpu_of("GenuineIntel", 0x19, 0x00)), nullptr);
  EXPECT_EQ(counters::rule_naming(*match, cpu_of("HygonGenuine", 0x18, 0x00)), &match->rules[1]);
}

TEST(CpuMatchFormat, ErrorsNameTheFileTheLineAndTheProblem) {
  const std::string shape = "'vendor VENDOR family 0xF models 0xM,0xM-0xN,...'";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"vendor GenuineIntel family 0x6", ":1: a vendor line with 4 words; expected " + shape},
      {"vendor GenuineIntle family 0x6 models 0x55",
       ":1: unknown vendor 'GenuineIntle' (did you mean 'GenuineIntel'?); expected one of GenuineIntel, AuthenticAMD, HygonGenuine, "
       "CentaurHauls (CPUID leaf 0, as /proc/cpuinfo's vendor_id)"},
      {"vendor AuthenticAMD family 25 models 0x10",
       ":1: family '25' has no 0x; expected hexadecimal with 0x (0x25 if that was hexadecimal, 0x19 if it was decimal, as "
       "/proc/cpuinfo prints it)"},
      {"vendor AuthenticAMD family 1A models 0x10", ":1: family '1A' has no 0x; expected hexadecimal with 0x (0x1A if that was hexadecimal)"},
      {"vendor AuthenticAMD family 0x1G models 0x10", ":1: family '0x1G' is not a number; expected hexadecimal with 0x, such as 0x19"},
      {"vendor AuthenticAMD family 0x-1 models 0x10", ":1: family '0x-1' is not a number; expected hexadecimal with 0x, such as 0x19"},
      {"vendor AuthenticAMD family 0x10F models 0x10", ":1: family '0x10F' is above 0x10E, the largest CPUID reports"},
      {"vendor AuthenticAMD family 0x19 models 0x10,0x100", ":1: model '0x100' is above 0xFF, the largest CPUID reports"},
      {"vendor AuthenticAMD family 0x19 models 0x4F-0x30",
       ":1: model range '0x4F-0x30' ends below its start; expected first-last with first <= last"},
      {"vendor AuthenticAMD family 0x19 models 0x30 - 0x4F",
       ":1: model range '-' lacks a number on one side; expected first-last without spaces, such as 0x30-0x4F"},
      {"vendor AuthenticAMD family 0x19 models ,", ":1: no models after 'models'; expected " + shape},
      {"vendor AuthenticAMD fam 0x19 models 0x10", ":1: expected 'family' after the vendor, got 'fam'; expected " + shape},
      {"vendor AuthenticAMD family 0x19 model 0x10", ":1: expected 'models' after the family, got 'model'; expected " + shape},
      {"vendr AuthenticAMD family 0x19 models 0x10", ":1: unknown keyword 'vendr' (did you mean 'vendor'?); expected " + shape + " or 'note <text>'"},
      {"vendor AuthenticAMD family 0x19 models 0x10\nnote", ":2: a note without text; expected 'note <what to know about the family's groups>'"},
      {"# only\n\nvendor AuthenticAMD family 0x19 models 0x10,0xZZ", ":3: model '0xZZ' is not a number; expected hexadecimal with 0x, such as 0x19"},
      {"# only a comment\nnote and a note\n", ": no vendor line; a match file names the CPUs its family fits, one line each, " + shape},
      {std::string("vendor AuthenticAMD family 0x19 models 0x10\n") + '\0', ":2: a NUL byte; a match file is text (a binary file, or damaged?)"},
  };
  for (const auto& [text, message] : cases) {
    auto match = counters::parse_cpu_match(text, "zen9/cpus.match");
    ASSERT_FALSE(match.ok()) << text;
    EXPECT_EQ(match.error().message, "zen9/cpus.match" + message) << text;
  }
}

TEST(CpuMatchFormat, SharedModelsOfTwoRules) {
  auto a = counters::parse_cpu_match("vendor AuthenticAMD family 0x19 models 0x00-0x0F,0x60-0x6F\n", "a");
  auto b = counters::parse_cpu_match("vendor AuthenticAMD family 0x19 models 0x10-0x5F,0x68\n", "b");
  auto c = counters::parse_cpu_match("vendor GenuineIntel family 0x19 models 0x00-0xFF\n", "c");
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(counters::first_shared_model(a->rules[0], b->rules[0]), 0x68);
  EXPECT_EQ(counters::first_shared_model(a->rules[0], c->rules[0]), std::nullopt) << "another vendor";
  EXPECT_EQ(counters::cpuid_hex(0x1A), "0x1A");
  EXPECT_EQ(counters::cpuid_hex(0), "0x0");
}

// ---- the shipped match files ---------------------------------------------------------------

// Every boundary of every model range, as the C++ table the match files replaced answered it:
// the first and last model of each range, and the models just outside.
TEST(ShippedCpuMatch, EveryRangeBoundaryGivesTheFamilyItGaveBefore) {
  struct Case {
    const char* vendor;
    int family;
    int model;
    const char* expected;
  };
  const Case cases[] = {
      // Intel family 6: single models
      {"GenuineIntel", 0x6, 0x00, "generic"},
      {"GenuineIntel", 0x6, 0x54, "generic"},
      {"GenuineIntel", 0x6, 0x55, "skylake-sp"},
      {"GenuineIntel", 0x6, 0x56, "generic"},
      {"GenuineIntel", 0x6, 0x69, "generic"},
      {"GenuineIntel", 0x6, 0x6A, "icelake-sp"},
      {"GenuineIntel", 0x6, 0x6B, "generic"},
      {"GenuineIntel", 0x6, 0x6C, "icelake-sp"},
      {"GenuineIntel", 0x6, 0x6D, "generic"},
      {"GenuineIntel", 0x6, 0x8E, "generic"},
      {"GenuineIntel", 0x6, 0x8F, "sapphire-rapids"},
      {"GenuineIntel", 0x6, 0x90, "generic"},
      {"GenuineIntel", 0x6, 0xAC, "generic"},
      {"GenuineIntel", 0x6, 0xAD, "granite-rapids"},
      {"GenuineIntel", 0x6, 0xAE, "granite-rapids"},
      {"GenuineIntel", 0x6, 0xAF, "generic"},
      {"GenuineIntel", 0x6, 0xCE, "generic"},
      {"GenuineIntel", 0x6, 0xCF, "sapphire-rapids"},
      {"GenuineIntel", 0x6, 0xD0, "generic"},
      {"GenuineIntel", 0x6, 0xFF, "generic"},
      // Intel's models under other families, AMD's families under Intel, and the reverse
      {"GenuineIntel", 0x5, 0x55, "generic"},
      {"GenuineIntel", 0x7, 0x55, "generic"},
      {"GenuineIntel", 0xF, 0x55, "generic"},
      {"GenuineIntel", 0x19, 0x10, "generic"},
      {"GenuineIntel", 0x1A, 0x02, "generic"},
      {"AuthenticAMD", 0x6, 0x55, "generic"},
      // AMD family 0x17: 30-4F, 60-7F, 90-91, A0-AF
      {"AuthenticAMD", 0x17, 0x00, "generic"},
      {"AuthenticAMD", 0x17, 0x2F, "generic"},
      {"AuthenticAMD", 0x17, 0x30, "zen2"},
      {"AuthenticAMD", 0x17, 0x4F, "zen2"},
      {"AuthenticAMD", 0x17, 0x50, "generic"},
      {"AuthenticAMD", 0x17, 0x5F, "generic"},
      {"AuthenticAMD", 0x17, 0x60, "zen2"},
      {"AuthenticAMD", 0x17, 0x7F, "zen2"},
      {"AuthenticAMD", 0x17, 0x80, "generic"},
      {"AuthenticAMD", 0x17, 0x8F, "generic"},
      {"AuthenticAMD", 0x17, 0x90, "zen2"},
      {"AuthenticAMD", 0x17, 0x91, "zen2"},
      {"AuthenticAMD", 0x17, 0x92, "generic"},
      {"AuthenticAMD", 0x17, 0x9F, "generic"},
      {"AuthenticAMD", 0x17, 0xA0, "zen2"},
      {"AuthenticAMD", 0x17, 0xAF, "zen2"},
      {"AuthenticAMD", 0x17, 0xB0, "generic"},
      {"AuthenticAMD", 0x17, 0xFF, "generic"},
      // AMD families without tables
      {"AuthenticAMD", 0x16, 0x30, "generic"},
      {"AuthenticAMD", 0x18, 0x00, "generic"},
      {"AuthenticAMD", 0x1B, 0x00, "generic"},
      // AMD family 0x19: Zen 3 00-0F and 20-5F, Zen 4 10-1F and 60-AF
      {"AuthenticAMD", 0x19, 0x00, "zen3"},
      {"AuthenticAMD", 0x19, 0x0F, "zen3"},
      {"AuthenticAMD", 0x19, 0x10, "zen4"},
      {"AuthenticAMD", 0x19, 0x1F, "zen4"},
      {"AuthenticAMD", 0x19, 0x20, "zen3"},
      {"AuthenticAMD", 0x19, 0x5F, "zen3"},
      {"AuthenticAMD", 0x19, 0x60, "zen4"},
      {"AuthenticAMD", 0x19, 0xAF, "zen4"},
      {"AuthenticAMD", 0x19, 0xB0, "generic"},
      {"AuthenticAMD", 0x19, 0xFF, "generic"},
      // AMD family 0x1A: 00-2F, 40-4F, 60-7F
      {"AuthenticAMD", 0x1A, 0x00, "zen5"},
      {"AuthenticAMD", 0x1A, 0x2F, "zen5"},
      {"AuthenticAMD", 0x1A, 0x30, "generic"},
      {"AuthenticAMD", 0x1A, 0x3F, "generic"},
      {"AuthenticAMD", 0x1A, 0x40, "zen5"},
      {"AuthenticAMD", 0x1A, 0x4F, "zen5"},
      {"AuthenticAMD", 0x1A, 0x50, "generic"},
      {"AuthenticAMD", 0x1A, 0x5F, "generic"},
      {"AuthenticAMD", 0x1A, 0x60, "zen5"},
      {"AuthenticAMD", 0x1A, 0x7F, "zen5"},
      {"AuthenticAMD", 0x1A, 0x80, "generic"},
      {"AuthenticAMD", 0x1A, 0xFF, "generic"},
      // Other vendors, and no CPUID at all
      {"HygonGenuine", 0x18, 0x01, "generic"},
      {"HygonGenuine", 0x17, 0x31, "generic"},
      {"", 0, 0, "generic"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(family_name(cpu_of(c.vendor, c.family, c.model)), c.expected)
        << c.vendor << " family " << counters::cpuid_hex(c.family) << " model " << counters::cpuid_hex(c.model);
  }
}

TEST(ShippedCpuMatch, NamedProcessorsGetTheirFamilies) {
  struct Case {
    const char* vendor;
    int family;
    int model;
    const char* expected;
  };
  const Case cases[] = {
      {"GenuineIntel", 6, 0x55, "skylake-sp"},       // Skylake-SP, Cascade Lake, Cooper Lake
      {"GenuineIntel", 6, 0x6A, "icelake-sp"},       // Ice Lake-SP
      {"GenuineIntel", 6, 0x6C, "icelake-sp"},       // Ice Lake-D
      {"GenuineIntel", 6, 0x8F, "sapphire-rapids"},  // Sapphire Rapids
      {"GenuineIntel", 6, 0xCF, "sapphire-rapids"},  // Emerald Rapids
      {"GenuineIntel", 6, 0x5E, "generic"},          // Skylake client
      {"GenuineIntel", 6, 0xAD, "granite-rapids"},   // Granite Rapids-SP/AP
      {"GenuineIntel", 6, 0xAE, "granite-rapids"},   // Granite Rapids-D
      {"GenuineIntel", 6, 0xAF, "generic"},          // Sierra Forest: no group set
      {"AuthenticAMD", 0x17, 0x01, "generic"},       // Zen 1 (Naples)
      {"AuthenticAMD", 0x17, 0x31, "zen2"},          // Rome
      {"AuthenticAMD", 0x17, 0x60, "zen2"},          // Renoir
      {"AuthenticAMD", 0x17, 0x71, "zen2"},          // Matisse
      {"AuthenticAMD", 0x19, 0x01, "zen3"},          // Milan
      {"AuthenticAMD", 0x19, 0x21, "zen3"},          // Vermeer
      {"AuthenticAMD", 0x19, 0x50, "zen3"},          // Cezanne
      {"AuthenticAMD", 0x19, 0x11, "zen4"},          // Genoa
      {"AuthenticAMD", 0x19, 0x61, "zen4"},          // Raphael
      {"AuthenticAMD", 0x19, 0xA0, "zen4"},          // Bergamo
      {"AuthenticAMD", 0x1A, 0x02, "zen5"},          // Turin (this project's VM: tests/fixtures/machines/zen5-vm-nosysfs)
      {"AuthenticAMD", 0x1A, 0x11, "zen5"},          // Turin Dense
      {"AuthenticAMD", 0x1A, 0x24, "zen5"},          // Strix Point
      {"AuthenticAMD", 0x1A, 0x44, "zen5"},          // Granite Ridge
      {"AuthenticAMD", 0x1A, 0x70, "zen5"},          // Strix Halo
      {"AuthenticAMD", 0x1A, 0x50, "generic"},       // Zen 6: no group set yet
  };
  for (const Case& c : cases) {
    EXPECT_EQ(family_name(cpu_of(c.vendor, c.family, c.model)), c.expected) << c.vendor << " family " << c.family << " model " << c.model;
  }
}

// Every recorded or synthetic machine of tests/fixtures/machines, from its own CPUID answers.
TEST(ShippedCpuMatch, EachMachineFixtureGetsItsFamily) {
  const std::map<std::string, std::string> expected = {{"zen5-vm-nosysfs", "zen5"},           // AMD 0x1A model 0x02: Turin
                                                       {"emr-vm-sysfs", "sapphire-rapids"},   // Intel 6 model 0xCF: Emerald Rapids
                                                       {"spr-xeon-8480", "sapphire-rapids"},  // Intel 6 model 0x8F
                                                       {"adl-i9-12900k", "generic"},          // Intel 6 model 0x97: a client part
                                                       {"clx-2s-gold6248", "skylake-sp"}};    // Intel 6 model 0x55 stepping 7
  std::set<std::string> seen;
  for (const auto& entry : fs::directory_iterator(fs::path(HWPROF_FIXTURES_DIR) / "machines")) {
    if (!fs::exists(entry.path() / "cpuid.txt")) continue;
    const std::string name = entry.path().filename().string();
    seen.insert(name);
    const auto it = expected.find(name);
    if (it == expected.end()) {
      ADD_FAILURE() << name << ": a machine fixture without an expected family here";
      continue;
    }
    const test::MachineFixture machine(name);
    const CpuIdentity cpu = counters::identity_from_cpuid(machine.cpuid());
    auto family = counter_family(cpu, {kShippedCountersDir});
    ASSERT_TRUE(family.ok()) << name << ": " << family.error().message;
    EXPECT_EQ(family->name, it->second) << name << ": " << cpu.vendor << " family " << cpu.family << " model " << cpu.model;
    EXPECT_EQ(family->match_file.empty(), it->second == "generic") << name;
  }
  EXPECT_EQ(seen.size(), expected.size()) << "every expected fixture is in tests/fixtures/machines";
}

TEST(ShippedCpuMatch, NotesSayWhatTheGroupsLack) {
  auto family_of = [](const CpuIdentity& cpu) {
    auto family = counter_family(cpu, {kShippedCountersDir});
    EXPECT_TRUE(family.ok()) << family.error().message;
    return family.ok() ? *family : CounterFamily{};
  };
  const CounterFamily zen5 = family_of(cpu_of("AuthenticAMD", 0x1A, 0x02));
  EXPECT_EQ(zen5.note,
            "Zen 5: libpfm4 4.13 has no Zen 5 PMU (its FP events need libpfm4 >= 4.14 or raw encodings); the groups use raw "
            "encodings on the kernel's cpu, amd_umc and amd_l3 PMUs, from Linux perf's amdzen5 event list");
  EXPECT_EQ(zen5.match_file, kShippedCountersDir + "/zen5/cpus.match");
  EXPECT_EQ(family_of(cpu_of("GenuineIntel", 6, 0xAD)).note,
            "Granite Rapids: libpfm4 4.13 has no Granite Rapids PMU; the groups use raw encodings on the kernel's cpu and "
            "uncore_imc PMUs, from Intel perfmon's GNR event lists");
  EXPECT_EQ(family_of(cpu_of("GenuineIntel", 6, 0x97)).note,
            "no FLOP, DRAM or LLC event tables for this CPU: only the kernel's generic events (cycles, instructions, caches, "
            "branches) and software events; a group file with raw encodings (counters/README.md) can add more");
  for (const auto& [vendor, family, model] : std::vector<std::tuple<const char*, int, int>>{{"GenuineIntel", 6, 0x55},
                                                                                            {"GenuineIntel", 6, 0x6A},
                                                                                            {"GenuineIntel", 6, 0x8F},
                                                                                            {"AuthenticAMD", 0x17, 0x31},
                                                                                            {"AuthenticAMD", 0x19, 0x01},
                                                                                            {"AuthenticAMD", 0x19, 0x11}}) {
    EXPECT_EQ(family_of(cpu_of(vendor, family, model)).note, "") << vendor << " " << family << " " << model;
  }
}

// The families a group's FAMILIES may name are the folders with a match file, and generic and
// software, which have none (scripts/counter-families.py checks the folders without building).
TEST(ShippedCpuMatch, EveryFamilyButGenericAndSoftwareHasAMatchFile) {
  for (const std::string& family : known_group_families()) {
    const fs::path file = fs::path(kShippedCountersDir) / family / std::string(counters::kCpuMatchFileName);
    if (family == "generic" || family == "software") {
      EXPECT_FALSE(fs::exists(file)) << file;
      continue;
    }
    auto match = counters::load_cpu_match(file.string());
    EXPECT_TRUE(match.ok()) << (match.ok() ? "" : match.error().message);
  }
}

// ---- data that is missing, broken or ambiguous ------------------------------------------------

class CounterFamilyData : public test::ScratchDirTest {
 protected:
  Result<CounterFamily> family_in(const std::vector<std::string>& dirs, const CpuIdentity& cpu = cpu_of("AuthenticAMD", 0x1A, 0x02)) {
    return counter_family(cpu, dirs);
  }
};

TEST_F(CounterFamilyData, WithoutTheDataFolderTheFamilyIsUnknownNotGeneric) {
  const std::string nowhere = path("nowhere");
  const std::string missing_message =
      " in any counters folder looked in (" + nowhere +
      "): hwprof's counters/ data is missing (installed as share/hwprof/counters under the prefix; $HWPROF_COUNTERS_PATH names another folder)";
  auto missing = family_in({nowhere});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "no <family>/cpus.match" + missing_message);
  // A data folder without families (an empty one, or one of the user's own groups) is no better.
  put("empty/README.md", "no families here\n");
  fs::create_directories(path("empty/zen5"));
  auto empty = family_in({path("empty")});
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.error().message, StartsWith("no <family>/cpus.match in any counters folder looked in (" + path("empty") + ")"));
  auto no_folder = family_in({});
  ASSERT_FALSE(no_folder.ok());
  EXPECT_THAT(no_folder.error().message, HasSubstr("(no folder)"));
}

TEST_F(CounterFamilyData, AMalformedMatchFileIsAnErrorForEveryCpu) {
  const std::string file =
      put("mine/zen5/cpus.match", "vendor AuthenticAMD family 0x1A models 0x00-0x2F\nvendor AuthenticAMD family 1A models 0x40\n");
  for (const CpuIdentity& cpu : {cpu_of("AuthenticAMD", 0x1A, 0x02), cpu_of("GenuineIntel", 6, 0x8F)}) {
    auto family = family_in({path("mine"), kShippedCountersDir}, cpu);
    ASSERT_FALSE(family.ok()) << cpu.vendor;
    EXPECT_EQ(family.error().message, file + ":2: family '1A' has no 0x; expected hexadecimal with 0x (0x1A if that was hexadecimal)");
  }
}

TEST_F(CounterFamilyData, TwoFamiliesThatNameOneCpuAreAnErrorNamingBoth) {
  const std::string one = put("data/one/cpus.match", "# first\nvendor AuthenticAMD family 0x1A models 0x00-0x0F\n");
  const std::string two =
      put("data/two/cpus.match", "vendor GenuineIntel family 0x6 models 0x55\nvendor AuthenticAMD family 0x1A models 0x0C,0x02-0x03\n");
  const std::string message =
      one + ":2 and " + two +
      ":2 both name AuthenticAMD family 0x1A model 0x2 (one and two); a CPU has one counter family: expected their model ranges "
      "apart";
  // Whichever CPU asks: the data is wrong for every machine, not only for the CPU both name.
  for (const CpuIdentity& cpu : {cpu_of("AuthenticAMD", 0x1A, 0x02), cpu_of("GenuineIntel", 6, 0x8F)}) {
    auto family = family_in({path("data")}, cpu);
    ASSERT_FALSE(family.ok()) << cpu.vendor;
    EXPECT_EQ(family.error().message, message);
  }
  // A folder of the user's that claims a shipped family's CPUs.
  put("mine/zen9/cpus.match", "vendor AuthenticAMD family 0x1A models 0x40\n");
  auto shipped = family_in({path("mine"), kShippedCountersDir});
  ASSERT_FALSE(shipped.ok());
  EXPECT_THAT(shipped.error().message, HasSubstr(kShippedCountersDir + "/zen5/cpus.match:"));
  EXPECT_THAT(shipped.error().message, HasSubstr(path("mine") + "/zen9/cpus.match:1"));
  EXPECT_THAT(shipped.error().message, HasSubstr("model 0x40 (zen5 and zen9)"));
}

TEST_F(CounterFamilyData, GroupFilesWithoutAMatchFileAreAnError) {
  put("mine/zen9/flops.txt", "TITLE made up\n");
  auto family = family_in({path("mine"), kShippedCountersDir});
  ASSERT_FALSE(family.ok());
  EXPECT_EQ(family.error().message, path("mine") + "/zen9: group files but no cpus.match, here or in " + path("mine") + ", " + kShippedCountersDir +
                                        ", so no CPU can choose them; expected a match file naming the family's CPUs (counters/README.md)");
}

TEST_F(CounterFamilyData, GenericAndSoftwareHaveNoMatchFile) {
  for (const std::string folder : {"generic", "software"}) {
    SCOPED_TRACE(folder);
    const std::string file = put("mine-" + folder + "/" + folder + "/cpus.match", "vendor AuthenticAMD family 0x1A models 0x02\n");
    auto family = family_in({path("mine-" + folder), kShippedCountersDir});
    ASSERT_FALSE(family.ok());
    EXPECT_EQ(family.error().message,
              file + ": " + folder + "/ holds groups for every CPU and is never chosen by CPUID; expected no match file here (remove it)");
  }
}

TEST_F(CounterFamilyData, TheFirstFolderWithAFamilysMatchFileWins) {
  // A folder of the user's own zen5 groups, without a match file: the shipped one still applies.
  put("groups/zen5/mine.txt", "TITLE mine\n");
  fs::create_directories(path("groups/empty"));
  auto shipped = family_in({path("groups"), kShippedCountersDir});
  ASSERT_TRUE(shipped.ok()) << shipped.error().message;
  EXPECT_EQ(shipped->name, "zen5");
  EXPECT_EQ(shipped->match_file, kShippedCountersDir + "/zen5/cpus.match");
  // A match file of the user's narrows zen5 to one model; the shipped one is not read then.
  const std::string file = put("narrow/zen5/cpus.match", "vendor AuthenticAMD family 0x1A models 0x02\n");
  auto narrowed = family_in({path("narrow"), kShippedCountersDir});
  ASSERT_TRUE(narrowed.ok()) << narrowed.error().message;
  EXPECT_EQ(narrowed->name, "zen5");
  EXPECT_EQ(narrowed->match_file, file);
  EXPECT_EQ(narrowed->note, "");
  EXPECT_EQ(family_name(cpu_of("AuthenticAMD", 0x1A, 0x11), {path("narrow"), kShippedCountersDir}), "generic");
}

// counter_family answers "generic" for a CPU the data does not name, so any answer is a known
// family: what says something is that the identity it is chosen from (CPUID) is the one the
// kernel reports in /proc/cpuinfo.
TEST(CounterFamily, ThisMachinesIdentityIsTheKernels) {
  const CpuIdentity cpu = detect_cpu();
  std::ifstream in("/proc/cpuinfo");
  std::map<std::string, std::string> first;
  for (std::string line; std::getline(in, line) && !line.empty();) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    first.emplace(key, colon + 2 <= line.size() ? line.substr(colon + 2) : "");
  }
  if (!first.count("vendor_id") || !first.count("cpu family") || !first.count("model")) {
    GTEST_SKIP() << "/proc/cpuinfo has no vendor_id, cpu family and model here (not x86)";
  }
  EXPECT_EQ(cpu.vendor, first["vendor_id"]);
  EXPECT_EQ(cpu.family, std::stoi(first["cpu family"]));
  EXPECT_EQ(cpu.model, std::stoi(first["model"]));
  const auto& families = known_group_families();
  EXPECT_NE(std::find(families.begin(), families.end(), family_name(cpu)), families.end());
}

}  // namespace
}  // namespace hwprof
