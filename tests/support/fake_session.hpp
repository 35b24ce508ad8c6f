// A session on a fake clock and a fake counter set, so that every figure a test checks is exact.
// The clock advances by `fake_tick` at every call (tests advance it by hand too, `spend`); the
// one counter that opens, "ops", counts what tests add to `fake_ops` plus a read cost per read.
// The session's tests (tests/unit/session/) and counter truth's (tests/unit/profile/) use it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "hwprof/session.hpp"

namespace hwprof::test {

// ---- the fake clock: every call advances it by `tick`; tests advance it by hand too ----

inline std::atomic<std::uint64_t> fake_now{1'000'000};
inline std::atomic<std::uint64_t> fake_tick{10};

inline std::uint64_t fake_clock() noexcept {
  return fake_now.fetch_add(fake_tick.load()) + fake_tick.load();
}
inline void spend(std::uint64_t ns) {
  fake_now.fetch_add(ns);
}

// ---- the fake counter set: "ops" counts what tests add plus `read_cost` per read ----

inline std::atomic<std::uint64_t> fake_ops{0};
inline std::atomic<std::uint64_t> fake_extra_read_cost{0};  // added to every read while a test sets it
inline std::atomic<std::uint64_t> fake_read_ns{0};          // the clock advances by this at every read while a test sets it

class FakeCounters final : public CounterSet {
 public:
  FakeCounters(std::uint64_t read_cost, bool multiplexed = false, std::atomic<int>* running = nullptr)
      : read_cost_(read_cost), multiplexed_(multiplexed), running_(running) {
    events_.push_back({"ops", "count", CounterStatus::ok, ""});
    events_.push_back({"dram-bytes", "bytes", CounterStatus::unsupported, "no uncore PMU in this test"});
  }
  BackendKind backend() const noexcept override { return BackendKind::perf; }
  void start() noexcept override {
    if (running_) *running_ = 1;
  }
  void stop() noexcept override {
    if (running_) *running_ = 0;
  }
  void read(CounterSnapshot& out) noexcept override {
    fake_now.fetch_add(fake_read_ns.load());
    const std::uint64_t cost = read_cost_ + fake_extra_read_cost.load();
    const std::uint64_t value = fake_ops.fetch_add(cost) + cost;
    const std::uint64_t enabled = fake_now.load();
    out.value[0] = value;
    out.time_enabled[0] = enabled;
    // Multiplexed: the counter ran half the time; raw values are then scaled by 2.
    out.time_running[0] = multiplexed_ ? enabled / 2 : enabled;
    out.valid[0] = true;
    out.valid[1] = false;
  }

 private:
  std::uint64_t read_cost_;
  bool multiplexed_;
  std::atomic<int>* running_;
};

inline SessionOptions fake_options() {
  SessionOptions o;
  o.clock = &fake_clock;
  o.overhead_pairs = 200;
  o.on_hint = [](const std::string&) {};
  return o;
}

inline std::unique_ptr<Session> open_fake(std::uint64_t read_cost = 3, SessionOptions o = fake_options()) {
  fake_tick = 10;
  auto s = Session::open(o, std::make_unique<FakeCounters>(read_cost));
  EXPECT_TRUE(s) << (s ? "" : s.error().message);
  return std::move(*s);
}

}  // namespace hwprof::test
