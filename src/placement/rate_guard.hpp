// The last check on a placed row, for every kind of profile (a model's layers, a program's
// regions, a torch program's modules and ops, merged ranks): an achieved rate above anything
// the machine can do — its FLOPs per call over its time per call, even at the slow end of the
// time's uncertainty, above the machine's peak with room for a clock above the one the kernel
// reports — is not a measurement but a wrong count or a wrong time. The row is marked
// impossible with the figures, shown apart, and left out of the time to win and the totals
// (docs/profile.md, "Impossible rates").
#pragma once

#include <string>

#include "common/stages.hpp"
#include "hwprof/engine/machine.hpp"
#include "hwprof/engine/profile.hpp"

namespace hwprof::placement {

// The most a row on `threads` threads could do: the larger of the theoretical single-precision
// peak for those threads and every compute ceiling measured for them, times kClockSlack.
struct RateLimit {
  double gflops_per_s = 0.0;  // 0: not known (no calibration)
  std::string source;         // "the theoretical SP peak of 2 cores (268 GFLOP/s) x 1.25"
};
// A turbo clock can run this much above the clock the kernel reports (the theoretical peak's).
inline constexpr double kClockSlack = 1.25;
RateLimit rate_limit(const Machine& machine, int threads);
RateLimit rate_limit(const ProfileMachine& machine, int threads);

// The slow end of a row's time per call (seconds): the median's 95 % interval's upper end for a
// model's layer; for a program's row, whose rates are over the mean, the mean plus 1.96 standard
// errors; plus the session's own cost per region, which was subtracted from every call.
double slow_end_seconds(const LayerProfile& layer, double overhead_ns);

// Marks `layer` impossible where its FLOPs per call over slow_end_seconds exceed `limit`.
// Returns whether it did.
bool guard_rate(LayerProfile& layer, const RateLimit& limit, double overhead_ns);

}  // namespace hwprof::placement
