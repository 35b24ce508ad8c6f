// The Chrome trace: it parses, every lane is named, spans nest exactly per thread on the
// nanosecond grid Perfetto uses (llround(ts × 1000)), timestamps never go back on a thread,
// layer spans carry their arguments, and counter tracks hold only values that were read.
#include <cmath>
#include <map>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hwprof/engine/report.hpp"
#include "synthetic_profile.hpp"

namespace hwprof {
namespace {

using nlohmann::json;

std::int64_t ns(const json& us) {
  return std::llround(us.get<double>() * 1000.0);
}

json parse_trace(const Profile& p) {
  const std::string text = chrome_trace(p);
  json j;
  EXPECT_NO_THROW(j = json::parse(text));
  return j;
}

TEST(ChromeTrace, IsATraceEventObject) {
  const json j = parse_trace(test::synthetic_profile());
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["displayTimeUnit"], "ms");
  ASSERT_TRUE(j["traceEvents"].is_array());
  EXPECT_EQ(j["otherData"]["sampled_iterations"], 2);
  EXPECT_EQ(j["otherData"]["measured_iterations"], 20);
  EXPECT_THAT(j["otherData"]["unavailable_counters"]["LLC-load-misses"].get<std::string>(), ::testing::HasSubstr("unsupported: this virtual"));
  for (const json& e : j["traceEvents"]) {
    ASSERT_TRUE(e.contains("ph") && e.contains("pid") && e.contains("tid") && e.contains("name")) << e.dump();
    const std::string ph = e["ph"];
    EXPECT_TRUE(ph == "X" || ph == "M" || ph == "C") << ph;
    if (ph != "M") {
      EXPECT_TRUE(e["ts"].is_number()) << e.dump();
    }
    if (ph == "X") {
      EXPECT_GE(e["dur"].get<double>(), 0.0);
    }
  }
}

TEST(ChromeTrace, EveryThreadIsNamed) {
  const json j = parse_trace(test::synthetic_profile());
  std::set<int> named, used;
  bool process = false;
  for (const json& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") named.insert(e["tid"].get<int>());
    if (e["ph"] == "M" && e["name"] == "process_name") process = e["args"]["name"] == "hwprof: synthetic-net";
    if (e["ph"] == "X") used.insert(e["tid"].get<int>());
  }
  EXPECT_TRUE(process);
  EXPECT_EQ(used, (std::set<int>{0, 1}));
  EXPECT_EQ(named, used);
}

TEST(ChromeTrace, SpansNestPerThreadAndTimeNeverGoesBack) {
  for (bool train : {true, false}) {
    SCOPED_TRACE(train);
    const Profile p = test::synthetic_profile({.train = train});
    const json j = parse_trace(p);
    std::map<int, std::vector<std::pair<std::int64_t, std::int64_t>>> open;  // per thread: a stack of [start, end]
    std::map<int, std::int64_t> last_ts;
    std::size_t layers = 0, phases = 0;
    for (const json& e : j["traceEvents"]) {
      if (e["ph"] == "M") continue;
      const int tid = e["tid"];
      const std::int64_t ts = ns(e["ts"]);
      if (last_ts.count(tid)) {
        EXPECT_GE(ts, last_ts[tid]) << "time goes back on thread " << tid << ": " << e.dump();
      }
      last_ts[tid] = ts;
      // Also exact in the doubles a JavaScript viewer adds: ts is a multiple of 0.001 µs.
      EXPECT_EQ(static_cast<double>(ts) / 1000.0, e["ts"].get<double>());
      if (e["ph"] != "X") continue;
      const std::int64_t end = ts + ns(e["dur"]);
      auto& stack = open[tid];
      while (!stack.empty() && stack.back().second <= ts && !(stack.back().second == ts && end == ts)) stack.pop_back();
      if (e["cat"] == "layer") {
        ++layers;
        ASSERT_FALSE(stack.empty()) << "a layer span outside every phase span: " << e.dump();
        EXPECT_GE(ts, stack.back().first);
        EXPECT_LE(end, stack.back().second) << "ends after its phase: " << e.dump();
      } else {
        ++phases;
        EXPECT_TRUE(stack.empty()) << "a phase span inside another span: " << e.dump();
      }
      stack.push_back({ts, end});
    }
    EXPECT_EQ(layers + phases, p.trace.size());
  }
}

TEST(ChromeTrace, LayerSpansCarryTheirArguments) {
  const json j = parse_trace(test::synthetic_profile());
  bool conv_backward = false;
  for (const json& e : j["traceEvents"]) {
    if (e["ph"] != "X" || e["cat"] != "layer") continue;
    const json& a = e["args"];
    for (const char* key : {"op", "phase", "output_shape", "flops", "bytes", "bound", "iteration"}) EXPECT_TRUE(a.contains(key)) << key;
    if (e["name"] == "conv1" && a["phase"] == "backward") {
      conv_backward = true;
      EXPECT_EQ(a["op"], "conv2d");
      EXPECT_EQ(a["flops"], 320000000);
      EXPECT_EQ(a["output_shape"], "16x32x32 per sample, batch 4");
      EXPECT_EQ(a["bound"], "compute");
      EXPECT_TRUE(a["efficiency"].is_number());
    }
  }
  EXPECT_TRUE(conv_backward);
}

TEST(ChromeTrace, CounterTracksHoldOnlyWhatWasRead) {
  const json j = parse_trace(test::synthetic_profile());
  std::map<std::string, int> samples;
  for (const json& e : j["traceEvents"]) {
    if (e["ph"] != "C") continue;
    ++samples[e["name"]];
    ASSERT_EQ(e["args"].size(), 1u);
    EXPECT_TRUE(e["args"].begin()->is_number());
  }
  EXPECT_GT(samples["GFLOP/s"], 0);
  EXPECT_GT(samples["GB/s"], 0);
  EXPECT_GT(samples["cycles"], 0);
  EXPECT_GT(samples["instructions"], 0);
  EXPECT_EQ(samples.count("LLC-load-misses"), 0u);
}

TEST(ChromeTrace, ALayerThatOverrunsItsPhaseByRoundingIsClampedIntoIt) {
  Profile p = test::synthetic_profile({.train = false});
  p.trace = {{"forward", "phase", -1, 0, 0, 10.0004, 5.0},
             {"conv1", "layer", 0, 0, 0, 10.0004, 5.0006},  // 0.6 ns past the phase
             {"relu", "layer", 2, 0, 0, 9.9996, 1.0}};      // starts 0.8 ns early
  const json j = parse_trace(p);
  std::int64_t phase_start = -1, phase_end = -1;
  for (const json& e : j["traceEvents"]) {
    if (e["ph"] == "X" && e["cat"] == "phase") {
      phase_start = ns(e["ts"]);
      phase_end = phase_start + ns(e["dur"]);
    }
  }
  ASSERT_EQ(phase_start, 10000);
  for (const json& e : j["traceEvents"]) {
    if (e["ph"] != "X" || e["cat"] != "layer") continue;
    EXPECT_GE(ns(e["ts"]), phase_start) << e.dump();
    EXPECT_LE(ns(e["ts"]) + ns(e["dur"]), phase_end) << e.dump();
  }
}

}  // namespace
}  // namespace hwprof
