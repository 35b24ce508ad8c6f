// The sampling spec `EVENT[@RATE]`: what it accepts, and each refusal naming the text, the
// problem and the fix (docs/sampling.md, "The spec"). The kernel's limits are given, not read.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <linux/perf_event.h>

#include "common/stages.hpp"
#include "sampling/sample_spec.hpp"
#include "scratch_dir.hpp"

namespace hwprof::sampling {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr SamplingLimits kLimits{100000, 127};
// No PMU described: generic events still resolve from the resolver's own table.
constexpr const char* kNoSysfs = "/nonexistent-sysfs";

SampleSpec accepted(const std::string& text, SamplingLimits limits = kLimits) {
  auto r = parse_sample_spec(text, limits, kNoSysfs);
  EXPECT_TRUE(r.ok()) << text << ": " << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : SampleSpec{};
}

std::string refused(const std::string& text, SamplingLimits limits = kLimits, const std::string& sysfs = kNoSysfs) {
  auto r = parse_sample_spec(text, limits, sysfs);
  EXPECT_FALSE(r.ok()) << text << " was accepted";
  return r.ok() ? std::string() : r.error().message;
}

TEST(SampleSpec, AnEventAloneIsSampledAtTheDefaultFrequency) {
  const SampleSpec s = accepted("cpu-clock");
  EXPECT_EQ(s.event, "cpu-clock");
  EXPECT_EQ(s.resolved.type, static_cast<std::uint32_t>(PERF_TYPE_SOFTWARE));
  EXPECT_EQ(s.resolved.config, static_cast<std::uint64_t>(PERF_COUNT_SW_CPU_CLOCK));
  EXPECT_TRUE(s.frequency);
  EXPECT_EQ(s.rate, 1000u);
  EXPECT_EQ(s.precise_ip, 0);
  EXPECT_FALSE(s.levels_given);
  EXPECT_EQ(s.callchain_depth, 127u);
  EXPECT_TRUE(s.notes.empty());
  EXPECT_EQ(describe_rate(s), "1000 Hz");
}

TEST(SampleSpec, AFrequencyAfterTheAtSign) {
  const SampleSpec s = accepted("cpu-clock@4000");
  EXPECT_TRUE(s.frequency);
  EXPECT_EQ(s.rate, 4000u);
  EXPECT_EQ(s.text, "cpu-clock@4000");
}

TEST(SampleSpec, TheEventMayBeLeftOut) {
  const SampleSpec s = accepted("@250");
  EXPECT_EQ(s.event, "cpu-clock");
  EXPECT_EQ(s.rate, 250u);
}

TEST(SampleSpec, AFixedPeriodAfterAtP) {
  const SampleSpec s = accepted("cycles@p100000");
  EXPECT_EQ(s.resolved.type, static_cast<std::uint32_t>(PERF_TYPE_HARDWARE));
  EXPECT_FALSE(s.frequency);
  EXPECT_EQ(s.rate, 100000u);
  EXPECT_EQ(describe_rate(s), "every 100000 events");
  EXPECT_EQ(describe_rate(accepted("task-clock@p250000")), "every 250000 ns");
}

TEST(SampleSpec, ASoftwareEventMayBeSampledAtEveryEvent) {
  const SampleSpec s = accepted("page-faults@p1");
  EXPECT_FALSE(s.frequency);
  EXPECT_EQ(s.rate, 1u);
}

TEST(SampleSpec, PreciseModifiersSetPreciseIpAndLeaveTheEventName) {
  EXPECT_EQ(accepted("cycles:p").precise_ip, 1);
  const SampleSpec pp = accepted("cycles:pp@p100000");
  EXPECT_EQ(pp.precise_ip, 2);
  EXPECT_EQ(pp.event, "cycles");
  EXPECT_EQ(pp.rate, 100000u);
  EXPECT_EQ(accepted("cycles:ppp").precise_ip, 3);
  const SampleSpec libpfm_style = accepted("cycles:precise=2");
  EXPECT_EQ(libpfm_style.precise_ip, 2);
  EXPECT_EQ(libpfm_style.event, "cycles");
}

TEST(SampleSpec, PreciseTogetherWithAPrivilegeLevel) {
  const SampleSpec s = accepted("cycles:upp");
  EXPECT_EQ(s.precise_ip, 2);
  EXPECT_EQ(s.event, "cycles:u");
  EXPECT_TRUE(s.levels_given);
  EXPECT_TRUE(s.resolved.exclude_kernel);
}

TEST(SampleSpec, ALevelModifierIsKept) {
  const SampleSpec u = accepted("cpu-clock:u@100");
  EXPECT_TRUE(u.levels_given);
  EXPECT_TRUE(u.resolved.exclude_kernel);
  const SampleSpec k = accepted("cpu-clock:k");
  EXPECT_TRUE(k.levels_given);
  EXPECT_FALSE(k.resolved.exclude_kernel);
}

TEST(SampleSpec, BlanksAroundTheTextAreIgnored) {
  EXPECT_EQ(accepted("  cpu-clock@500 \t").rate, 500u);
}

TEST(SampleSpec, TheCallchainDepthIsClampedToTheKernelsMaximumAndSaysSo) {
  const SampleSpec s = accepted("cpu-clock", SamplingLimits{100000, 64});
  EXPECT_EQ(s.callchain_depth, 64u);
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_THAT(s.notes[0], AllOf(HasSubstr("64 frames"), HasSubstr("kernel.perf_event_max_stack"), HasSubstr("sysctl")));
}

TEST(SampleSpec, UnknownLimitsAreNotChecked) {
  const SampleSpec s = accepted("cpu-clock@500000", SamplingLimits{0, 0});
  EXPECT_EQ(s.rate, 500000u);
  EXPECT_EQ(s.callchain_depth, 127u);
}

TEST(SampleSpec, AnEmptyTextIsRefused) {
  EXPECT_THAT(refused(""), AllOf(HasSubstr("empty sample spec"), HasSubstr("cpu-clock@1000")));
  EXPECT_THAT(refused("  "), HasSubstr("empty sample spec"));
}

TEST(SampleSpec, AnUnknownEventIsRefusedWithTheResolversReason) {
  EXPECT_THAT(refused("cpu-clok@100"), AllOf(HasSubstr("sample spec 'cpu-clok@100'"), HasSubstr("'cpu-clok'"), HasSubstr("cpu-clock")));
}

TEST(SampleSpec, ARateOfZeroIsRefused) {
  EXPECT_THAT(refused("cpu-clock@0"), AllOf(HasSubstr("'cpu-clock@0'"), HasSubstr("0 Hz takes no samples")));
  EXPECT_THAT(refused("cycles@p0"), HasSubstr("period of 0 events"));
}

TEST(SampleSpec, ANegativeRateIsRefused) {
  EXPECT_THAT(refused("cpu-clock@-5"), HasSubstr("cannot be negative"));
  EXPECT_THAT(refused("cycles@p-100"), HasSubstr("period cannot be negative"));
}

TEST(SampleSpec, ARateThatIsNotAWholeNumberIsRefused) {
  EXPECT_THAT(refused("cpu-clock@abc"), AllOf(HasSubstr("'abc' is not a whole number"), HasSubstr("EVENT[@RATE]")));
  EXPECT_THAT(refused("cpu-clock@1.5"), HasSubstr("'1.5' is not a whole number"));
  EXPECT_THAT(refused("cpu-clock@1k"), HasSubstr("not a whole number"));
  EXPECT_THAT(refused("cpu-clock@"), HasSubstr("nothing after '@'"));
  EXPECT_THAT(refused("cpu-clock@p"), HasSubstr("not a whole number"));
  EXPECT_THAT(refused("cpu-clock@99999999999999999999999"), HasSubstr("fits in 64 bits"));
  EXPECT_THAT(refused("cpu-clock@100@200"), HasSubstr("more than one '@'"));
}

// Text from a command line or an environment variable, as anyone may write it: refused with a
// message, never read past its end nor taken for part of an event's name.
TEST(SampleSpec, HostileTextIsRefused) {
  EXPECT_THAT(refused("cpu-clock\x01@100"), HasSubstr("sample spec"));
  EXPECT_THAT(refused("cpu-clock@1000\n@1"), HasSubstr("a control character (0x0a)"));
  EXPECT_THAT(refused(std::string("cpu-clock\0@100", 14)), HasSubstr("a control character (0x00)"));
  EXPECT_THAT(refused("cpu-clock@1000;rm -rf /"), HasSubstr("not a whole number"));
  EXPECT_THAT(refused("@@@@"), HasSubstr("more than one '@'"));
  EXPECT_THAT(refused(std::string(100000, 'x') + "@100"), HasSubstr("sample spec"));
  EXPECT_THAT(refused("cpu-clock@" + std::string(100000, '9')), HasSubstr("fits in 64 bits"));
  EXPECT_THAT(refused("cpu-clock:" + std::string(1000, 'p')), HasSubstr("at most three p's"));
}

TEST(SampleSpec, AFrequencyAboveTheKernelsLimitSaysTheLimitAndHowToRaiseIt) {
  EXPECT_THAT(refused("cpu-clock@200000"),
              AllOf(HasSubstr("200000 Hz"), HasSubstr("limit of 100000 Hz"), HasSubstr("kernel.perf_event_max_sample_rate"),
                    HasSubstr("sudo sysctl kernel.perf_event_max_sample_rate=200000")));
  // A clock's period is nanoseconds: every 1000 ns is 1 MHz.
  EXPECT_THAT(refused("cpu-clock@p1000"), AllOf(HasSubstr("1000000 Hz"), HasSubstr("limit of 100000 Hz")));
  // The default rate too, on a kernel that allows less.
  EXPECT_THAT(refused("cpu-clock", SamplingLimits{500, 127}), AllOf(HasSubstr("default 1000 Hz"), HasSubstr("cpu-clock@500")));
}

TEST(SampleSpec, AbsurdPeriodsAreRefused) {
  EXPECT_THAT(refused("cycles@p10"), AllOf(HasSubstr("every 10 events"), HasSubstr("at least 1000")));
  EXPECT_THAT(refused("cycles@p9223372036854775808"), HasSubstr("2^63"));
}

TEST(SampleSpec, PreciseOnASoftwareEventIsRefused) {
  EXPECT_THAT(refused("cpu-clock:pp"), AllOf(HasSubstr("software event"), HasSubstr("no precise mode")));
  EXPECT_THAT(refused("cycles:pppp"), HasSubstr("at most three p's"));
  EXPECT_THAT(refused("cycles:precise=4"), HasSubstr("precise takes 0, 1, 2 or 3"));
  EXPECT_THAT(refused("cycles:pp:precise=1"), HasSubstr("given twice"));
}

class SampleSpecSysfs : public test::ScratchDirTest {};

TEST_F(SampleSpecSysfs, AnUncoreEventIsRefused) {
  put("uncore_imc_0/type", "15\n");
  put("uncore_imc_0/cpumask", "0\n");
  put("uncore_imc_0/format/event", "config:0-7\n");
  EXPECT_THAT(refused("uncore_imc/event=0x04/@100", kLimits, dir_.string()),
              AllOf(HasSubstr("uncore event"), HasSubstr("cannot be sampled"), HasSubstr("cpu-clock")));
}

}  // namespace
}  // namespace hwprof::sampling
