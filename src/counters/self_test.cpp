#include "counters/self_test.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>
#include "common/stages.hpp"

namespace hwprof::counters {
namespace {

// ---- the kernels -------------------------------------------------------------------------
//
// Written in assembly so that the instruction mix is exact: a compiler would vectorise the
// scalar loop, fuse the multiply and the add, or drop work whose result is unused. Each loop
// iteration retires 8 FP arithmetic instructions on 8 independent accumulators (0-7) from two
// sources (8, 9), all zero: zero operands raise no denormal assists (Intel's FP_ARITH events
// need DAZ/FTZ otherwise) and every instruction still retires and counts. The XORs that zero
// the registers are logical operations, which no FLOP event counts. GAS assembles every
// instruction whatever -march says; the CPU check (__builtin_cpu_supports) comes before a run.

#if defined(__x86_64__)

#define HWPROF_ZERO_LEGACY                                                                       \
  "xorps %%xmm0,%%xmm0\n\txorps %%xmm1,%%xmm1\n\txorps %%xmm2,%%xmm2\n\txorps %%xmm3,%%xmm3\n\t" \
  "xorps %%xmm4,%%xmm4\n\txorps %%xmm5,%%xmm5\n\txorps %%xmm6,%%xmm6\n\txorps %%xmm7,%%xmm7\n\t" \
  "xorps %%xmm8,%%xmm8\n\txorps %%xmm9,%%xmm9\n\t"
// A VEX-encoded XOR of an xmm register zeroes the whole ymm/zmm register.
#define HWPROF_ZERO_VEX                                                                           \
  "vxorps %%xmm0,%%xmm0,%%xmm0\n\tvxorps %%xmm1,%%xmm1,%%xmm1\n\tvxorps %%xmm2,%%xmm2,%%xmm2\n\t" \
  "vxorps %%xmm3,%%xmm3,%%xmm3\n\tvxorps %%xmm4,%%xmm4,%%xmm4\n\tvxorps %%xmm5,%%xmm5,%%xmm5\n\t" \
  "vxorps %%xmm6,%%xmm6,%%xmm6\n\tvxorps %%xmm7,%%xmm7,%%xmm7\n\tvxorps %%xmm8,%%xmm8,%%xmm8\n\t" \
  "vxorps %%xmm9,%%xmm9,%%xmm9\n\t"

// Three-operand forms (VEX/EVEX): ins src2, src1, dst.
#define HWPROF_FMA8(ins, r)                                                                                                                          \
  ins " %%" r "8,%%" r "9,%%" r "0\n\t" ins " %%" r "8,%%" r "9,%%" r "1\n\t" ins " %%" r "8,%%" r "9,%%" r "2\n\t" ins " %%" r "8,%%" r "9,%%" r    \
      "3\n\t" ins " %%" r "8,%%" r "9,%%" r "4\n\t" ins " %%" r "8,%%" r "9,%%" r "5\n\t" ins " %%" r "8,%%" r "9,%%" r "6\n\t" ins " %%" r "8,%%" r \
      "9,%%" r "7\n\t"
#define HWPROF_ADDMUL8_VEX(add, mul, r)                                                                                                              \
  add " %%" r "8,%%" r "0,%%" r "0\n\t" mul " %%" r "9,%%" r "1,%%" r "1\n\t" add " %%" r "8,%%" r "2,%%" r "2\n\t" mul " %%" r "9,%%" r "3,%%" r    \
      "3\n\t" add " %%" r "8,%%" r "4,%%" r "4\n\t" mul " %%" r "9,%%" r "5,%%" r "5\n\t" add " %%" r "8,%%" r "6,%%" r "6\n\t" mul " %%" r "9,%%" r \
      "7,%%" r "7\n\t"
// Two-operand legacy SSE forms: ins src, dst.
#define HWPROF_ADDMUL8_LEGACY(add, mul)                                                                                            \
  add " %%xmm8,%%xmm0\n\t" mul " %%xmm9,%%xmm1\n\t" add " %%xmm8,%%xmm2\n\t" mul " %%xmm9,%%xmm3\n\t" add " %%xmm8,%%xmm4\n\t" mul \
      " %%xmm9,%%xmm5\n\t" add " %%xmm8,%%xmm6\n\t" mul " %%xmm9,%%xmm7\n\t"

#define HWPROF_LOOP(zero, body, tail)                         \
  asm volatile(zero "1:\n\t" body "dec %0\n\tjnz 1b\n\t" tail \
               : "+r"(n)                                      \
               :                                              \
               : "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9")

#define HWPROF_KERNEL(fn, zero, body, tail) \
  void fn(std::uint64_t n) {                \
    if (n == 0) return;                     \
    HWPROF_LOOP(zero, body, tail);          \
  }

HWPROF_KERNEL(scalar_sp_fma, HWPROF_ZERO_VEX, HWPROF_FMA8("vfmadd231ss", "xmm"), "")
HWPROF_KERNEL(scalar_dp_fma, HWPROF_ZERO_VEX, HWPROF_FMA8("vfmadd231sd", "xmm"), "")
HWPROF_KERNEL(scalar_sp_addmul, HWPROF_ZERO_LEGACY, HWPROF_ADDMUL8_LEGACY("addss", "mulss"), "")
HWPROF_KERNEL(scalar_dp_addmul, HWPROF_ZERO_LEGACY, HWPROF_ADDMUL8_LEGACY("addsd", "mulsd"), "")
HWPROF_KERNEL(sse_sp_fma, HWPROF_ZERO_VEX, HWPROF_FMA8("vfmadd231ps", "xmm"), "")
HWPROF_KERNEL(sse_dp_fma, HWPROF_ZERO_VEX, HWPROF_FMA8("vfmadd231pd", "xmm"), "")
HWPROF_KERNEL(sse_sp_addmul, HWPROF_ZERO_LEGACY, HWPROF_ADDMUL8_LEGACY("addps", "mulps"), "")
HWPROF_KERNEL(sse_dp_addmul, HWPROF_ZERO_LEGACY, HWPROF_ADDMUL8_LEGACY("addpd", "mulpd"), "")
HWPROF_KERNEL(avx2_sp_fma, HWPROF_ZERO_VEX, HWPROF_FMA8("vfmadd231ps", "ymm"), "vzeroupper\n\t")
HWPROF_KERNEL(avx2_dp_fma, HWPROF_ZERO_VEX, HWPROF_FMA8("vfmadd231pd", "ymm"), "vzeroupper\n\t")
HWPROF_KERNEL(avx2_sp_addmul, HWPROF_ZERO_VEX, HWPROF_ADDMUL8_VEX("vaddps", "vmulps", "ymm"), "vzeroupper\n\t")
HWPROF_KERNEL(avx2_dp_addmul, HWPROF_ZERO_VEX, HWPROF_ADDMUL8_VEX("vaddpd", "vmulpd", "ymm"), "vzeroupper\n\t")
HWPROF_KERNEL(avx512_sp_fma, HWPROF_ZERO_VEX, HWPROF_FMA8("vfmadd231ps", "zmm"), "vzeroupper\n\t")
HWPROF_KERNEL(avx512_dp_fma, HWPROF_ZERO_VEX, HWPROF_FMA8("vfmadd231pd", "zmm"), "vzeroupper\n\t")
HWPROF_KERNEL(avx512_sp_addmul, HWPROF_ZERO_VEX, HWPROF_ADDMUL8_VEX("vaddps", "vmulps", "zmm"), "vzeroupper\n\t")
HWPROF_KERNEL(avx512_dp_addmul, HWPROF_ZERO_VEX, HWPROF_ADDMUL8_VEX("vaddpd", "vmulpd", "zmm"), "vzeroupper\n\t")

using KernelFn = void (*)(std::uint64_t);

KernelFn kernel_fn(SimdWidth width, FpPrecision precision, bool fma) {
  const bool sp = precision == FpPrecision::single;
  switch (width) {
    case SimdWidth::scalar:
      return fma ? (sp ? scalar_sp_fma : scalar_dp_fma) : (sp ? scalar_sp_addmul : scalar_dp_addmul);
    case SimdWidth::sse:
      return fma ? (sp ? sse_sp_fma : sse_dp_fma) : (sp ? sse_sp_addmul : sse_dp_addmul);
    case SimdWidth::avx2:
      return fma ? (sp ? avx2_sp_fma : avx2_dp_fma) : (sp ? avx2_sp_addmul : avx2_dp_addmul);
    case SimdWidth::avx512:
      return fma ? (sp ? avx512_sp_fma : avx512_dp_fma) : (sp ? avx512_sp_addmul : avx512_dp_addmul);
  }
  return nullptr;
}

// What this CPU lacks to run the kernel, or "" when it has it all. __builtin_cpu_supports
// reports AVX and AVX-512 only where the OS also saves their registers (XCR0).
std::string missing_feature(SimdWidth width, bool fma) {
  __builtin_cpu_init();
  if (width == SimdWidth::avx512 && !__builtin_cpu_supports("avx512f")) return "this CPU (or its OS) has no AVX-512F";
  if (width == SimdWidth::avx2 && !__builtin_cpu_supports("avx")) return "this CPU (or its OS) has no AVX";
  if (fma && !__builtin_cpu_supports("fma")) return "this CPU has no FMA3";
  return {};
}

#else

using KernelFn = void (*)(std::uint64_t);
KernelFn kernel_fn(SimdWidth, FpPrecision, bool) {
  return nullptr;
}
std::string missing_feature(SimdWidth, bool) {
  return "the self-test kernels are x86-64 only";
}

#endif

// Reads every 64-bit word of `words` once with integer adds (no FP arithmetic), so that the
// DRAM groups see the array's bytes and the FLOP groups see nothing.
std::uint64_t read_stream(const std::uint64_t* words, std::size_t count) {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < count; ++i) sum += words[i];
  return sum;
}

struct FreeDeleter {
  void operator()(void* p) const noexcept { std::free(p); }
};

bool contains_token(const std::vector<std::string_view>& tokens, std::string_view t) {
  return std::find(tokens.begin(), tokens.end(), t) != tokens.end();
}

std::vector<std::string_view> id_tokens(std::string_view id) {
  std::vector<std::string_view> out;
  while (!id.empty()) {
    const auto cut = id.find('_');
    out.push_back(id.substr(0, cut));
    id = cut == std::string_view::npos ? std::string_view() : id.substr(cut + 1);
  }
  return out;
}

// The metrics the self-test checks are found by role (counters/README.md, "The format"), as
// the roofline finds them, so that a group checked here is one the roofline reads.
bool is_flop_metric(const Metric& m) {
  return m.role == MetricRole::flops;
}
// DRAM read bytes where the group splits reads from writes, else DRAM bytes (Zen 2/3's data
// fabric events count both; the stream writes nothing, and its array's dirty lines were
// written back before any measurement).
bool is_dram_read_metric(const Metric& m) {
  return m.role == MetricRole::dram_read_bytes || m.role == MetricRole::dram_bytes;
}

std::optional<double> reading_value(const CounterReading& r) {
  return r.has_value() ? std::optional<double>(r.value) : std::nullopt;
}

}  // namespace

int elements_per_register(SimdWidth width, FpPrecision precision) {
  const int sp = precision == FpPrecision::single ? 2 : 1;
  switch (width) {
    case SimdWidth::scalar:
      return 1;
    case SimdWidth::sse:
      return 2 * sp;
    case SimdWidth::avx2:
      return 4 * sp;
    case SimdWidth::avx512:
      return 8 * sp;
  }
  return 1;
}

std::string_view width_name(SimdWidth width) {
  switch (width) {
    case SimdWidth::scalar:
      return "scalar";
    case SimdWidth::sse:
      return "sse";
    case SimdWidth::avx2:
      return "avx2";
    case SimdWidth::avx512:
      return "avx512";
  }
  return "?";
}

std::vector<SelfTestKernel> self_test_kernels(std::uint64_t iterations, std::size_t stream_bytes) {
  std::vector<SelfTestKernel> kernels;
  for (SimdWidth width : {SimdWidth::scalar, SimdWidth::sse, SimdWidth::avx2, SimdWidth::avx512}) {
    for (FpPrecision precision : {FpPrecision::single, FpPrecision::double_}) {
      for (bool fma : {true, false}) {
        SelfTestKernel k;
        k.width = width;
        k.precision = precision;
        k.fma = fma;
        k.name = std::string(width_name(width)) + (precision == FpPrecision::single ? " sp " : " dp ") + (fma ? "fma" : "add/mul");
        k.instructions = 8.0 * static_cast<double>(iterations);
        k.flops = k.instructions * elements_per_register(width, precision) * (fma ? 2 : 1);
        k.unsupported = missing_feature(width, fma);
        const KernelFn fn = kernel_fn(width, precision, fma);
        if (k.unsupported.empty() && fn != nullptr) k.run = [fn, iterations] { fn(iterations); };
        kernels.push_back(std::move(k));
      }
    }
  }
  SelfTestKernel stream;
  stream.name = "dram read stream";
  stream.fp = false;
  stream.read_bytes = static_cast<double>(stream_bytes - stream_bytes % sizeof(std::uint64_t));  // whole words
  // The array is allocated and written (its pages faulted in) once, before any measurement.
  auto words = std::shared_ptr<std::uint64_t>(static_cast<std::uint64_t*>(std::malloc(stream_bytes)), FreeDeleter{});
  if (!words) {
    stream.unsupported = "cannot allocate " + std::to_string(stream_bytes >> 20) + " MiB for the stream";
  } else {
    std::memset(words.get(), 1, stream_bytes);
    const std::size_t count = stream_bytes / sizeof(std::uint64_t);
    // One unmeasured pass evicts the lines memset left dirty, so that their write-backs do not
    // land in a measured pass (where a DRAM group without a read/write split would count them).
    volatile std::uint64_t flushed = read_stream(words.get(), count);
    (void)flushed;
    stream.run = [words, count] {
      volatile std::uint64_t sink = read_stream(words.get(), count);
      (void)sink;
    };
  }
  kernels.push_back(std::move(stream));
  return kernels;
}

std::optional<double> expected_event_count(const EventGroup& group, const GroupEvent& event, const SelfTestKernel& kernel) {
  const Metric* flop = metric_with_role(group, MetricRole::flops);
  if (flop == nullptr) return std::nullopt;
  double weight = 0;
  for (const MetricTerm& t : flop->numerator) {
    if (t.id == event.id) weight = t.coefficient;
  }
  if (weight <= 0) return std::nullopt;  // not one of the group's FP events
  if (!kernel.fp) return 0.0;
  const auto tokens = id_tokens(event.id);
  const bool any_precision = !contains_token(tokens, "sp") && !contains_token(tokens, "dp");
  const bool precision_matches = any_precision || contains_token(tokens, kernel.precision == FpPrecision::single ? "sp" : "dp");
  bool width_matches = true;
  for (std::string_view w : {"scalar", "128", "256", "512", "packed"}) {
    if (!contains_token(tokens, w)) continue;
    const bool packed = kernel.width != SimdWidth::scalar;
    width_matches = (w == "scalar" && !packed) || (w == "packed" && packed) || (w == "128" && kernel.width == SimdWidth::sse) ||
                    (w == "256" && kernel.width == SimdWidth::avx2) || (w == "512" && kernel.width == SimdWidth::avx512);
  }
  return precision_matches && width_matches ? kernel.flops / weight : 0.0;
}

const Metric* checked_metric(const EventGroup& group) {
  for (MetricRole role : {MetricRole::flops, MetricRole::dram_read_bytes, MetricRole::dram_bytes}) {
    if (const Metric* m = metric_with_role(group, role)) return m;
  }
  return nullptr;
}

std::optional<double> expected_metric_value(const EventGroup& group, const Metric& metric, const SelfTestKernel& kernel) {
  if (is_dram_read_metric(metric)) {
    if (kernel.fp) return std::nullopt;  // the controller counts the machine: nothing exact
    return kernel.read_bytes;
  }
  if (!is_flop_metric(metric)) return std::nullopt;
  double total = 0;
  for (const MetricTerm& t : metric.numerator) {
    for (const GroupEvent& e : group.events) {
      if (e.id != t.id) continue;
      const auto count = expected_event_count(group, e, kernel);
      if (!count) return std::nullopt;
      total += t.coefficient * *count;
    }
  }
  return total;
}

bool within_tolerance(double measured, double expected, bool dram) {
  if (!std::isfinite(measured)) return false;
  if (dram) return measured >= 0.90 * expected && measured <= 1.25 * expected;
  return std::abs(measured - expected) <= 0.02 * expected + 1000.0;
}

int SelfTestReport::failed() const {
  int n = 0;
  for (const SelfTestCheck& c : checks) n += c.measured.has_value() && !c.pass;
  return n;
}

int SelfTestReport::unavailable() const {
  int n = 0;
  for (const SelfTestCheck& c : checks) n += !c.measured.has_value();
  return n;
}

SelfTestReport run_self_test(const std::vector<EventGroup>& groups, const std::vector<SelfTestKernel>& kernels, const OpenGroupCounters& open) {
  SelfTestReport report;
  for (const SelfTestKernel& k : kernels) {
    if (!k.run) report.skipped.push_back(k.name + ": " + (k.unsupported.empty() ? "no kernel for this machine" : k.unsupported));
  }
  for (const EventGroup& group : groups) {
    const Metric* metric = checked_metric(group);
    if (metric == nullptr) continue;
    const bool dram = is_dram_read_metric(*metric);
    std::unique_ptr<CounterSet> set = open(group);
    if (!set) continue;
    for (const SelfTestKernel& k : kernels) {
      if (!k.run) continue;
      const std::optional<double> metric_expected = expected_metric_value(group, *metric, k);
      if (dram && !metric_expected) continue;  // DRAM groups only under the stream
      CounterSnapshot before;
      CounterSnapshot after;
      set->start();
      set->read(before);
      k.run();
      set->read(after);
      set->stop();
      const std::vector<CounterReading> readings = readings_between(*set, before, after);
      auto value_of = [&](std::string_view id) -> std::optional<double> {
        if (id == "time") return std::nullopt;
        for (std::size_t i = 0; i < group.events.size() && i < readings.size(); ++i) {
          if (group.events[i].id == id) return reading_value(readings[i]);
        }
        return std::nullopt;
      };
      auto note_of = [&](std::size_t i) -> std::string {
        if (i >= readings.size() || i >= set->events().size()) return "not read";
        if (readings[i].status == CounterStatus::multiplexed) return "multiplexed: a scaled estimate";
        if (!readings[i].has_value()) {
          const std::string& reason = set->events()[i].reason;
          return std::string(counter_status_name(readings[i].status)) + (reason.empty() ? "" : ": " + reason);
        }
        return {};
      };
      for (std::size_t i = 0; i < group.events.size(); ++i) {
        const auto expected = expected_event_count(group, group.events[i], k);
        if (!expected) continue;
        SelfTestCheck c{group.name, k.name, group.events[i].id, value_of(group.events[i].id), *expected, false, note_of(i)};
        c.pass = c.measured && within_tolerance(*c.measured, c.expected, false);
        report.checks.push_back(std::move(c));
      }
      if (!metric_expected) continue;
      const MetricValue v = evaluate_metric(*metric, value_of);
      std::string why = v.reason;
      for (std::size_t i = 0; i < group.events.size() && !v.value; ++i) {
        if (value_of(group.events[i].id)) continue;
        why += " (" + group.events[i].id + ": " + note_of(i) + ")";
        break;
      }
      SelfTestCheck c{group.name, k.name, metric->name, v.value, *metric_expected, false, v.value ? "" : why};
      c.pass = c.measured && within_tolerance(*c.measured, c.expected, dram);
      report.checks.push_back(std::move(c));
    }
  }
  return report;
}

}  // namespace hwprof::counters
