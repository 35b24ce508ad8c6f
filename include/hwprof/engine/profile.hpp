// A Profile: what `hwprof profile` measured for every layer of a model (or a program in its
// own regions: ProfileKind), joined with what the layer should cost and placed on this
// machine's roofline. It is a plain value: the profiler (src/profile/profiler.cpp) fills it,
// the reports (src/report/: table, JSON, CSV, Chrome trace, SVG roofline, HTML) only format
// it, and `hwprof report` reads it back from JSON.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hwprof/counters.hpp"
#include "hwprof/engine/cost.hpp"
#include "hwprof/engine/graph.hpp"
#include "hwprof/engine/machine.hpp"
#include "hwprof/engine/roofline.hpp"
#include "hwprof/export.hpp"
#include "hwprof/result.hpp"
#include "hwprof/statistics.hpp"

HWPROF_API_BEGIN

namespace hwprof {

// The version of profile.json this hwprof writes; profile_from_json reads it and migrates
// older ones (docs/profile.md, "Schema history").
inline constexpr int kProfileSchema = 2;

// What made a profile (docs/profile.md, "Kinds"). `merged` and `torch` are reserved: nothing
// makes them yet, but they are read and written like a model profile.
enum class ProfileKind {
  model,    // hwprof's engine ran a model (`hwprof profile`)
  regions,  // a program's own regions (<hwprof/regions.hpp>, src/placement/region_profile.cpp)
  merged,   // reserved: ranks merged into one profile
  torch,    // a PyTorch program's ops, observed by hwprof::torch (docs/torch.md): regions
};

// What one measured pass of a model did (a regions profile has no passes: inference there).
enum class RunPhase {
  inference,  // the forward pass only; written "forward"
  train,      // a training step: forward, backward and optimizer
};

// The phase a row ran in.
enum class LayerPhase {
  forward,
  backward,
  optimizer,
  region,     // a program's own region (a regions profile)
  recompute,  // a forward run again during backward (a torch profile's activation checkpointing)
  setup,      // what a torch program ran before its first module call
};

// What a row's time over the run is counted per (LayerProfile::basis_ms): a model's pass; a
// program's step (its training steps, where it has them: the optimizer's, or those it marked);
// or the program's whole run.
enum class TimeBasis { pass, step, run };
std::string_view time_basis_name(TimeBasis basis) noexcept;
std::optional<TimeBasis> parse_time_basis(std::string_view name) noexcept;

// The names profile.json, the table and the CLI use for them, and back; parsing an unknown
// name gives nullopt.
std::string_view profile_kind_name(ProfileKind kind) noexcept;
// A program's own run measured as regions (regions, torch): call paths and threads, no cost
// model, the phase "regions".
bool is_program_run(ProfileKind kind) noexcept;
std::optional<ProfileKind> parse_profile_kind(std::string_view name) noexcept;
std::string_view run_phase_name(RunPhase phase) noexcept;  // "forward" or "train"
std::optional<RunPhase> parse_run_phase(std::string_view name) noexcept;
std::string_view layer_phase_name(LayerPhase phase) noexcept;
std::optional<LayerPhase> parse_layer_phase(std::string_view name) noexcept;

// One counter of one layer, per call. `value` is absent when the counter could not be read,
// and then `reason` says why and how to fix it — never a 0 that was not counted.
struct LayerCounter {
  std::string name;
  std::string unit;
  std::optional<double> value;  // per call
  CounterStatus status = CounterStatus::not_counted;
  double running_fraction = 0.0;  // lowest over the layer's calls; 1 when it ran throughout
  std::string reason;
  bool below_resolution = false;  // under the counter's own cost per read: an upper bound (CounterTotal)
  // The measurement's own count per call, subtracted from `value`: what an empty region
  // counted at the same layer boundary (src/profile/counter_truth.hpp). 0 when none was.
  double read_cost = 0.0;
  // A value wall time cannot hold (task-clock above wall × CPUs, cycles above wall × CPUs ×
  // the highest clock): shown as impossible, with the reason and the figures, never as a fact.
  bool impossible = false;
  std::string impossible_reason{};
  EventKind kind = EventKind::other;  // what it measures, as its backend resolved it (EventInfo::kind)
};

// A metric of the counter group (e.g. "DP GFLOP/s", "DRAM bandwidth"), per call.
struct LayerMetric {
  std::string name;
  std::string unit;
  std::optional<double> value;
  std::string reason;
  bool below_resolution = false;  // computed from a counter below resolution
};

// One reason a layer takes the time it does, from the rule table of src/placement/causes.cpp
// (docs/profile.md, "Why"): which rule, a short label for tables, what was seen (with the
// numbers) and what to try.
struct LayerCause {
  std::string rule;    // stable id, e.g. "depthwise_conv", "tiny_gemm", "transcendental"
  std::string label;   // a few words for a table cell: "tiny GEMM: K = 9"
  std::string text;    // what hwprof saw, with the figures
  std::string advice;  // what to try
};

// A torch profile's op row by its calls' input shapes (docs/torch.md, "Shapes"): the shapes
// that took the most time kept apart, the rest summed as "other shapes".
struct ShapeRow {
  std::string shape;  // "16x64x256, 1000x256, 1000"; "other shapes" for the rest
  std::uint64_t calls = 0;
  double time_ms = 0.0;  // over those calls
  double flops = 0.0;    // over those calls (0 where not counted)
  bool other = false;
};

// The most per-call times a profile keeps per layer (LayerProfile::samples_ms).
inline constexpr std::size_t kMaxKeptSamples = 1000;

struct LayerProfile {
  int index = -1;  // Graph::nodes index; -1 for the model total
  std::string name;
  std::string op;                          // op name (docs/model-specs.md, "Ops and attributes"); "model" for the total
  LayerPhase phase = LayerPhase::forward;  // Profile::total's is not used: it spans the run (profile_phase_name)
  Shape output_shape;                      // per sample
  bool causal = false;                     // attention: the mask (for the FLOPs comparison's reasons)
  // Analytic, per call (the whole batch).
  std::int64_t params = 0;
  std::int64_t macs = 0;
  std::int64_t flops = 0;  // analytic FLOPs of this phase (forward, backward or optimizer)
  std::int64_t bytes = 0;  // analytic minimum traffic
  // Non-empty: the row has no analytic count, and why ("not counted: hwprof has no formula for
  // this op", "counted in the op around it"); its flops and bytes are unknown, not 0.
  std::string work_note;
  // The row's count leaves out part of what ran in it: the ops inside a module or scope that hwprof
  // has no formula for, with their share of its time ("22% of its time in ops without a count:
  // aten::addcmul_, aten::sqrt"); its rates are then lower bounds. Empty when complete.
  std::string work_partial;
  // A torch profile's op that ran only inside other rows' regions (a module's, a composite
  // op's): its time is theirs too. Its table leaves it out unless every row is asked for.
  bool nested_op = false;
  // Measured: milliseconds per call, overhead subtracted (statistics of the kept iterations).
  Summary time_ms;
  // The kept per-call times themselves (ms, overhead subtracted, in call order; evenly thinned
  // to at most kMaxKeptSamples), so that two profiles can be compared with a significance test
  // (hwprof compare). Empty in profiles written before they were kept.
  std::vector<double> samples_ms;
  double time_share = 0.0;        // this layer's median / the model total's median (per iteration)
  bool below_resolution = false;  // median shorter than 100 × the measurement's own cost
  double own_cost_ns = 0.0;  // that cost per call where it is the row's own (a program's row: counted or time only); 0: the profile's overhead_ns
  std::vector<LayerCounter> counters;
  std::vector<LayerMetric> metrics;
  // Roofline placement (flops and bytes with their sources inside); absent with `roofline_error`
  // when it could not be placed (no calibration run for this thread count, no time).
  std::optional<RooflinePoint> roofline;
  std::string roofline_error;
  std::vector<std::string> bytes_skipped;  // the fallback chain's skipped steps, with reasons
  BytesOrigin bytes_origin = BytesOrigin::analytic_minimum;
  // Measured FP operations against the analytic count, where FP counters exist.
  std::optional<FlopsComparison> flops_check;
  // Why: the causes that apply, most telling first. Every profiled layer has at least one.
  std::vector<LayerCause> why;
  // A program's row (regions, torch): its calls (a backward row's are the forward calls whose
  // backward ran), its time over all of them, and that time per the profile's time basis
  // (Profile::time_basis: per step, or over the run). 0 in a model's profile, whose figures are
  // per pass (time_ms).
  std::uint64_t calls = 0;
  double total_ms = 0.0;
  double basis_ms = 0.0;
  // Of its calls and total time, those after the program's last step (an evaluation, a final
  // print): in total_ms, not in basis_ms. 0 without steps.
  std::uint64_t after_steps_calls = 0;
  double after_steps_ms = 0.0;
  // The threads its work ran on (PyTorch's intra-op threads at its calls; the most where they
  // changed), and the fewest: 0 where not known.
  int threads = 0;
  int threads_min = 0;
  std::vector<ShapeRow> shapes;  // a torch op row's calls by input shapes
  // Its achieved rate is above anything this machine can do by more than its own uncertainty:
  // a count or a time that cannot be right. Shown apart with `impossible_reason`, never as a
  // figure; left out of time to win and of totals.
  bool impossible = false;
  std::string impossible_reason{};
};

// One span of the timeline (Chrome trace): a phase of one iteration, or a layer inside it.
struct TraceSpan {
  std::string name;
  std::string category;  // "phase" or "layer"
  int layer = -1;        // Graph::nodes index for layer spans
  int iteration = 0;
  int thread = 0;         // a small thread number (0: the thread that ran the model)
  double start_us = 0.0;  // since the profile's first span
  double duration_us = 0.0;
};

struct ProfileMemory {
  MemoryEstimate analytic;                  // the cost model's memory at this batch and optimizer
  std::int64_t parameter_bytes = 0;         // measured: the executor's parameters (tied once)
  std::int64_t peak_allocated_bytes = 0;    // measured: tensor allocator peak during the run, parameters excluded
  std::int64_t peak_rss_bytes = 0;          // measured: the process's peak resident set (getrusage)
  std::optional<std::int64_t> page_faults;  // measured: minor + major faults during the run
};

struct ProfileMachine {
  std::string host;
  MachineCpu cpu;
  std::string calibration_file;  // where the ceilings came from; empty when none
  std::string calibration_created;
  bool calibration_quick = false;
  std::optional<CalibrationRun> ceilings;  // the run with the profile's thread count
  TheoreticalPeaks theoretical;
  std::string blas_core;         // the OpenBLAS kernels the dense layers ran on (hwprof::blas_info)
  std::string blas_core_source;  // why those kernels
};

// Regions of a program (<hwprof/regions.hpp>): one region's totals on one thread.
struct RegionThreadRow {
  int thread = 0;  // the session's thread number
  std::string thread_name;
  std::string region;
  std::uint64_t calls = 0;
  double inclusive_ms = 0.0;
  double exclusive_ms = 0.0;
};

// One call path of the merged tree: "train_step/forward/fc1".
struct CallPathRow {
  std::string path;
  int depth = 0;
  std::uint64_t calls = 0;
  double inclusive_ms = 0.0;
  double exclusive_ms = 0.0;
  std::optional<double> flops;  // the work its calls gave, summed (an op that counts it); absent where none
};

// Statistical sampling inside the layers (hwprof profile --sample; docs/sampling.md): which
// functions each layer's samples landed in, with their share and its 95 % interval.
struct SampledFunction {
  std::string function;  // demangled; "libfoo.so+0x1a2b" where no symbol covers it; "[unknown] 0x7f..."
  std::string module;    // the mapped file ("libopenblas.so.0"), empty where unknown
  std::uint64_t samples = 0;
  double share = 0.0;  // of the layer's samples
  double low = 0.0;    // the share's 95 % Wilson interval
  double high = 0.0;
};

// A kind of code in a layer's samples: "GEMM kernel", "GEMM packing", "im2col", "OpenMP
// runtime" ... (docs/sampling.md, "Parts of a layer"), every sample's leaf function sorted
// into one.
struct SampledPart {
  std::string part;
  std::uint64_t samples = 0;
  double share = 0.0;  // of the layer's samples
  double low = 0.0;    // the share's 95 % Wilson interval
  double high = 0.0;
};

struct SampledLayer {
  std::string name;  // the layer's row (its name, and " (backward)" / " (optimizer)" where not forward)
  int layer = -1;    // Graph::nodes index; -1 for the row of samples outside every layer
  std::uint64_t samples = 0;
  std::uint64_t by_pool_workers = 0;  // of them, taken on threads that entered no layer (BLAS, OpenMP workers)
  bool enough = false;                // enough samples for the shares to say something (docs/sampling.md, "Attribution")
  std::vector<SampledFunction> top;   // most samples first
  std::uint64_t rest = 0;             // samples in functions not listed
  std::vector<SampledPart> parts;     // every part with samples, most first
  // The row of the samples outside every layer (or region) and the ambiguous ones, whatever its
  // name says: last of the rows.
  bool outside = false;
};

// Distinct sampled stacks for the flame graph and the folded/speedscope files: frames are
// indices into `frame_names`, the layer first, then the functions from the outermost caller to
// the leaf.
struct SampledStackRow {
  std::vector<int> frames;
  std::uint64_t samples = 0;
};

// One sample inside a traced pass, for the Chrome trace's lanes (docs/sampling.md, "Outputs").
struct SampleInstant {
  double time_us = 0.0;  // since the trace's origin (the one TraceSpan::start_us counts from)
  int thread = 0;        // the lane: TraceSpan::thread of the layer's thread (a pool worker's: its launching thread's)
  int row = -1;          // the layer's row: an index into frame_names (a stack's root frame)
  int frame = -1;        // the leaf function: an index into frame_names
};

struct SamplingProfile {
  std::string spec;             // as given ("cpu-clock@1000")
  std::string rate;             // "1000 Hz" / "every 100000 events"
  std::uint64_t samples = 0;    // kept
  std::uint64_t lost = 0;       // lost by the kernel (its ring was full)
  std::uint64_t throttled = 0;  // times the kernel throttled the rate
  std::uint64_t dropped = 0;    // past hwprof's own cap
  std::uint64_t ambiguous = 0;  // on a thread without a layer while several threads had one open
  std::uint64_t outside = 0;    // while no layer was open anywhere (between passes, the runtime)
  // Taken after the session's timeline was full (a regions program past its first
  // timeline_calls calls, HWPROF_TIMELINE_EVENTS): which region was open is not known, so
  // they are attributed to no row, and not counted as outside either.
  std::uint64_t timeline_full = 0;
  std::uint64_t timeline_calls = 0;
  // Measured in the same run: the median pass with sampling on against the median without
  // (sampling is on every other measured pass), minus 1. NaN where not enough passes ran.
  // A regions program (cost_from "windows") alternates sampled and unsampled time windows
  // instead: the regions' median calls in each, compared (docs/sampling.md, "What sampling
  // costs a regions program").
  double overhead = 0.0;
  double overhead_noise = 0.0;  // half the unsampled passes' range over their median: what the cost cannot be told from
  int sampled_passes = 0;       // passes, or windows where cost_from is "windows"
  int unsampled_passes = 0;
  std::string cost_from = "passes";   // "passes" (hwprof profile) or "windows" (a regions program)
  std::string overhead_reason;        // why overhead is NaN, where it is
  std::vector<std::string> warnings;  // losses, throttling, cut callchains, symbols not read
  std::vector<SampledLayer> layers;   // the layers with samples, most samples first; the outside row last
  std::vector<std::string> frame_names;
  std::vector<SampledStackRow> stacks;
  std::vector<std::string> frame_modules;  // per frame_names entry, its module ("" for a row, [kernel], unknown); may be empty
  std::vector<SampleInstant> instants;     // samples inside the traced passes, in time order, the first kMostSampleInstants
  std::uint64_t instants_left_out = 0;     // samples inside the traced passes past that cap
};
inline constexpr std::size_t kMostSampleInstants = 20000;

struct Profile {
  int schema = kProfileSchema;  // the version it was read from (profile_from_json migrates it); written as kProfileSchema
  std::string created;          // ISO 8601, UTC
  std::string hwprof_version;
  ProfileMachine machine;
  std::string model;
  Shape input_shape;       // per sample
  std::int64_t batch = 1;  // 0: not known (a program's run that did not say)
  ProfileKind kind = ProfileKind::model;
  RunPhase phase = RunPhase::inference;  // a model's passes (inference for a regions profile)
  std::string optimizer;                 // train: "sgd" or "adam"
  // Launched as one of several ranks (mpirun, srun, torchrun): which, of how many (0: the
  // launcher did not say), and the variable that said so. rank -1: a single process.
  int rank = -1;
  int rank_count = 0;
  std::string rank_variable;
  int threads = 1;
  std::string backend;            // "perf", "papi" or "timer"
  std::string group;              // the counter group, if any
  std::vector<EventInfo> events;  // every event asked for, with its status and reason
  // Doubts about the figures themselves, shown before anything else: a calibration measured
  // under contention or without a DRAM tail, layers above 110 % of their roof with the likely
  // cause. A profile without them can be read at face value.
  std::vector<std::string> warnings;
  std::vector<std::string> hints;  // advice: what the counter layer or the environment could do better
  int warmup_runs = 0;
  int iterations = 0;
  double overhead_ns = 0.0;  // the session's begin+end cost, subtracted from every layer
  LayerProfile total;        // the whole model per call: time of the whole pass (or step)
  // A program run's time basis, and its steps (0: none): a torch program's training steps.
  TimeBasis time_basis = TimeBasis::pass;
  std::uint64_t steps = 0;
  Summary step_time_ms;              // the steps' own times (ms), where it had steps
  double after_steps_ms = 0.0;       // its outermost rows' time after the last step, apart from the steps'
  std::vector<LayerProfile> layers;  // forward layers in order, then backward and optimizer ones
  ProfileMemory memory;
  std::vector<TraceSpan> trace;  // sampled iterations only (see trace_iterations)
  int trace_iterations = 0;
  std::string trace_note;  // what a program's trace holds where it is not every call ("steps 1-2 and 19-20 of 20, whole")
  // Regions profiles: every region per thread, and the merged call tree (total over calls).
  std::vector<RegionThreadRow> region_threads;
  std::vector<CallPathRow> call_paths;
  // Passes of their own over which the counters were summed, so that reading them never
  // touched the times (0: the times' passes read them, as with the timer backend's clocks).
  int counter_iterations = 0;
  std::optional<SamplingProfile> sampling;  // hwprof profile --sample
};

// The profile's phase as profile.json and the reports write it: "regions" for a regions
// profile, else its run phase ("forward" or "train").
std::string_view profile_phase_name(const Profile& profile) noexcept;

// JSON (docs/profile.md): the stable, documented format; profile_from_json reads it back
// (for `hwprof report`), refusing a newer schema or a malformed file with the place named.
std::string profile_to_json(const Profile& profile);
// The same with "groups": the layers summed per op, or per block of `depth` name parts
// (`hwprof profile --by`). ProfileGrouping::layer adds nothing.
enum class ProfileGrouping { layer, op, block, module };
std::string profile_to_json(const Profile& profile, ProfileGrouping by, int depth);
Result<Profile> profile_from_json(std::string_view text, const std::string& source_name);
Result<Profile> load_profile(const std::string& path);

}  // namespace hwprof
HWPROF_API_END
