// The PAPI backend's own code against a fake PAPI (fake_papi.hpp, through the PapiCalls seam):
// library start-up, event names, event sets and their limits, start/stop offsets, every
// thread summed, multiplexing, attach and read failures. Each expected value is a number the
// fake was told (the counts each thread made, PAPI's scale, the clock), not one recomputed by
// the backend's formulas. Needs no PMU and no working PAPI.
#include <climits>
#include <cstring>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <pthread.h>

#include "common/stages.hpp"
#include "counters/papi_backend.hpp"
#include "fake_papi.hpp"
#include "hwprof/counters.hpp"

namespace hwprof::counters {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::unique_ptr<CounterSet> open_events(std::vector<std::string> names, pid_t pid = 0) {
  CounterOptions options;
  options.backend = BackendKind::papi;
  options.events = std::move(names);
  options.pid = pid;
  return open_papi(options);
}

CounterSnapshot snapshot(CounterSet& set) {
  CounterSnapshot s;
  set.read(s);
  return s;
}

std::string describe(const EventInfo& event) {
  return event.name + ": " + std::string(counter_status_name(event.status)) + ": " + event.reason;
}

std::vector<CounterStatus> statuses(const CounterSet& set) {
  std::vector<CounterStatus> out;
  for (const EventInfo& event : set.events()) out.push_back(event.status);
  return out;
}

// --- the library ---

TEST(PapiFake, TheLibraryStartsOnceWithThreadSupportBeforeAnyEventSet) {
  FakePapi papi;
  papi.lib_version = PAPI_VERSION_NUMBER(7, 1, 2, 3);
  auto first = open_events({"PAPI_TOT_CYC"});
  auto second = open_events({"PAPI_TOT_INS"});
  EXPECT_EQ(papi.calls["PAPI_library_init"], 1);
  EXPECT_EQ(papi.calls["PAPI_thread_init"], 1);
  EXPECT_EQ(papi.calls["PAPI_multiplex_init"], 1);
  ASSERT_GE(papi.order.size(), 4u);
  EXPECT_THAT(std::vector<std::string>(papi.order.begin(), papi.order.begin() + 3),
              ElementsAre("PAPI_library_init", "PAPI_thread_init", "PAPI_multiplex_init"));
  ASSERT_NE(papi.thread_id_function, nullptr);
  EXPECT_EQ(papi.thread_id_function(), static_cast<unsigned long>(::pthread_self()));
  EXPECT_EQ(papi_version(), "7.1.2.3");
}

TEST(PapiFake, ALibraryOfAnotherVersionMakesEveryEventUnsupportedWithTheReason) {
  FakePapi papi;
  papi.library_init_answer = PAPI_VERSION_NUMBER(6, 0, 0, 0);
  auto set = open_events({"PAPI_TOT_CYC", "perf::TASK-CLOCK"});
  for (const EventInfo& event : set->events()) {
    EXPECT_EQ(event.status, CounterStatus::unsupported);
    EXPECT_EQ(event.reason, "the installed libpapi is not the version hwprof was built against; rebuild hwprof");
  }
  EXPECT_EQ(papi.calls["PAPI_create_eventset"], 0);
  std::string why;
  EXPECT_EQ(papi_version(&why), "");
  EXPECT_EQ(why, "the installed libpapi is not the version hwprof was built against; rebuild hwprof");
  EXPECT_TRUE(papi_components().empty());
  const CounterSnapshot s = snapshot(*set);
  EXPECT_FALSE(s.valid[0]);
  EXPECT_FALSE(s.valid[1]);
}

TEST(PapiFake, ALibraryThatCannotStartSaysPapisError) {
  FakePapi papi;
  papi.library_init_answer = PAPI_ESYS;
  auto set = open_events({"PAPI_TOT_CYC"});
  EXPECT_EQ(set->events()[0].status, CounterStatus::unsupported);
  EXPECT_EQ(set->events()[0].reason, "PAPI could not initialise: PAPI_library_init failed: [fake ESYS] (-3)");
}

TEST(PapiFake, ComponentsAreListedWithWhyTheyAreOff) {
  FakePapi papi;
  papi.components[FakePapi::kUncore].disabled = PAPI_ECMP;
  std::strcpy(papi.components[FakePapi::kUncore].disabled_reason, "no uncore PMU here");
  const std::vector<PapiComponent> components = papi_components();
  ASSERT_EQ(components.size(), 3u);
  EXPECT_EQ(components[0].name, "perf_event");
  EXPECT_TRUE(components[0].enabled);
  EXPECT_EQ(components[0].reason, "");
  EXPECT_EQ(components[1].name, "perf_event_uncore");
  EXPECT_FALSE(components[1].enabled);
  EXPECT_EQ(components[1].reason, "no uncore PMU here");
}

// --- event names ---

TEST(PapiFake, PresetsAndPerfNamesOpenUnknownNamesSayWhy) {
  FakePapi papi;
  papi.events["perf::CYCLES"].query_error = PAPI_ENOSUPP;
  auto set = open_events({"PAPI_TOT_CYC", "perf::TASK-CLOCK", "no::SUCH", "PAPI_FP_OPS", "perf::CYCLES"});
  const auto& events = set->events();
  ASSERT_EQ(events.size(), 5u);
  EXPECT_EQ(events[0].status, CounterStatus::ok) << describe(events[0]);
  EXPECT_EQ(events[0].unit, "count");
  EXPECT_EQ(events[1].status, CounterStatus::ok) << describe(events[1]);
  EXPECT_EQ(events[1].unit, "ns");  // PAPI leaves the clocks' unit empty
  EXPECT_EQ(events[2].status, CounterStatus::unsupported);
  EXPECT_EQ(events[2].reason,
            "PAPI does not know the event 'no::SUCH' ([fake ENOEVNT] (-7)); `papi_avail` lists the presets and `papi_native_avail` the native names");
  EXPECT_EQ(events[3].status, CounterStatus::unsupported);
  EXPECT_EQ(events[3].reason, "PAPI's preset PAPI_FP_OPS maps to no event of this machine (PAPI_query_event: [fake ENOEVNT] (-7))");
  EXPECT_EQ(events[4].status, CounterStatus::unsupported);
  EXPECT_EQ(events[4].reason, "PAPI cannot count 'perf::CYCLES' here (PAPI_query_event: [fake ENOSUPP] (-18))");
  ASSERT_EQ(papi.running_eventsets().size(), 1u);
  EXPECT_THAT(papi.running_eventsets()[0]->codes, ElementsAre(PAPI_TOT_CYC, papi.code_of("perf::TASK-CLOCK")));
}

TEST(PapiFake, OnAMachineWithoutAPmuTheReasonsSaySo) {
  FakePapi papi;
  papi.hardware_pmu = false;
  auto set = open_events({"PAPI_FP_OPS"});
  EXPECT_EQ(set->events()[0].reason,
            "PAPI's preset PAPI_FP_OPS maps to no event of this machine (PAPI_query_event: [fake ENOEVNT] (-7)); this machine exposes no "
            "hardware PMU (a virtual machine without PMU passthrough?); only software events such as perf::TASK-CLOCK and "
            "perf::PAGE-FAULTS can be counted here");
}

TEST(PapiFake, ADisabledPerfEventComponentIsNamedInEveryReason) {
  FakePapi papi;
  papi.hardware_pmu = false;
  papi.components[FakePapi::kPerfEvent].disabled = PAPI_ECMP;
  std::strcpy(papi.components[FakePapi::kPerfEvent].disabled_reason, "libpfm4 no default PMU found");
  papi.events.erase("perf::TASK-CLOCK");  // a disabled component lists no event
  auto set = open_events({"perf::TASK-CLOCK"});
  EXPECT_EQ(set->events()[0].status, CounterStatus::unsupported);
  EXPECT_THAT(set->events()[0].reason, StartsWith("PAPI does not know the event 'perf::TASK-CLOCK' ([fake ENOEVNT] (-7)); "));
  EXPECT_THAT(set->events()[0].reason, HasSubstr("; PAPI's perf_event component is disabled here (\"libpfm4 no default PMU found\"): this "
                                                 "machine exposes no hardware PMU"));
  EXPECT_THAT(set->events()[0].reason, HasSubstr("count them with the perf backend (--backend perf)"));
}

TEST(PapiFake, ANameGivenTwiceIsCountedOnceAndReportedTwice) {
  FakePapi papi;
  auto set = open_events({"PAPI_TOT_INS", "PAPI_TOT_CYC", "PAPI_TOT_INS"});
  ASSERT_EQ(papi.running_eventsets().size(), 1u);
  EXPECT_THAT(papi.running_eventsets()[0]->codes, ElementsAre(PAPI_TOT_INS, PAPI_TOT_CYC));
  set->start();
  papi.work(FakePapi::kCallingThread, "PAPI_TOT_INS", 500);
  papi.work(FakePapi::kCallingThread, "PAPI_TOT_CYC", 70);
  set->stop();
  const CounterSnapshot s = snapshot(*set);
  EXPECT_EQ(s.value[0], 500u);
  EXPECT_EQ(s.value[1], 70u);
  EXPECT_EQ(s.value[2], 500u);
}

TEST(PapiFake, MoreEventsThanASetHoldsAreRefusedOneByOne) {
  FakePapi papi;
  std::vector<std::string> names(kMaxCounterEvents + 1, "PAPI_TOT_CYC");
  auto set = open_events(names);
  ASSERT_EQ(set->events().size(), kMaxCounterEvents + 1);
  EXPECT_EQ(set->events()[kMaxCounterEvents - 1].status, CounterStatus::ok);
  EXPECT_EQ(set->events()[kMaxCounterEvents].status, CounterStatus::unsupported);
  EXPECT_EQ(set->events()[kMaxCounterEvents].reason, "more than 64 events in one set; split them into several sets");
}

// --- event sets ---

TEST(PapiFake, AnEventPapiRefusesKeepsItsReasonAndTheOthersCount) {
  FakePapi papi;
  papi.events["perf::CYCLES"].add_error = PAPI_EPERM;
  papi.events["perf::PAGE-FAULTS"].add_error = PAPI_ECNFLCT;
  papi.events["PAPI_TOT_INS"].add_error = PAPI_ESYS;
  auto set = open_events({"perf::CYCLES", "perf::PAGE-FAULTS", "PAPI_TOT_INS", "PAPI_TOT_CYC"});
  const auto& events = set->events();
  EXPECT_THAT(statuses(*set), ElementsAre(CounterStatus::no_permission, CounterStatus::not_counted, CounterStatus::not_counted, CounterStatus::ok));
  EXPECT_THAT(events[0].reason, StartsWith("PAPI could not open 'perf::CYCLES' (PAPI_add_event: [fake EPERM] (-15)); counting is not permitted"));
  EXPECT_EQ(events[1].reason,
            "PAPI could not open 'perf::PAGE-FAULTS' (PAPI_add_event: [fake ECNFLCT] (-8)); the PMU has no free counter for it (another "
            "profiler or the NMI watchdog may hold some)");
  EXPECT_THAT(events[2].reason, StartsWith("PAPI could not open 'PAPI_TOT_INS' (PAPI_add_event: [fake ESYS] (-3)); the kernel refused the counter"));
  set->start();
  papi.work(FakePapi::kCallingThread, "PAPI_TOT_CYC", 40);
  set->stop();
  const CounterSnapshot s = snapshot(*set);
  EXPECT_FALSE(s.valid[0]);
  EXPECT_FALSE(s.valid[1]);
  EXPECT_FALSE(s.valid[2]);
  EXPECT_TRUE(s.valid[3]);
  EXPECT_EQ(s.value[3], 40u);
}

TEST(PapiFake, AnEventOfAnotherComponentNeedsASetOfItsOwn) {
  FakePapi papi;
  auto set = open_events({"PAPI_TOT_CYC", "perf_event_uncore::CAS_COUNT_READ", "powercap:::ENERGY_UJ:ZONE0"});
  EXPECT_THAT(statuses(*set), ElementsAre(CounterStatus::ok, CounterStatus::unsupported, CounterStatus::unsupported));
  EXPECT_EQ(set->events()[1].reason,
            "a PAPI set counts the events of one component, here perf_event; 'perf_event_uncore::CAS_COUNT_READ' is in perf_event_uncore: "
            "count it in a set of its own");
  EXPECT_EQ(set->events()[2].reason,
            "PAPI's powercap component cannot attach to a thread and pass its counters on to new threads, so it cannot count every "
            "thread of the process");
}

TEST(PapiFake, EveryEventSetIsDestroyedWithTheSet) {
  FakePapi papi;
  papi.listings[0] = {{100, 101, 102}};
  auto set = open_events({"PAPI_TOT_CYC", "PAPI_TOT_INS", "perf::CYCLES"});  // probes, a multiplex check, 3 threads
  EXPECT_EQ(papi.live_eventsets(), 3);
  EXPECT_GT(papi.eventsets.size(), 3u);
  set.reset();
  EXPECT_EQ(papi.live_eventsets(), 0);
}

// --- counting: offsets, threads, the reading cost, time ---

TEST(PapiFake, ARegionCountsWhatHappenedBetweenStartAndStopOnly) {
  FakePapi papi;
  auto set = open_events({"PAPI_TOT_CYC"});
  papi.work(FakePapi::kCallingThread, "PAPI_TOT_CYC", 1000);  // counted by PAPI, before the region
  set->start();
  papi.work(FakePapi::kCallingThread, "PAPI_TOT_CYC", 250);
  set->stop();
  papi.work(FakePapi::kCallingThread, "PAPI_TOT_CYC", 4000);  // after it
  EXPECT_EQ(snapshot(*set).value[0], 250u);
  set->start();
  papi.work(FakePapi::kCallingThread, "PAPI_TOT_CYC", 70);
  set->stop();
  EXPECT_EQ(snapshot(*set).value[0], 320u);
  // The event set ran throughout: started once when it opened, never stopped or reset.
  ASSERT_EQ(papi.running_eventsets().size(), 1u);
  EXPECT_EQ(papi.running_eventsets()[0]->starts, 1);
}

// The backend subtracts nothing: each PAPI_read counts itself (3 here), so a region holds the
// reads that fall inside it; the profiler's probe region measures that and removes it.
TEST(PapiFake, TheBackendsOwnReadsLandInTheRegionAsTheyHappen) {
  FakePapi papi;
  papi.read_cost = 3;
  auto set = open_events({"PAPI_TOT_INS"});
  set->start();  // read 1: before its sample, so outside the region
  papi.work(FakePapi::kCallingThread, "PAPI_TOT_INS", 250);
  EXPECT_EQ(snapshot(*set).value[0], 253u);  // read 2
  set->stop();                               // read 3
  EXPECT_EQ(snapshot(*set).value[0], 256u);  // stopped: no read
  EXPECT_EQ(papi.calls["PAPI_read"], 3);
}

TEST(PapiFake, TimeEnabledIsTheTimeBetweenStartsAndStops) {
  FakePapi papi;
  papi.clock_ns = 5000;
  auto set = open_events({"PAPI_TOT_CYC"});
  set->start();
  papi.clock_ns = 7000;
  CounterSnapshot s = snapshot(*set);
  EXPECT_EQ(s.time_enabled[0], 2000u);
  EXPECT_EQ(s.time_running[0], 2000u);
  papi.clock_ns = 9000;
  set->stop();
  papi.clock_ns = 20000;
  s = snapshot(*set);
  EXPECT_EQ(s.time_enabled[0], 4000u);
  EXPECT_EQ(s.time_running[0], 4000u);
}

TEST(PapiFake, EveryThreadHasItsOwnAttachedInheritingSetAndTheyAreSummed) {
  FakePapi papi;
  papi.listings[0] = {{100, 101, 102}};
  auto set = open_events({"PAPI_TOT_CYC", "PAPI_TOT_INS"});
  ASSERT_EQ(papi.running_eventsets().size(), 3u);
  std::vector<unsigned long> attached;
  for (const FakePapi::Eventset* eventset : papi.running_eventsets()) {
    attached.push_back(eventset->attached);
    EXPECT_EQ(eventset->inherit, PAPI_INHERIT_ALL);
    EXPECT_FALSE(eventset->multiplex);
  }
  EXPECT_THAT(attached, ElementsAre(100u, 101u, 102u));
  set->start();
  papi.work(100, "PAPI_TOT_CYC", 100);
  papi.work(101, "PAPI_TOT_CYC", 20);
  papi.work(102, "PAPI_TOT_CYC", 3);
  papi.work(100, "PAPI_TOT_INS", 4000);
  papi.work(101, "PAPI_TOT_INS", 500);
  papi.work(102, "PAPI_TOT_INS", 60);
  set->stop();
  const CounterSnapshot s = snapshot(*set);
  EXPECT_EQ(s.value[0], 123u);
  EXPECT_EQ(s.value[1], 4560u);
  for (const EventInfo& event : set->events()) EXPECT_EQ(event.status, CounterStatus::ok) << describe(event);
}

TEST(PapiFake, AChildProcessIsCountedOnEachOfItsThreads) {
  FakePapi papi;
  papi.listings[4242] = {{4242, 4243}};
  auto set = open_events({"PAPI_TOT_CYC"}, 4242);
  EXPECT_EQ(set->events()[0].status, CounterStatus::ok) << describe(set->events()[0]);
  set->start();
  papi.work(4242, "PAPI_TOT_CYC", 11);
  papi.work(4243, "PAPI_TOT_CYC", 900);
  papi.work(FakePapi::kCallingThread, "PAPI_TOT_CYC", 50000);  // the profiler itself
  set->stop();
  EXPECT_EQ(snapshot(*set).value[0], 911u);
}

// --- multiplexing ---

TEST(PapiFake, EventsBeyondTheComponentsCountersAreMultiplexedWithPapisScaledValues) {
  FakePapi papi;  // perf_event has 2 counters here
  papi.listings[0] = {{100, 101}};
  papi.multiplex_scale = 3;  // each ran a third of the time
  papi.clock_ns = 0;
  auto set = open_events({"PAPI_TOT_CYC", "PAPI_TOT_INS", "perf::CYCLES"});
  for (const EventInfo& event : set->events()) {
    EXPECT_EQ(event.status, CounterStatus::ok) << describe(event);
    EXPECT_THAT(event.reason, StartsWith("multiplexed: the events of this set do not fit on the PMU's counters at once;"));
  }
  ASSERT_EQ(papi.running_eventsets().size(), 2u);
  for (const FakePapi::Eventset* eventset : papi.running_eventsets()) EXPECT_TRUE(eventset->multiplex);
  const CounterSnapshot before = snapshot(*set);
  set->start();
  papi.work(100, "PAPI_TOT_CYC", 10);
  papi.work(101, "PAPI_TOT_CYC", 20);
  papi.work(100, "PAPI_TOT_INS", 1);
  papi.work(101, "PAPI_TOT_INS", 2);
  papi.work(100, "perf::CYCLES", 100);
  papi.work(101, "perf::CYCLES", 200);
  papi.clock_ns = 600;
  set->stop();
  const std::vector<CounterReading> r = readings_between(*set, before, snapshot(*set));
  EXPECT_DOUBLE_EQ(r[0].value, 90.0);
  EXPECT_DOUBLE_EQ(r[1].value, 9.0);
  EXPECT_DOUBLE_EQ(r[2].value, 900.0);
  // PAPI does not say what fraction ran: the reading carries PAPI's value as counted throughout,
  // and the event's reason says it was multiplexed.
  EXPECT_EQ(r[0].status, CounterStatus::ok);
  EXPECT_DOUBLE_EQ(r[0].running_fraction, 1.0);
}

TEST(PapiFake, AMultiplexedTotalThatPapiScaledDownIsNotCountedRatherThanNegative) {
  FakePapi papi;
  papi.multiplex_scale = 3;
  auto set = open_events({"PAPI_TOT_CYC", "PAPI_TOT_INS", "perf::CYCLES"});
  set->start();
  papi.work(FakePapi::kCallingThread, "PAPI_TOT_CYC", 300);
  const CounterSnapshot before = snapshot(*set);  // PAPI says 900
  EXPECT_EQ(before.value[0], 900u);
  papi.multiplex_scale = 2;
  papi.work(FakePapi::kCallingThread, "PAPI_TOT_CYC", 100);
  papi.clock_ns += 1000;
  const CounterSnapshot after = snapshot(*set);  // PAPI says 800
  EXPECT_EQ(after.value[0], 800u);
  EXPECT_EQ(readings_between(*set, before, after)[0].status, CounterStatus::not_counted);
}

TEST(PapiFake, EventsThatDoNotFitAndCannotBeMultiplexedAreNotCounted) {
  FakePapi papi;
  papi.multiplex_init_answer = PAPI_ENOSUPP;
  auto set = open_events({"PAPI_TOT_CYC", "PAPI_TOT_INS", "perf::CYCLES", "no::SUCH"});
  EXPECT_THAT(statuses(*set),
              ElementsAre(CounterStatus::not_counted, CounterStatus::not_counted, CounterStatus::not_counted, CounterStatus::unsupported));
  EXPECT_EQ(set->events()[0].reason,
            "these events do not fit on the PMU's counters at once (PAPI_add_event: [fake ECNFLCT] (-8)) and PAPI cannot multiplex "
            "(PAPI_multiplex_init: [fake ENOSUPP] (-18)); count fewer events per set");
  EXPECT_EQ(papi.live_eventsets(), 0);
  set->start();
  set->stop();
  const CounterSnapshot s = snapshot(*set);
  for (int e = 0; e < 4; ++e) EXPECT_FALSE(s.valid[e]);
}

// --- threads PAPI cannot attach to ---

TEST(PapiFake, AThreadPapiCannotAttachToMakesTheValueUnreported) {
  FakePapi papi;
  papi.listings[0] = {{100, 101, 102}};
  papi.attach_errors[101] = PAPI_EPERM;
  auto set = open_events({"PAPI_TOT_CYC"});
  const EventInfo& event = set->events()[0];
  EXPECT_EQ(event.status, CounterStatus::no_permission);
  EXPECT_THAT(event.reason, StartsWith("PAPI could not count 1 of 3 threads (thread 101: PAPI_attach: [fake EPERM] (-15)); a value that "
                                       "misses threads would be wrong, so it is not reported; counting is not permitted"));
  const CounterSnapshot before = snapshot(*set);
  set->start();
  papi.work(100, "PAPI_TOT_CYC", 5);
  papi.clock_ns += 100;
  set->stop();
  EXPECT_FALSE(readings_between(*set, before, snapshot(*set))[0].has_value());
}

TEST(PapiFake, AThreadThatFailsToStartIsMissedWithPapisReason) {
  FakePapi papi;
  papi.listings[0] = {{100, 101, 102}};
  papi.start_errors[102] = PAPI_ECNFLCT;
  auto set = open_events({"PAPI_TOT_CYC"});
  EXPECT_EQ(set->events()[0].status, CounterStatus::not_counted);
  EXPECT_THAT(set->events()[0].reason, StartsWith("PAPI could not count 1 of 3 threads (thread 102: PAPI_start: [fake ECNFLCT] (-8));"));
  EXPECT_THAT(set->events()[0].reason, HasSubstr("the PMU has no free counter for it"));
}

TEST(PapiFake, AThreadThatEndedWhileAttachingIsNotMissed) {
  FakePapi papi;
  papi.listings[0] = {{100, 101, 102}};
  papi.attach_errors[101] = PAPI_ESYS;
  papi.ended = {101};
  auto set = open_events({"PAPI_TOT_CYC"});
  EXPECT_EQ(set->events()[0].status, CounterStatus::ok) << describe(set->events()[0]);
  std::vector<unsigned long> attached;
  for (const FakePapi::Eventset* eventset : papi.running_eventsets()) attached.push_back(eventset->attached);
  EXPECT_THAT(attached, ElementsAre(100u, 102u));
}

TEST(PapiFake, WhenNoThreadCanBeAttachedOnlyTheCallingThreadCountsAndIsNotReported) {
  FakePapi papi;
  papi.listings[0] = {{100, 101}};
  papi.inherit_error = PAPI_ECMP;
  papi.hardware_pmu = false;
  auto set = open_events({"PAPI_TOT_CYC"});
  EXPECT_EQ(set->events()[0].status, CounterStatus::not_counted);
  EXPECT_EQ(set->events()[0].reason,
            "PAPI could not attach to the threads of this process (PAPI_set_opt(PAPI_INHERIT): [fake ECMP] (-4)): PAPI 7 checks that "
            "attaching and inheriting are allowed by opening the hardware instructions event (perf_event.c, check_permissions), which a "
            "machine without a PMU does not have; it counts only the calling thread, which would miss the others, so the value is not "
            "reported; the perf backend (--backend perf) counts every thread");
  ASSERT_EQ(papi.running_eventsets().size(), 1u);
  EXPECT_EQ(papi.running_eventsets()[0]->attached, 0u);
}

TEST(PapiFake, AnotherProcessPapiCannotAttachToCountsNothing) {
  FakePapi papi;
  papi.listings[4242] = {{4242}};
  papi.attach_errors[4242] = PAPI_EPERM;
  auto set = open_events({"PAPI_TOT_CYC"}, 4242);
  EXPECT_EQ(set->events()[0].status, CounterStatus::no_permission);
  EXPECT_THAT(set->events()[0].reason, StartsWith("PAPI could not attach to the threads of process 4242 (PAPI_attach: [fake EPERM] (-15)); "
                                                  "the perf backend (--backend perf) counts every thread; counting is not permitted"));
  EXPECT_EQ(papi.live_eventsets(), 0);
  EXPECT_FALSE(snapshot(*set).valid[0]);
}

TEST(PapiFake, AnErrorPapiHasNoTextForIsStillNamedByItsCode) {
  FakePapi papi;
  papi.listings[4242] = {{4242}};
  papi.attach_errors[4242] = PAPI_EMISC;  // PAPI_strerror answers NULL
  auto set = open_events({"PAPI_TOT_CYC"}, 4242);
  EXPECT_EQ(set->events()[0].status, CounterStatus::not_counted);
  EXPECT_EQ(set->events()[0].reason,
            "PAPI could not attach to the threads of process 4242 (PAPI_attach: unknown PAPI error (-14)); the perf backend (--backend perf) "
            "counts every thread");
}

TEST(PapiFake, AProcessWithNoThreadIsNoSuchProcess) {
  FakePapi papi;
  auto set = open_events({"PAPI_TOT_CYC"}, 4242);
  EXPECT_EQ(set->events()[0].status, CounterStatus::unsupported);
  EXPECT_EQ(set->events()[0].reason, "no such process: /proc/4242/task lists no thread");
}

TEST(PapiFake, AThreadThatStartsWhileAttachingIsAttachedInTheNextRound) {
  FakePapi papi;
  papi.listings[0] = {{100}, {100, 101}};  // the second listing, and every one after it, has 101
  auto set = open_events({"PAPI_TOT_CYC"});
  EXPECT_EQ(set->events()[0].status, CounterStatus::ok) << describe(set->events()[0]);
  std::vector<unsigned long> attached;
  for (const FakePapi::Eventset* eventset : papi.running_eventsets()) attached.push_back(eventset->attached);
  EXPECT_THAT(attached, ElementsAre(100u, 101u));
  EXPECT_EQ(papi.live_eventsets(), 2);  // the first round's set was closed
}

TEST(PapiFake, ThreadsThatKeepStartingAreNotCounted) {
  FakePapi papi;
  std::vector<std::vector<pid_t>> listings;
  for (pid_t n = 1; n <= 20; ++n) {
    std::vector<pid_t> tids;
    for (pid_t tid = 100; tid < 100 + n; ++tid) tids.push_back(tid);
    listings.push_back(tids);
  }
  papi.listings[0] = listings;
  auto set = open_events({"PAPI_TOT_CYC"});
  EXPECT_EQ(set->events()[0].status, CounterStatus::not_counted);
  EXPECT_THAT(set->events()[0].reason, StartsWith("threads kept starting while PAPI attached to them"));
}

// --- reads that fail ---

TEST(PapiFake, AReadThatFailsMidRunIsUnavailableNeverZero) {
  FakePapi papi;
  auto set = open_events({"PAPI_TOT_CYC"});
  set->start();
  papi.work(FakePapi::kCallingThread, "PAPI_TOT_CYC", 50);
  papi.clock_ns += 100;
  const CounterSnapshot before = snapshot(*set);
  EXPECT_TRUE(before.valid[0]);
  papi.read_error = PAPI_ESYS;
  papi.clock_ns += 100;
  const CounterSnapshot failed = snapshot(*set);
  EXPECT_FALSE(failed.valid[0]);
  const CounterReading r = readings_between(*set, before, failed)[0];
  EXPECT_EQ(r.status, CounterStatus::not_counted);
  EXPECT_FALSE(r.has_value());
  // The running total is kept: start and stop read well, so the region is whole.
  papi.read_error = PAPI_OK;
  papi.work(FakePapi::kCallingThread, "PAPI_TOT_CYC", 30);
  set->stop();
  EXPECT_EQ(snapshot(*set).value[0], 80u);
}

TEST(PapiFake, AReadThatFailsAtStopLosesTheTotalForGood) {
  FakePapi papi;
  auto set = open_events({"PAPI_TOT_CYC"});
  set->start();
  papi.work(FakePapi::kCallingThread, "PAPI_TOT_CYC", 50);
  papi.read_error = PAPI_ECLOST;
  set->stop();
  papi.read_error = PAPI_OK;
  EXPECT_FALSE(snapshot(*set).valid[0]);
  set->start();
  papi.work(FakePapi::kCallingThread, "PAPI_TOT_CYC", 50);
  set->stop();
  EXPECT_FALSE(snapshot(*set).valid[0]);
}

TEST(PapiFake, AReadThatFailsAtStartLosesTheTotalForGood) {
  FakePapi papi;
  auto set = open_events({"PAPI_TOT_CYC"});
  papi.read_error = PAPI_ESYS;
  set->start();
  papi.read_error = PAPI_OK;
  papi.work(FakePapi::kCallingThread, "PAPI_TOT_CYC", 50);
  set->stop();
  EXPECT_FALSE(snapshot(*set).valid[0]);
}

TEST(PapiFake, AFailedReadOfOneThreadSpoilsTheSum) {
  FakePapi papi;
  papi.listings[0] = {{100, 101}};
  auto set = open_events({"PAPI_TOT_CYC"});
  set->start();
  papi.work(100, "PAPI_TOT_CYC", 10);
  papi.work(101, "PAPI_TOT_CYC", 10);
  papi.read_error = PAPI_ESYS;
  papi.read_error_thread = 101;
  EXPECT_FALSE(snapshot(*set).valid[0]);  // 10 from thread 100 alone would be short
}

TEST(PapiFake, CountsNoCounterCanHoldAreUnavailableNotWrapped) {
  FakePapi papi;
  papi.listings[0] = {{100, 101}};
  auto set = open_events({"PAPI_TOT_CYC"});
  set->start();
  papi.work(100, "PAPI_TOT_CYC", LLONG_MAX);
  papi.work(101, "PAPI_TOT_CYC", 1);
  EXPECT_FALSE(snapshot(*set).valid[0]);
}

TEST(PapiFake, CountingFromExecIsRefused) {
  FakePapi papi;
  CounterOptions options;
  options.backend = BackendKind::papi;
  options.events = {"PAPI_TOT_CYC"};
  options.enable_on_exec = true;
  auto set = open_papi(options);
  EXPECT_EQ(set->events()[0].status, CounterStatus::unsupported);
  EXPECT_THAT(set->events()[0].reason, StartsWith("PAPI cannot start counters at exec (it has no enable_on_exec option)"));
  EXPECT_EQ(papi.calls["PAPI_create_eventset"], 0);
}

}  // namespace
}  // namespace hwprof::counters
