// The counter self-test (`hwprof info --self-test`): kernels whose FLOP and byte counts are
// known exactly, run under each FLOP and DRAM group of this CPU, and the group's events and
// metrics compared with what the kernels must have done.
//
// Where an expectation comes from: every FP event id of the shipped groups names what it
// counts — a precision (`sp`, `dp`; none: both) and a width (`scalar`, `128`, `256`, `512`,
// `packed`; none: every width) — and the group's FLOP metric gives its weight (FLOPs per
// count). A kernel of N FLOPs at the event's precision and width must then count N / weight,
// and every other FP event 0. So an Intel FMA, which FP_ARITH_INST_RETIRED counts twice, and an
// AMD multiply-add, which fp_ret_sse_avx_ops counts as 2 FLOPs, are both held to the FLOP count.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/stages.hpp"
#include "hwprof/counters.hpp"
#include "hwprof/event_group.hpp"

namespace hwprof::counters {

enum class SimdWidth { scalar, sse, avx2, avx512 };  // 32/64-bit, 128, 256, 512 bits
enum class FpPrecision { single, double_ };

struct SelfTestKernel {
  std::string name;  // "avx2 sp fma", "dram read stream"
  bool fp = true;    // a FLOP kernel; false: the DRAM stream (no FP arithmetic at all)
  SimdWidth width = SimdWidth::scalar;
  FpPrecision precision = FpPrecision::single;
  bool fma = false;
  double instructions = 0;  // FP arithmetic instructions retired per run
  double flops = 0;         // per run: instructions × elements × (2 for FMA)
  double read_bytes = 0;    // per run: bytes the DRAM stream reads from memory
  std::string unsupported;  // why this CPU cannot run it; empty when it can
  std::function<void()> run;
};

// Elements of `precision` in one register of `width` (1 for scalar).
int elements_per_register(SimdWidth width, FpPrecision precision);
std::string_view width_name(SimdWidth width);

// The FLOP kernels (scalar, SSE, AVX2, AVX-512 × SP, DP × FMA, add/multiply) and the DRAM
// read stream of `stream_bytes`, with what each does per run. `iterations` scales the FLOP
// kernels (8 FP instructions per iteration). Kernels this CPU lacks say why.
std::vector<SelfTestKernel> self_test_kernels(std::uint64_t iterations, std::size_t stream_bytes);

// What an FP event must count under `kernel`, from its id and its weight in the group's FLOP
// metric; nullopt for an event that is not an FP event of the group (cycles, instructions).
std::optional<double> expected_event_count(const EventGroup& group, const GroupEvent& event, const SelfTestKernel& kernel);
// A group's metric with ROLE flops, else dram_read_bytes, else dram_bytes, or nullptr.
const Metric* checked_metric(const EventGroup& group);
// What that metric must show under `kernel`; nullopt where nothing exact can be said (a DRAM
// metric under a FLOP kernel: the controller counts the whole machine).
std::optional<double> expected_metric_value(const EventGroup& group, const Metric& metric, const SelfTestKernel& kernel);

// Measured against expected: FP events within 2% (+ 1000 counts of slack for the few FP
// instructions of the harness), DRAM bytes within -10% / +25% (prefetchers over-fetch, and the
// controller counts every process).
bool within_tolerance(double measured, double expected, bool dram);

struct SelfTestCheck {
  std::string group;
  std::string kernel;
  std::string what;  // an event id, or a metric name
  std::optional<double> measured;
  double expected = 0;
  bool pass = false;
  std::string note;  // "multiplexed (scaled)", the reason a value is missing
};

struct SelfTestReport {
  std::vector<SelfTestCheck> checks;
  std::vector<std::string> skipped;  // "avx512 sp fma: this CPU has no AVX-512F"
  int failed() const;
  int unavailable() const;
};

// Opens the counters of one group's events (the CLI: open_counters on this process).
using OpenGroupCounters = std::function<std::unique_ptr<CounterSet>(const EventGroup&)>;

// Runs every kernel this CPU supports under every group that has a checked metric, once
// each, and checks each FP event and the metric.
SelfTestReport run_self_test(const std::vector<EventGroup>& groups, const std::vector<SelfTestKernel>& kernels, const OpenGroupCounters& open);

}  // namespace hwprof::counters
