// Contention rules on recorded /proc texts: what other processes used, what the hypervisor
// stole, who the neighbours were, and when that disturbs a calibration.
#include <gtest/gtest.h>

#include "calibrate/contention.hpp"
#include "common/stages.hpp"

namespace hwprof::calibration {
namespace {

// /proc/stat of a 2-CPU guest (proc(5): user nice system idle iowait irq softirq steal guest guest_nice).
const char* kStatBefore =
    "cpu  1000 10 500 90000 100 0 20 30 0 0\n"
    "cpu0 500 5 250 45000 50 0 10 15 0 0\n"
    "cpu1 500 5 250 45000 50 0 10 15 0 0\n"
    "intr 123456 0 0\n"
    "ctxt 987654\n"
    "procs_running 3\n"
    "procs_blocked 0\n";

TEST(Contention, ProcStatParsesTheAggregateLine) {
  const auto stat = parse_proc_stat(kStatBefore);
  ASSERT_TRUE(stat.has_value());
  EXPECT_EQ(stat->all.busy, 1000u + 10 + 500 + 0 + 20);
  EXPECT_EQ(stat->all.idle, 90000u + 100);
  EXPECT_EQ(stat->all.steal, 30u);
  EXPECT_EQ(stat->all.interrupts, 0u + 20);
  EXPECT_EQ(stat->procs_running, 3);
  EXPECT_FALSE(parse_proc_stat("intr 1\n").has_value());
  EXPECT_FALSE(parse_proc_stat("cpu 1 2\n").has_value()) << "too few fields";
  EXPECT_TRUE(parse_proc_stat("cpu 1 2 3 4\n").has_value()) << "an old kernel's four fields";
}

TEST(Contention, ProcessStatTakesTheNameUpToTheLastParenthesis) {
  const auto p = parse_process_stat("4242 (stress-ng (cpu) x) R 1 4242 4242 0 -1 4194560 100 0 0 0 750 25 0 0 20 0 1 0");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->pid, 4242);
  EXPECT_EQ(p->name, "stress-ng (cpu) x");
  EXPECT_EQ(p->ticks, 775u);
  EXPECT_FALSE(parse_process_stat("garbage").has_value());
  EXPECT_FALSE(parse_process_stat("12 (short) R 1 2").has_value());
  EXPECT_FALSE(parse_process_stat("x (name) R 1 2 3 4 5 6 7 8 9 10 11 12 13").has_value());
}

LoadSnapshot snapshot(double wall, std::uint64_t busy, std::uint64_t idle, std::uint64_t steal, double own) {
  LoadSnapshot s;
  s.wall_seconds = wall;
  s.stat.all = {busy, idle, steal};
  s.own_cpu_seconds = own;
  return s;
}

TEST(Contention, OthersAreTheBusyTimeThisProcessDidNotUse) {
  // Two CPUs, 2 s at 100 ticks per second: 400 ticks. Busy 380, this process 2.0 s: others 1.8 s → 0.9 CPUs.
  const Load busy = load_between(snapshot(10, 1000, 5000, 0, 1.0), snapshot(12, 1380, 5020, 0, 3.0), 100);
  ASSERT_TRUE(busy.known);
  EXPECT_NEAR(busy.others_cpus, 0.9, 1e-9);
  EXPECT_TRUE(contended(busy, 2));
  EXPECT_TRUE(contended(busy, 16)) << "0.9 CPUs is more than 5 % of 16";
  EXPECT_FALSE(contended(busy, 64)) << "a 64-CPU machine's daemons: under 5 % of it";
  EXPECT_NE(describe(busy).find("0.90 CPUs"), std::string::npos) << describe(busy);
  // Quiet: the process had the machine.
  const Load quiet = load_between(snapshot(10, 1000, 5000, 0, 1.0), snapshot(12, 1205, 5195, 0, 3.0), 100);
  EXPECT_NEAR(quiet.others_cpus, 0.025, 1e-9);
  EXPECT_FALSE(contended(quiet, 2));
  // The hypervisor took 10 % of the time.
  const Load stolen = load_between(snapshot(10, 1000, 5000, 0, 1.0), snapshot(12, 1300, 5060, 40, 3.0), 100);
  EXPECT_NEAR(stolen.steal_fraction, 0.1, 1e-9);
  EXPECT_TRUE(contended(stolen, 64)) << "steal counts whatever the size";
  // Unreadable or nonsensical: unknown, never "quiet".
  EXPECT_FALSE(load_between(snapshot(10, 0, 0, 0, 0), snapshot(12, 0, 0, 0, 0), 100).known);
  EXPECT_FALSE(load_between(snapshot(12, 1000, 5000, 0, 1), snapshot(10, 1100, 5000, 0, 1), 100).known);
  EXPECT_FALSE(contended(Load{}, 2));
}

TEST(Contention, TheBusiestNeighboursAreNamed) {
  const std::vector<ProcessTicks> before = {{1, "init", 100}, {4242, "stress-ng-cpu", 1000}, {7, "hwprof", 50}, {99, "gone", 5}};
  const std::vector<ProcessTicks> after = {{1, "init", 101}, {4242, "stress-ng-cpu", 1196}, {4243, "stress-ng-cpu", 150}, {7, "hwprof", 400}};
  const auto who = busiest(before, after, 2.0, 100, 7, 2);
  ASSERT_EQ(who.size(), 2u);
  EXPECT_EQ(who[0].pid, 4242);
  EXPECT_NEAR(who[0].cpus, 0.98, 1e-9);
  EXPECT_EQ(who[1].pid, 4243) << "a process started since: all its time counts";
  EXPECT_NEAR(who[1].cpus, 0.75, 1e-9);
  LoadCheck check;
  check.load = {2.0, 1.73, 0.0, true};
  check.neighbours = who;
  EXPECT_NE(check.words().find("stress-ng-cpu (pid 4242) 0.98"), std::string::npos) << check.words();
  EXPECT_TRUE(busiest(before, after, 0.0, 100, 7, 5).empty());
}

}  // namespace
}  // namespace hwprof::calibration
