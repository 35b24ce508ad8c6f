// hwprof record's rows (src/profile/recorded_profile.cpp): the launched program's regions by
// their names, another process's rows (a child it forked, a sanitizer's helper task) prefixed
// with its pid and name, a process without a span file one row for the whole program.
#include "profile/recorded_profile.hpp"

#include <linux/perf_event.h>

#include <algorithm>
#include <vector>

#include <gtest/gtest.h>
#include "common/stages.hpp"

namespace hwprof::profile {
namespace {

void add_sample(SampleStore& store, std::uint32_t pid, std::uint64_t time, std::uint64_t ip) {
  SampleRecord r;
  r.pid = pid;
  r.tid = pid;
  r.time_ns = time;
  r.ip = ip;
  r.ip_context = FrameContext::user;
  const std::vector<std::uint64_t> raw{PERF_CONTEXT_USER, ip};
  ASSERT_TRUE(store.add_sample(r, raw));
}

bool has_row(const SamplingProfile& s, const std::string& name) {
  return std::any_of(s.layers.begin(), s.layers.end(), [&](const SampledLayer& l) { return l.name == name; });
}

TEST(RecordedProfile, TheLaunchedProgramsRowsAreUnprefixedAndOtherProcessesSayTheirPid) {
  SampleStore store;
  for (std::uint64_t t = 0; t < 40; ++t) add_sample(store, 100, 10 + t, 0x1000);  // in region "alpha"
  for (std::uint64_t t = 0; t < 5; ++t) add_sample(store, 101, 20 + t, 0x2000);   // a helper process
  RecordedSpans spans;
  spans.pid = 100;
  spans.regions = {{0, "alpha"}};
  spans.spans = {{100, 0, 0, 0, 1000}};
  std::vector<RecordedProcess> processes(2);
  processes[0] = {100, "train", spans, true};
  processes[1] = {101, "helper", std::nullopt, false};
  const NameOfAddressIn names = [](std::uint32_t, std::uint64_t a) { return FrameName{a == 0x1000 ? "spin" : "wait", "app", true}; };
  SamplingProfile s;
  add_recorded_processes(store, processes, names, 5, s);
  EXPECT_TRUE(has_row(s, "alpha"));
  EXPECT_TRUE(has_row(s, "pid 101 (helper): helper (the whole program)"));
  EXPECT_EQ(s.samples, 45u);
}

// The row outside every region is last by what it is, not by its name: a region whose name
// ends like it sorts among the others by its samples.
TEST(RecordedProfile, TheOutsideRowIsLastByItsMarkNotItsName) {
  SampleStore store;
  for (std::uint64_t t = 0; t < 10; ++t) add_sample(store, 100, 10 + t, 0x1000);   // in "a (outside every region)", a region
  for (std::uint64_t t = 0; t < 30; ++t) add_sample(store, 100, 100 + t, 0x1000);  // in "b"
  for (std::uint64_t t = 0; t < 20; ++t) add_sample(store, 100, 500 + t, 0x1000);  // in no region
  RecordedSpans spans;
  spans.pid = 100;
  spans.regions = {{0, "a (outside every region)"}, {1, "b"}};
  spans.spans = {{100, 0, 0, 0, 50}, {100, 1, 0, 60, 200}};
  std::vector<RecordedProcess> processes{{100, "train", spans, true}};
  const NameOfAddressIn names = [](std::uint32_t, std::uint64_t) { return FrameName{"spin", "app", true}; };
  SamplingProfile s;
  add_recorded_processes(store, processes, names, 5, s);
  ASSERT_EQ(s.layers.size(), 3u);
  EXPECT_EQ(s.layers[0].name, "b");
  EXPECT_FALSE(s.layers[0].outside);
  EXPECT_EQ(s.layers[1].name, "a (outside every region)");
  EXPECT_FALSE(s.layers[1].outside);
  EXPECT_EQ(s.layers[2].name, "(outside every region)");
  EXPECT_TRUE(s.layers[2].outside);
  EXPECT_EQ(s.layers[2].samples, 20u);
}

}  // namespace
}  // namespace hwprof::profile
