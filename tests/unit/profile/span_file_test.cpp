// The span file of `hwprof record` (session/span_file.hpp, profile/span_file_reader.hpp): what
// a session writes reads back as the same spans, and a malformed, truncated, hostile or huge
// file is refused with the file, the line and the problem named.
#include "profile/span_file_reader.hpp"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/stages.hpp"
#include "session/span_file.hpp"

namespace hwprof::profile {
namespace {

using ::testing::HasSubstr;

const std::string kPath = "/tmp/spans-42.txt";

SessionSnapshot two_regions() {
  SessionSnapshot s;
  s.opened_monotonic_ns = 1'000'000;
  s.timeline_dropped = 3;
  s.regions.resize(2);
  s.regions[0].id = 0;
  s.regions[0].name = "conv 1%\nodd";  // a space, a '%' and a line break survive the trip
  s.regions[1].id = 1;
  s.regions[1].name = "relu";
  s.threads.resize(1);
  s.threads[0].number = 1;
  s.threads[0].tid = 4242;
  s.timeline.push_back({1, 0, 0, 100.0, 50.0});
  s.timeline.push_back({1, 1, 1, 120.0, 10.0});
  s.timeline.push_back({9, 1, 0, 0.0, 1.0});  // a thread the snapshot does not list: left out
  return s;
}

TEST(SpanFile, WhatTheSessionWritesReadsBackAsItsSpans) {
  const SessionSnapshot snapshot = two_regions();
  const std::string text = span_file_text(snapshot, 42);
  auto read = parse_span_file(text, kPath);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->pid, 42);
  EXPECT_EQ(read->timeline_dropped, 3u);
  ASSERT_EQ(read->regions.size(), 2u);
  EXPECT_EQ(read->regions[0].name, "conv 1%\nodd");
  EXPECT_EQ(read->regions[1].name, "relu");
  const std::vector<RegionSpan> expected = spans_of(snapshot);
  ASSERT_EQ(read->spans.size(), expected.size());
  ASSERT_EQ(read->spans.size(), 2u);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(read->spans[i].tid, expected[i].tid);
    EXPECT_EQ(read->spans[i].region, expected[i].region);
    EXPECT_EQ(read->spans[i].depth, expected[i].depth);
    EXPECT_EQ(read->spans[i].start_ns, expected[i].start_ns);
    EXPECT_EQ(read->spans[i].end_ns, expected[i].end_ns);
  }
  EXPECT_EQ(read->spans[0].start_ns, 1'000'100u);
  EXPECT_EQ(read->spans[0].end_ns, 1'000'150u);
}

// Each refusal names the file and the line, and says what is wrong.
void expect_refused(const std::string& text, const std::string& place, const std::string& problem) {
  auto read = parse_span_file(text, kPath);
  ASSERT_FALSE(read) << "accepted: " << text;
  EXPECT_THAT(read.error().message, HasSubstr(kPath + place)) << read.error().message;
  EXPECT_THAT(read.error().message, HasSubstr(problem)) << read.error().message;
}

const std::string kHead = "hwprof-spans 1\npid 42\ntimeline_dropped 0\nregion 0 a\n";

TEST(SpanFile, GarbageIsRefused) {
  expect_refused("", ":", "empty");
  expect_refused(std::string("\x7f"
                             "ELF\x02\x01\x01\n",
                             8),
                 ":1", "not a span file");
  expect_refused(kHead + "frobnicate 1 2\nend 1 0\n", ":5", "unknown line 'frobnicate'");
  expect_refused(kHead + "span 1 0 0 10\nend 1 0\n", ":5", "'span' takes 5 fields, this line has 4");
  expect_refused(kHead + "span 1 0 0 10  20\nend 1 0\n", ":5", "'span' takes 5 fields");
  expect_refused(kHead + "span 1 0 0 1x 20\nend 1 0\n", ":5", "the start '1x' is not a number");
  expect_refused(kHead + "region 1 bad%zz\nend 2 0\n", ":5", "'%' without two hex digits");
  expect_refused(kHead + "region 1 bad%4\nend 2 0\n", ":5", "'%' without two hex digits");
  expect_refused(kHead + "region 0 again\nend 2 0\n", ":5", "region 0 is listed twice");
  expect_refused(kHead + "span 1 7 0 10 20\nend 1 1\n", ":5", "region 7 is not listed");
  expect_refused("hwprof-spans 1\ntimeline_dropped 0\nend 0 0\n", ":3", "no 'pid' line");
}

TEST(SpanFile, ATruncatedFileIsRefused) {
  const std::string whole = span_file_text(two_regions(), 42);
  ASSERT_TRUE(parse_span_file(whole, kPath));
  // Cut anywhere, the file is refused: no line break at its end, no 'end' line, or counts
  // that do not match.
  for (std::size_t cut = 0; cut + 1 < whole.size(); ++cut) {
    EXPECT_FALSE(parse_span_file(whole.substr(0, cut), kPath)) << "accepted when cut at byte " << cut;
  }
  expect_refused(kHead + "span 1 0 0 10 20\n", ":5", "no 'end' line");
  expect_refused(kHead + "span 1 0 0 10 20\nend 1 2\n", ":6", "'end' counts 1 regions and 2 spans, the file has 1 and 1");
  expect_refused(kHead + "end 1 0\nspan 1 0 0 10 20\n", ":6", "a line after 'end'");
  expect_refused(kHead + "span 1 0 0 10 20", ":5", "no line break");
}

TEST(SpanFile, NegativeHugeAndBackwardsNumbersAreRefused) {
  expect_refused(kHead + "span 1 0 0 -10 20\nend 1 1\n", ":5", "the start '-10' is not a number from 0");
  expect_refused(kHead + "span -1 0 0 10 20\nend 1 1\n", ":5", "the thread id '-1'");
  expect_refused(kHead + "span 1 0 -1 10 20\nend 1 1\n", ":5", "the depth '-1'");
  expect_refused(kHead + "span +1 0 0 10 20\nend 1 1\n", ":5", "the thread id '+1'");
  expect_refused(kHead + "span 1 0 0 10 99999999999999999999999\nend 1 1\n", ":5", "the end");
  expect_refused(kHead + "span 1 0 0 10 9223372036854775808\nend 1 1\n", ":5", "the end");
  expect_refused(kHead + "span 4294967296 0 0 10 20\nend 1 1\n", ":5", "the thread id");
  expect_refused(kHead + "span 0 0 0 10 20\nend 1 1\n", ":5", "thread id 0");
  expect_refused(kHead + "span 1 0 0 30 20\nend 1 1\n", ":5", "ends (20) before it starts (30)");
  expect_refused(kHead + "span 1 0 70000 10 20\nend 1 1\n", ":5", "the depth '70000'");
  expect_refused("hwprof-spans 1\npid 99999999999\nend 0 0\n", ":2", "the pid");
  expect_refused(kHead + "end 18446744073709551616 0\n", ":5", "the region count");
}

TEST(SpanFile, CountsPastTheLimitsAreRefusedWithoutReadingOn) {
  SpanFileLimits limits;
  limits.max_regions = 2;
  limits.max_spans = 3;
  limits.max_bytes = 4096;
  std::string regions = "hwprof-spans 1\npid 42\n";
  for (int i = 0; i < 3; ++i) regions += "region " + std::to_string(i) + " r\n";
  auto read = parse_span_file(regions + "end 3 0\n", kPath, limits);
  ASSERT_FALSE(read);
  EXPECT_THAT(read.error().message, HasSubstr(kPath + ":5: more than 2 regions"));
  std::string spans = kHead;
  for (int i = 0; i < 4; ++i) spans += "span 1 0 0 10 20\n";
  read = parse_span_file(spans + "end 1 4\n", kPath, limits);
  ASSERT_FALSE(read);
  EXPECT_THAT(read.error().message, HasSubstr(kPath + ":8: more than 3 spans"));
  read = parse_span_file(std::string(5000, 'x'), kPath, limits);
  ASSERT_FALSE(read);
  EXPECT_THAT(read.error().message, HasSubstr("larger than 4096 bytes"));
}

TEST(SpanFile, AFileThatIsNotRegularIsNotRead) {
  auto read = read_span_file("/dev/zero");
  ASSERT_FALSE(read);
  EXPECT_THAT(read.error().message, HasSubstr("/dev/zero"));
}

}  // namespace
}  // namespace hwprof::profile
