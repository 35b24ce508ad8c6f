// The observer's extension of a session: what hwprof::torch (src/torch/) calls on the
// session's state besides the public API of hwprof/session.hpp (docs/design.md, "The libraries
// and the module"). Not installed: a program's own regions never need it, and the public
// Session class stays the API a user reads. Implemented in session.cpp, on the state every
// Session holds. Exported from the shared regions library all the same (HWPROF_API), as the
// Session members they were: a test program that links it plays an observer.
#pragma once

#include <cstdint>
#include <string_view>

#include "hwprof/compute_roof.hpp"
#include "hwprof/export.hpp"
#include "hwprof/session.hpp"

HWPROF_API_BEGIN

namespace hwprof {

// What an observer says of one call as it leaves it (observer::leave): its work, and which
// variant of the region it was.
struct CallDetail {
  double flops = -1.0;  // the call's work; < 0: none given (the region's row then has none)
  double bytes = 0.0;
  std::uint64_t variant = 0;  // observer::note_variant's key; 0: none
};

namespace observer {

// Session::enter() without reading counters, where the session reads them: the region gets its time
// only, with none of the session's read cost subtracted from it (what it costs is a
// time-only pair's, tens of nanoseconds, left in its time and its parent's), and its counts
// stay in the innermost counted region around it. For regions nested so deep and short
// that a counter read (microseconds) would cost more than they do. In a time-only session
// it is enter(). Left by leave().
void enter_time_only(Session::State* state, int id) noexcept;
// One call's work, added up: the region's work per call is then the sum over the calls
// that gave one divided by their number (exact where calls differ, such as one op on
// different shapes), and set_work's value is no longer used for it.
void add_work(Session::State* state, int id, double flops, double bytes) noexcept;
// Session::leave() with what the observer knows of the call: its work (added up as add_work() does,
// and into its call path's sums) and its variant (its calls, time and work counted apart).
// Returns the call's inclusive time (ns, the session's own cost subtracted), or a negative
// number where it was not timed (not open on this thread, the session closed).
double leave(Session::State* state, int id, const CallDetail& detail) noexcept;
// Session::enter() for a piece of the region's last call rather than a call of its own (a backward
// op run as several autograd functions, one after another): its time, counts and work go
// to that call, its calls stay as they were. `counted`: read counters (else as enter_time_only).
void enter_continuing(Session::State* state, int id, bool counted) noexcept;
// The label of a variant of the region (first sight; allocates): its calls are kept apart
// under it. A session keeps a bounded number of variants per region, the most time first;
// the rest are counted together as one `other` variant. With an empty label (or variant 0),
// only makes the region keep variants (labelled where another region's note named them).
void note_variant(Session::State* state, int id, std::uint64_t variant, std::string_view label) noexcept;
// The threads the region's call runs its work on (an observer's: PyTorch's intra-op threads).
void note_threads(Session::State* state, int id, int threads) noexcept;
// The parameters the region holds (a module's), said once.
void set_params(Session::State* state, int id, std::int64_t params) noexcept;
// The end of one of the program's steps (a training step: the optimizer's step), and where
// the first one began (once; later calls are ignored).
void mark_step(Session::State* state) noexcept;
void mark_step_start(Session::State* state) noexcept;
// The mean inclusive time of the region's calls so far (ns; 0 before its first call): an
// observer that reads counters only where a read is small against the call uses it.
double mean_ns(Session::State* state, int id) noexcept;
// What a begin/end pair that reads counters costs in this session (ns; 0 when time only): as
// measured at open, or as the latest reads took it where that is more (reads of counters
// inherited by running threads cost several times more).
double counted_pair_ns(Session::State* state) noexcept;
// Names what feeds the session besides the program's own regions (a string literal, kept
// by pointer): "torch" for hwprof::torch; its snapshot, and the profile made of it, say so.
void set_observer(Session::State* state, const char* name) noexcept;
// What the region stands for (an observer's regions; a scope by default).
void set_role(Session::State* state, int id, RegionRole role) noexcept;
// Why the region carries no work where it has none (a string literal, kept by pointer):
// "counted in the op around it", "no formula for this op". Its row says so instead of 0.
void set_work_note(Session::State* state, int id, const char* note) noexcept;
// Its compute roof, from its op's definition (a function name outside exp, tanh and erf is
// kept as the FMA peak).
void set_compute_roof(Session::State* state, int id, const ComputeRoof& roof) noexcept;

}  // namespace observer
}  // namespace hwprof

HWPROF_API_END
