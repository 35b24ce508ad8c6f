// Entering and leaving regions allocates nothing (docs/design.md, "Rules every part
// keeps": the measured path allocates nothing): begin/end, Region and HWPROF_REGION, nested,
// time-only regions and added work, on the timer-only path, with
// counters read (perf software events, falling back to the timer backend's clocks where the
// kernel refuses them), and on a second thread. A binary of its own, since it replaces the
// global operator new to count allocations.
#include <thread>

#include <gtest/gtest.h>

#include "counting_new.hpp"
#include "hwprof/session.hpp"
#include "session/observer_hooks.hpp"

namespace hwprof {
namespace {

using test::allocations;

std::unique_ptr<Session> open_session(BackendKind backend, std::vector<std::string> events) {
  SessionOptions o;
  o.backend = backend;
  o.events = std::move(events);
  o.overhead_pairs = 100;
  o.on_hint = [](const std::string&) {};
  auto s = Session::open(o);
  EXPECT_TRUE(s) << (s ? "" : s.error().message);
  return s ? std::move(*s) : nullptr;
}

// Nested begin/end, Region and the macro; registration happens before `at_start`.
long allocations_while_measuring(Session& s) {
  const int outer = s.region("outer");
  const int inner = s.region("inner");
  const int timed = s.region("time only");
  auto pass = [&] {
    s.begin(outer);
    {
      Region r(s, inner);
      HWPROF_REGION(s, "macro");
      observer::enter_time_only(s.state(), timed);  // the PyTorch observer's nested ops
      Session::leave(s.state(), timed);
      observer::add_work(s.state(), timed, 2.0, 8.0);
    }
    s.end(outer);
  };
  pass();  // the macro's site registers its name here, once
  const long at_start = allocations.load();
  for (int i = 0; i < 200; ++i) pass();
  const long added = allocations.load() - at_start;
  EXPECT_EQ(s.report(outer).calls, 201u);
  return added;
}

TEST(SessionNoAllocation, TimeOnly) {
  auto s = open_session(BackendKind::timer, {});
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->time_only());
  EXPECT_EQ(allocations_while_measuring(*s), 0);
}

TEST(SessionNoAllocation, TimerClocksRead) {
  auto s = open_session(BackendKind::timer, {"wall-time", "process-cpu-time", "thread-cpu-time"});
  ASSERT_TRUE(s);
  ASSERT_FALSE(s->time_only());
  EXPECT_EQ(allocations_while_measuring(*s), 0);
}

TEST(SessionNoAllocation, PerfSoftwareEventsRead) {
  auto s = open_session(BackendKind::perf, {"task-clock", "page-faults", "cycles"});
  ASSERT_TRUE(s);
  if (s->time_only()) GTEST_SKIP() << "no perf event opens here: " << s->events()[0].reason;
  EXPECT_EQ(allocations_while_measuring(*s), 0);
}

TEST(SessionNoAllocation, ASecondThread) {
  auto s = open_session(BackendKind::timer, {"wall-time"});
  ASSERT_TRUE(s);
  const int id = s->region("worker");
  long added = -1;
  std::thread worker([&] {
    const long at_start = allocations.load();
    for (int i = 0; i < 201; ++i) {  // the first begin claims this thread's slot
      s->begin(id);
      s->end(id);
    }
    added = allocations.load() - at_start;
  });
  worker.join();
  EXPECT_EQ(added, 0);
  EXPECT_EQ(s->report(id).calls, 201u);
}

}  // namespace
}  // namespace hwprof
