// A layer's (or a region's) measured side joined with its analytic side and placed on the
// roofline, and the warnings a profile owes its reader when figures exceed their roofs —
// shared by the model profiler and the regions profile (profile_of).
#pragma once

#include <optional>

#include "common/stages.hpp"
#include "hwprof/engine/machine.hpp"
#include "hwprof/engine/profile.hpp"
#include "hwprof/engine/roofline.hpp"
#include "hwprof/session.hpp"

namespace hwprof::placement {

// One per physical core when `requested` is 0.
int resolve_threads(int requested);
Summary to_ms(const Summary& ns);
// The profile's machine: the calibration's (and its run for `threads`), or this CPU without one.
// Which rank of a parallel launch made the profile (mpirun, srun, torchrun), if any.
void fill_launch_rank(Profile& p);
void fill_machine(Profile& p, const std::optional<Machine>& machine, const std::string& source, int threads);
// What a row's work is, for its placement: its compute roof (a transcendental roof's FLOPs per
// evaluation in the analytic FLOPs: counted FLOPs rescale it), where its analytic bytes can
// come from (absent for the model total, which is placed against its layers afterwards), and
// whose reasons explain counted FLOPs that differ from the analytic ones.
struct RowWork {
  enum class Kind {
    layer,   // a model's layer: the reasons of its op
    region,  // a region (an observer's op or module, a program's scope): those of its roof
    total,   // the model total: no comparison
  };
  Kind kind = Kind::region;
  ComputeRoof roof;
  OpKind op = OpKind::add;  // a layer's
  std::optional<WorkingSet> working_set;
};
// The layer's measured side, its analytic side (its flops and bytes) and its roofline
// placement. `seconds`: the time per call its rates are over, where not the median (a
// program's row: the mean, since its calls may differ and its FLOPs per call are their mean).
void fill_measurements(LayerProfile& layer, const RegionReport& r, const std::optional<Machine>& machine, int threads, const RowWork& work,
                       double seconds = 0.0);
// Warnings for layers above 110 % of their roof, with the likely cause; hints for a GEMM
// ceiling measured on other OpenBLAS kernels.
void add_calibration_warnings(Profile& p, bool contended);

}  // namespace hwprof::placement
