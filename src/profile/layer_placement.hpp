// A layer's (or a region's) measured side joined with its analytic side and placed on the
// roofline, and the warnings a profile owes its reader when figures exceed their roofs —
// shared by the model profiler and the regions profile (profile_of).
#pragma once

#include <optional>

#include "hwprof/machine.hpp"
#include "hwprof/profile.hpp"
#include "hwprof/roofline.hpp"
#include "hwprof/session.hpp"

namespace hwprof::detail {

// One per physical core when `requested` is 0.
int resolve_threads(int requested);
Summary to_ms(const Summary& ns);
// The profile's machine: the calibration's (and its run for `threads`), or this CPU without one.
// Which rank of a parallel launch made the profile (mpirun, srun, torchrun), if any.
void fill_launch_rank(Profile& p);
void fill_machine(Profile& p, const std::optional<Machine>& machine, const std::string& source, int threads);
// The layer's measured side, its analytic side (its flops and bytes) and its roofline
// placement. `working_set`: where the layer's analytic bytes can come from (absent for the
// model total, which is placed against its layers afterwards); `op` absent: the model total.
// `transcendental`/`elements`: an element-wise op's function and evaluations per call
// (RooflineInput), for its compute roof.
// `seconds`: the time per call its rates are over, where not the median (a program's row: the
// mean, since its calls may differ and its FLOPs per call are their mean).
void fill_measurements(LayerProfile& layer, const RegionReport& r, const std::optional<Machine>& machine, int threads, std::optional<OpKind> op,
                       std::optional<WorkingSet> working_set, const std::string& transcendental = {}, double elements = 0.0, double seconds = 0.0);
// Warnings for layers above 110 % of their roof, with the likely cause; hints for a GEMM
// ceiling measured on other OpenBLAS kernels.
void add_calibration_warnings(Profile& p, bool contended);

}  // namespace hwprof::detail
