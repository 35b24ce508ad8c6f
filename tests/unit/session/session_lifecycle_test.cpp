// The session's life around the user's code (docs/regions.md): thread slots released when threads
// end, a session destroyed with regions open, names known only at run time, errors that keep
// their message, events of another CPU, regions open at the end, and the snapshot (per-thread
// totals, the call tree, the timeline) — then the snapshot made into a profile on a synthetic
// machine. The times run on an injected clock that moves only when a test says so.
#include <algorithm>
#include <atomic>
#include <barrier>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "hwprof/cpu.hpp"
#include "hwprof/engine/profiler.hpp"
#include "hwprof/session.hpp"
#include "made_up_calibration.hpp"
#include "session/observer_hooks.hpp"
#include "session/session_clock.hpp"
#include "text_support.hpp"

namespace hwprof {
namespace {

std::atomic<std::uint64_t> clock_now{1'000'000};
std::uint64_t still_clock() noexcept {
  return clock_now.load();
}
void spend_still(std::uint64_t ns) {
  clock_now.fetch_add(ns);
}

SessionOptions timed_options() {
  SessionOptions o;
  o.backend = BackendKind::timer;
  o.clock = &still_clock;
  o.overhead_pairs = 0;  // nothing subtracted: every figure below is exact
  o.on_hint = [](const std::string&) {};
  return o;
}

std::unique_ptr<Session> open_timed(SessionOptions o = timed_options()) {
  auto s = Session::open(o);
  EXPECT_TRUE(s) << (s ? "" : s.error().message);
  return std::move(*s);
}

const RegionReport* find_region(const std::vector<RegionReport>& regions, const std::string& name) {
  for (const RegionReport& r : regions) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

using ::hwprof::test::contains;

// ---- thread slots ----

TEST(SessionLifecycle, FourHundredShortLivedThreadsAreAllRecordedOnFourSlots) {
  SessionOptions o = timed_options();
  o.max_threads = 4;
  auto s = open_timed(o);
  constexpr int kThreads = 400;
  for (int batch = 0; batch < kThreads / 2; ++batch) {  // two at a time: slots are reused
    std::barrier both(2);
    std::vector<std::thread> pair;
    for (int t = 0; t < 2; ++t) {
      pair.emplace_back([&] {
        HWPROF_REGION(*s, "short");
        both.arrive_and_wait();  // both inside at once
      });
    }
    for (std::thread& t : pair) t.join();
  }
  const RegionReport r = s->report(s->region("short"));
  EXPECT_EQ(r.calls, static_cast<std::uint64_t>(kThreads));
  EXPECT_EQ(s->dropped_threads(), 0u);
  const SessionSnapshot snap = s->snapshot();
  std::uint64_t per_thread_calls = 0;
  std::size_t ended = 0;
  for (const SessionThread& t : snap.threads) {
    ended += t.ended ? 1 : 0;
    for (const ThreadRegionTotal& total : t.regions) per_thread_calls += total.calls;
  }
  EXPECT_EQ(per_thread_calls, static_cast<std::uint64_t>(kThreads)) << "what ended threads measured is kept";
  EXPECT_EQ(ended, static_cast<std::size_t>(kThreads));
}

// ---- a session destroyed while regions are open ----

TEST(SessionLifecycle, ASessionDestroyedWithARegionOpenLeavesTheRegionHarmless) {
  std::vector<std::string> hints;
  SessionOptions o = timed_options();
  o.on_hint = [&hints](const std::string& h) { hints.push_back(h); };
  auto s = open_timed(o);
  std::optional<Region> outer;
  outer.emplace(*s, s->region("outer"));
  {
    HWPROF_REGION(*s, "inner");
    s.reset();  // the session goes while both regions are open ...
  }             // ... and the scoped region's end, then the outer one's, do nothing
  outer.reset();
  ASSERT_FALSE(hints.empty());
  EXPECT_TRUE(contains(hints.back(), "2 region(s) still open")) << hints.back();
}

TEST(SessionLifecycle, ASessionDestroyedWithNothingOpenIsFreed) {
  auto s = open_timed();
  { HWPROF_REGION(*s, "done"); }
  s.reset();  // nothing to keep; ASan's leak check would see a state kept for nothing
  SUCCEED();
}

// ---- names known only at run time ----

TEST(SessionLifecycle, RunTimeNamesAtOneCallSiteAreThreeRegions) {
  auto s = open_timed();
  const std::vector<std::string> names = {"conv1", "conv2", "conv3"};
  for (int pass = 0; pass < 4; ++pass) {
    for (const std::string& name : names) {
      HWPROF_REGION(*s, name.c_str());
      spend_still(100 * (1 + (&name - names.data())));
    }
    for (const std::string& name : names) {
      HWPROF_REGION(*s, name + "-bwd");  // a temporary std::string
      spend_still(10);
    }
  }
  char buffer[16];
  for (int i = 0; i < 2; ++i) {
    std::snprintf(buffer, sizeof buffer, "buf%d", i);
    HWPROF_REGION(*s, buffer);  // a mutable array is not bound to its site either
  }
  const std::vector<RegionReport> regions = s->report();
  for (std::size_t i = 0; i < names.size(); ++i) {
    const RegionReport* r = find_region(regions, names[i]);
    ASSERT_NE(r, nullptr) << names[i];
    EXPECT_EQ(r->calls, 4u) << names[i];
    EXPECT_DOUBLE_EQ(r->inclusive_ns.median, 100.0 * static_cast<double>(i + 1)) << names[i];
    const RegionReport* bwd = find_region(regions, names[i] + "-bwd");
    ASSERT_NE(bwd, nullptr);
    EXPECT_EQ(bwd->calls, 4u);
  }
  ASSERT_NE(find_region(regions, "buf0"), nullptr);
  ASSERT_NE(find_region(regions, "buf1"), nullptr);
  EXPECT_EQ(find_region(regions, "buf0")->calls, 1u);
  EXPECT_EQ(regions.size(), 8u);
}

// ---- errors that keep their message ----

TEST(SessionLifecycle, ValueOfAFailedOpenThrowsTheMessage) {
  SessionOptions o = timed_options();
  o.backend = BackendKind::perf;
  o.events = {"no-such-event-xyz"};
  try {
    auto s = Session::open(o).value();
    FAIL() << "a misspelt event opened";
  } catch (const BadResultAccess& e) {
    EXPECT_TRUE(contains(e.what(), "no-such-event-xyz")) << e.what();
  }
  o.backend = BackendKind::timer;
  o.events = {"wall-clock-typo"};
  EXPECT_THROW(static_cast<void>(Session::open(o).value()), BadResultAccess);
}

TEST(SessionLifecycle, AnEventOfAnotherCpuIsUnavailableNotAnError) {
  // An event this CPU's vendor does not have: Intel's on AMD (and elsewhere), AMD's on Intel.
  const CpuIdentity cpu = detect_cpu();
  const bool amd = contains(cpu.vendor, "AMD");
  const std::string foreign = amd || !contains(cpu.vendor, "Intel") ? "MEM_LOAD_RETIRED:L3_MISS" : "RETIRED_SSE_AVX_FLOPS:ANY";
  SessionOptions o = timed_options();
  o.backend = BackendKind::perf;
  o.events = {foreign};
  auto s = Session::open(o);
  ASSERT_TRUE(s) << "on " << cpu.vendor << ": " << s.error().message;
  ASSERT_EQ((*s)->events().size(), 1u);
  const EventInfo& e = (*s)->events()[0];
  EXPECT_NE(e.status, CounterStatus::ok) << foreign << " counted on " << cpu.vendor;
  EXPECT_FALSE(e.reason.empty());
  EXPECT_TRUE((*s)->time_only());
  // The regions still measure time.
  {
    HWPROF_REGION(**s, "still-timed");
    spend_still(50);
  }
  EXPECT_EQ((*s)->report((*s)->region("still-timed")).calls, 1u);
}

// ---- regions open at the end ----

TEST(SessionLifecycle, ARegionNeverLeftIsReportedOpen) {
  auto s = open_timed();
  const int step = s->region("step");
  const int stuck = s->region("stuck");
  s->begin(step);
  spend_still(100);
  s->end(step);
  s->begin(stuck);
  spend_still(250);
  std::thread([&] {
    s->begin(stuck);  // left open by a thread that ends
    spend_still(40);
  }).join();
  spend_still(10);
  const SessionSnapshot snap = s->snapshot();
  ASSERT_EQ(snap.open_regions.size(), 2u);
  const auto here = std::find_if(snap.open_regions.begin(), snap.open_regions.end(), [](const OpenRegion& o) { return !o.thread_ended; });
  const auto gone = std::find_if(snap.open_regions.begin(), snap.open_regions.end(), [](const OpenRegion& o) { return o.thread_ended; });
  ASSERT_NE(here, snap.open_regions.end());
  ASSERT_NE(gone, snap.open_regions.end());
  EXPECT_EQ(here->region, stuck);
  EXPECT_DOUBLE_EQ(here->open_ns, 300.0);
  EXPECT_EQ(gone->region, stuck);
  EXPECT_DOUBLE_EQ(gone->open_ns, 40.0) << "until its thread ended";
  const RegionReport* r = find_region(snap.regions, "stuck");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->open, 2u);
  EXPECT_EQ(r->calls, 0u);
  s->end(stuck);
}

// ---- the snapshot: call tree, per-thread totals, timeline ----

TEST(SessionLifecycle, TheSnapshotHasTheCallTreeThePerThreadTotalsAndTheTimeline) {
  auto s = open_timed();
  const int step = s->region("step");
  const int fc = s->region("fc");
  const int relu = s->region("relu");
  const auto one_step = [&] {
    s->begin(step);
    spend_still(5);
    s->begin(fc);
    spend_still(100);
    s->end(fc);
    s->begin(relu);
    spend_still(20);
    s->end(relu);
    s->end(step);
  };
  one_step();
  one_step();
  std::thread([&] {
    s->begin(fc);  // fc at the root, on a second thread
    spend_still(300);
    s->end(fc);
  }).join();
  const SessionSnapshot snap = s->snapshot();

  // The merged tree: step, step/fc, step/relu and a root fc.
  ASSERT_EQ(snap.call_tree.size(), 4u);
  const auto path = [&](int region, int parent_region) -> const CallPath* {
    for (const CallPath& p : snap.call_tree) {
      const int parent = p.parent < 0 ? -1 : snap.call_tree[static_cast<std::size_t>(p.parent)].region;
      if (p.region == region && parent == parent_region) return &p;
    }
    return nullptr;
  };
  const CallPath* root_step = path(step, -1);
  const CallPath* step_fc = path(fc, step);
  const CallPath* step_relu = path(relu, step);
  const CallPath* root_fc = path(fc, -1);
  ASSERT_TRUE(root_step && step_fc && step_relu && root_fc);
  EXPECT_EQ(root_step->calls, 2u);
  EXPECT_DOUBLE_EQ(root_step->inclusive_ns, 250.0);
  EXPECT_DOUBLE_EQ(root_step->exclusive_ns, 10.0);
  EXPECT_EQ(step_fc->depth, 1);
  EXPECT_DOUBLE_EQ(step_fc->inclusive_ns, 200.0);
  EXPECT_DOUBLE_EQ(step_relu->inclusive_ns, 40.0);
  EXPECT_EQ(root_fc->calls, 1u);
  EXPECT_DOUBLE_EQ(root_fc->inclusive_ns, 300.0);

  // Per thread: fc is 200 ns on the first thread and 300 ns on the second.
  ASSERT_EQ(snap.threads.size(), 2u);
  std::vector<double> fc_times;
  for (const SessionThread& t : snap.threads) {
    for (const ThreadRegionTotal& total : t.regions) {
      if (total.region == fc) fc_times.push_back(total.inclusive_ns);
    }
  }
  std::sort(fc_times.begin(), fc_times.end());
  EXPECT_EQ(fc_times, (std::vector<double>{200.0, 300.0}));
  EXPECT_TRUE(snap.threads[1].ended);
  EXPECT_NE(snap.threads[0].number, snap.threads[1].number);

  // The timeline: every call, with its start, duration, depth and thread.
  ASSERT_EQ(snap.timeline.size(), 7u);
  const auto& first_fc = *std::find_if(snap.timeline.begin(), snap.timeline.end(), [&](const TimelineEvent& e) { return e.region == fc; });
  EXPECT_DOUBLE_EQ(first_fc.duration_ns, 100.0);
  EXPECT_EQ(first_fc.depth, 1);
  const auto& first_step = *std::find_if(snap.timeline.begin(), snap.timeline.end(), [&](const TimelineEvent& e) { return e.region == step; });
  EXPECT_DOUBLE_EQ(first_fc.start_ns - first_step.start_ns, 5.0);
  EXPECT_EQ(snap.timeline_dropped, 0u);
}

TEST(SessionLifecycle, TheTimelineKeepsTheFirstCallsAndCountsTheRest) {
  SessionOptions o = timed_options();
  o.timeline_events = 3;
  auto s = open_timed(o);
  for (int i = 0; i < 5; ++i) {
    HWPROF_REGION(*s, "tick");
    spend_still(1);
  }
  const SessionSnapshot snap = s->snapshot();
  EXPECT_EQ(snap.timeline.size(), 3u);
  EXPECT_EQ(snap.timeline_dropped, 2u);
}

TEST(SessionLifecycle, SetWorkIsInTheReport) {
  auto s = open_timed();
  const int fc = s->region("fc");
  s->set_work(fc, 2.0e6, 4.0e5);
  {
    Region r(*s, fc);
    spend_still(1000);
  }
  const RegionReport r = s->report(fc);
  ASSERT_TRUE(r.work_flops && r.work_bytes);
  EXPECT_DOUBLE_EQ(*r.work_flops, 2.0e6);
  EXPECT_DOUBLE_EQ(*r.work_bytes, 4.0e5);
}

// ---- the snapshot as a profile ----

TEST(SessionLifecycle, ProfileOfPlacesEveryRegionWithWorkAndWarnsOfOpenOnes) {
  auto s = open_timed();
  const int step = s->region("step");
  const int fc = s->region("fc");
  const int loss = s->region("loss");
  s->set_work(fc, 2.0e6, 1.0e5);
  for (int i = 0; i < 3; ++i) {
    Region r(*s, step);
    {
      Region f(*s, fc);
      spend_still(10'000);
    }  // 10 µs: 200 GFLOP/s
    {
      Region l(*s, loss);
      spend_still(1'000);
    }
  }
  s->begin(loss);  // left open
  RegionProfileOptions options;
  options.machine = test::made_up_calibration(MachineCpu{});
  options.threads = 1;
  options.program = "unit";
  const Profile p = profile_of(*s, options);
  s->end(loss);
  EXPECT_EQ(p.kind, ProfileKind::regions);
  EXPECT_EQ(profile_phase_name(p), "regions");
  ASSERT_EQ(p.layers.size(), 3u);
  const auto layer = [&](const std::string& name) -> const LayerProfile* {
    for (const LayerProfile& l : p.layers) {
      if (l.name == name) return &l;
    }
    return nullptr;
  };
  const LayerProfile* f = layer("fc");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->time_ms.n, 3u);
  EXPECT_EQ(f->flops, 2'000'000);
  EXPECT_EQ(f->bytes, 100'000);
  ASSERT_TRUE(f->roofline.has_value()) << f->roofline_error;
  EXPECT_NEAR(f->roofline->gflops_per_s, 200.0, 1e-6);
  const LayerProfile* l = layer("loss");
  ASSERT_NE(l, nullptr);
  EXPECT_FALSE(l->roofline.has_value()) << "no work was given for loss";
  EXPECT_FALSE(l->roofline_error.empty());
  bool warned = false;
  for (const std::string& w : p.warnings) warned = warned || (contains(w, "loss") && contains(w, "open"));
  EXPECT_TRUE(warned) << "the open region is a warning";
  EXPECT_FALSE(p.call_paths.empty());
  EXPECT_FALSE(p.region_threads.empty());
}

TEST(SessionLifecycle, ProfileOfWithoutAMachineSaysThereIsNoCalibration) {
  auto s = open_timed();
  const int fc = s->region("fc");
  s->set_work(fc, 1e6, 1e5);
  {
    Region r(*s, fc);
    spend_still(1000);
  }
  const Profile p = profile_of(*s, RegionProfileOptions{});
  ASSERT_EQ(p.layers.size(), 1u);
  EXPECT_FALSE(p.layers[0].roofline.has_value());
  EXPECT_FALSE(p.layers[0].roofline_error.empty());
}

// A session fed by hwprof::torch's observer says so, and its profile is a torch profile: a
// program's run like a regions profile (its phase "regions", its call paths and threads), read
// back from profile.json as what it was.
TEST(SessionProfile, ASessionFedByThePyTorchObserverIsATorchProfile) {
  auto s = open_timed();
  const int op = s->region("aten::relu [8x10]");
  observer::set_observer(s->state(), "torch");
  {
    Region r(*s, op);
    spend_still(1000);
  }
  EXPECT_EQ(s->snapshot().observer, "torch");
  const Profile p = profile_of(*s, RegionProfileOptions{});
  EXPECT_EQ(p.kind, ProfileKind::torch);
  EXPECT_TRUE(is_program_run(p.kind));
  EXPECT_EQ(profile_phase_name(p), "regions");
  const auto back = profile_from_json(profile_to_json(p), "profile.json");
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->kind, ProfileKind::torch);
  EXPECT_EQ(back->call_paths.size(), p.call_paths.size());
  auto plain = open_timed();
  EXPECT_EQ(profile_of(*plain, RegionProfileOptions{}).kind, ProfileKind::regions) << "no observer: a regions profile";
}

// ---- the clock ----

TEST(SessionClock, TheTscIsUsedWhereItIsInvariantOrTheKernelsClock) {
  const std::string invariant =
      "processor\t: 0\nflags\t\t: fpu tsc constant_tsc rep_good nopl nonstop_tsc cpuid\n\n"
      "processor\t: 1\nflags\t\t: fpu\n";
  const std::string drifting = "processor\t: 0\nflags\t\t: fpu tsc constant_tsc_x rep_good\n";
  const std::string stops = "flags\t: fpu tsc constant_tsc\n";
#if defined(__x86_64__)
  EXPECT_TRUE(session::decide_tsc(invariant, "kvm-clock\n", "").use);
  EXPECT_TRUE(contains(session::decide_tsc(invariant, "kvm-clock\n", "").reason, "kvm-clock"));
  EXPECT_FALSE(session::decide_tsc(drifting, "hpet\n", "").use) << "a flag is a whole word";
  const session::TscDecision no = session::decide_tsc(stops, "hpet", "");
  EXPECT_FALSE(no.use);
  EXPECT_TRUE(contains(no.reason, "nonstop_tsc")) << no.reason;
  EXPECT_TRUE(session::decide_tsc(stops, "tsc\n", "").use) << "the kernel keeps time with it";
  EXPECT_FALSE(session::decide_tsc(invariant, "tsc\n", "monotonic").use);
  EXPECT_TRUE(session::decide_tsc("", "", "tsc").use);
  EXPECT_FALSE(session::decide_tsc("", "", "").use);
#else
  EXPECT_FALSE(session::decide_tsc(invariant, "tsc", "").use);
#endif
}

TEST(SessionClock, ThisMachinesClockIsNamedWithItsReason) {
  SessionOptions o;
  o.backend = BackendKind::timer;
  o.overhead_pairs = 0;
  auto s = Session::open(o);
  ASSERT_TRUE(s);
  const session::TscClock& tsc = session::tsc_clock();
  EXPECT_FALSE(tsc.reason.empty());
  EXPECT_EQ((*s)->clock_source(), tsc.usable ? "tsc" : "CLOCK_MONOTONIC") << tsc.reason;
  if (tsc.usable) {
    EXPECT_GT(tsc.ns_per_tick, 0.0);
  }
  // Either clock gives a sane region: 2 ms of sleep is 1.5 to 1000 ms (never asserted tighter).
  const int id = (*s)->region("sleep");
  {
    Region r(**s, id);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  const double ns = (*s)->report(id).inclusive_ns.median;
  EXPECT_GT(ns, 1.5e6);
  EXPECT_LT(ns, 1e9);
}

}  // namespace
}  // namespace hwprof
