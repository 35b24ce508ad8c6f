// hwprof calibrate: measures this machine's ceilings — bandwidth of every memory level from a
// working-set sweep whose own knees decide where the levels end, FMA and GEMM compute — for
// each thread count, and puts the theoretical peaks beside them. Every phase is watched for
// other processes: a disturbed phase is measured again once its neighbours are gone, and one
// that stays disturbed marks the report contended, with the evidence. A report that breaks
// the ceilings' own order (implausible_fields) has its runs measured again.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <unistd.h>

#include "calibrate/compute.hpp"
#include "calibrate/contention.hpp"
#include "calibrate/memory_sweep.hpp"
#include "common/cpu_topology.hpp"
#include "common/timestamp.hpp"
#include "hwprof/engine/machine.hpp"
#include "hwprof/version.hpp"
#include "machine/cache_topology.hpp"

namespace hwprof {
namespace {

using calibration::BandwidthSample;
using Say = std::function<void(const std::string&)>;

Ceiling to_ceiling(const BandwidthSample& s) {
  Ceiling c;
  c.best = s.best_gbps;
  c.median = s.median_gbps;
  c.spread = s.spread;
  c.repetitions = s.repetitions;
  c.size = s.working_set;
  c.variant = s.nontemporal ? "nontemporal" : "";
  c.note = s.note;
  return c;
}

Ceiling to_ceiling(const calibration::ComputeSample& s) {
  Ceiling c;
  c.best = s.best_gflops;
  c.median = s.median_gflops;
  c.spread = s.spread;
  c.repetitions = s.repetitions;
  c.size = s.size;
  c.variant = s.isa;
  c.note = s.note;
  return c;
}

std::string kernel_key(const BandwidthSample& s) {
  return std::string(calibration::stream_kernel_name(s.kernel)) + (s.nontemporal ? "_nt" : "");
}

BandwidthLevel level_of(const calibration::DetectedLevel& d, const calibration::MemorySweep& sweep) {
  BandwidthLevel level;
  level.from_bytes = d.sizes.front();
  level.to_bytes = d.sizes.back();
  level.plateau = d.flat;
  level.capacity_bytes = d.capacity_bytes;
  level.capacity_source = d.capacity_source;
  level.reported_bytes = d.reported_bytes;
  level.note = d.note;
  // A cache's ceiling is its plateau's best point. DRAM's is its middle point, the median of
  // its points' best values: on a host whose memory bandwidth drifts by tens of percent, the
  // best of three points is the luckiest moment, not what a layer can count on.
  std::map<std::string, std::vector<const BandwidthSample*>> by_kernel;
  for (const BandwidthSample& s : sweep.samples) {
    if (std::find(d.sizes.begin(), d.sizes.end(), s.working_set) != d.sizes.end()) by_kernel[kernel_key(s)].push_back(&s);
  }
  for (auto& [kernel, points] : by_kernel) {
    std::sort(points.begin(), points.end(), [](const BandwidthSample* a, const BandwidthSample* b) { return a->best_gbps < b->best_gbps; });
    level.kernels[kernel] = to_ceiling(d.level == "dram" ? *points[(points.size() - 1) / 2] : *points.back());
  }
  if (d.level == "dram") {
    for (const BandwidthSample& s : sweep.nontemporal) level.kernels[kernel_key(s)] = to_ceiling(s);
  }
  return level;
}

// A phase's result and how many of its measurements stayed disturbed inside it.
template <class T>
struct Phase {
  T value;
  int disturbed = 0;
  std::string what;  // the disturbed measurements, in words
};

// Runs `measure` watching the machine. A disturbed phase is measured again once the machine
// is quiet; one still disturbed, or with its neighbours still there, marks the report
// contended with the evidence.
template <class F>
auto watched(const std::string& phase, Contention& contention, const Say& say, F measure) {
  for (int attempt = 0;; ++attempt) {
    calibration::LoadWatch watch;
    watch.begin();
    auto result = measure();
    const calibration::Load load = watch.end();
    contention.others_cpus = std::max(contention.others_cpus, load.others_cpus);
    contention.steal_percent = std::max(contention.steal_percent, 100.0 * load.steal_fraction);
    const bool busy = calibration::contended(load);
    if (!busy && result.disturbed == 0) {
      if (attempt > 0) contention.evidence.push_back(phase + ": disturbed at first; quiet when measured again");
      return result;
    }
    std::string seen = busy ? calibration::describe(load) : "";
    if (result.disturbed > 0) seen += (seen.empty() ? "" : "; ") + result.what;
    if (attempt == 0) {
      const calibration::LoadCheck now = calibration::check_load(0.3);
      if (!calibration::contended(now.load)) {
        say(phase + ": disturbed by another process (" + seen + "); measuring it again");
        continue;
      }
      contention.evidence.push_back(phase + ": " + seen + "; not measured again, as the machine was still busy: " + now.words());
    } else {
      contention.evidence.push_back(phase + " (measured twice): " + seen);
    }
    contention.contended = true;
    return result;
  }
}

// Waits up to `patience` seconds for the machine to be quiet before measuring, and says who
// kept it busy.
void check_before(Contention& contention, const Say& say, double patience) {
  const auto start = std::chrono::steady_clock::now();
  calibration::LoadCheck check = calibration::check_load(0.25);
  if (!calibration::contended(check.load)) return;
  say("the machine is busy (" + check.words() + "): waiting up to " + fmt::format("{:.0f}", patience) + " s for it to be quiet");
  const std::string first = check.words();
  while (calibration::contended(check.load) && std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < patience) {
    check = calibration::check_load(0.25);
  }
  contention.others_cpus = std::max(contention.others_cpus, check.load.others_cpus);
  contention.steal_percent = std::max(contention.steal_percent, 100.0 * check.load.steal_fraction);
  contention.evidence.push_back(calibration::contended(check.load) ? "before: " + check.words() + " (still, after waiting)"
                                                                   : "before: " + first + " (quiet after waiting)");
}

calibration::ComputeOptions compute_options(const std::vector<int>& cpus, const CalibrationOptions& options) {
  calibration::ComputeOptions compute;
  compute.cpus = cpus;
  compute.single = options.single_precision;
  compute.dual = options.double_precision;
  if (options.quick) {
    compute.repetitions = 3;
    compute.seconds_per_point = 0.02;
    compute.gemm_sizes = {512, 1024};
  }
  return compute;
}

Result<CalibrationRun> measure_run(int threads, const std::vector<int>& cpus, const std::vector<machine::CacheReport>& reports, const MachineCpu& cpu,
                                   const CalibrationOptions& options, Contention& contention, const Say& say) {
  CalibrationRun run;
  run.threads = threads;
  run.cpus = cpus;
  const auto t0 = std::chrono::steady_clock::now();

  // The FMA peak in two windows, before the memory sweep and after it, keeping the better:
  // a host's other tenants can slow one window of a quarter second by several percent (a
  // full calibration only: quick keeps to its time).
  const std::vector<calibration::ComputeSample> early_fma =
      options.quick ? std::vector<calibration::ComputeSample>{} : calibration::measure_fma(compute_options(cpus, options));

  calibration::MemorySweepOptions so;
  so.cpus = cpus;
  so.evidence = machine::level_evidence(reports, cpus, cpu.logical_cpus, cpu.cores);
  so.quick = options.quick;
  so.extend_seconds = options.quick ? 0.5 : 1.5;
  so.say = say;
  const std::string label = std::to_string(threads) + " thread" + (threads == 1 ? "" : "s");
  auto memory = watched(label + ", memory sweep", contention, say, [&] {
    Phase<calibration::MemorySweep> p{calibration::sweep_memory(so), 0, ""};
    p.disturbed = p.value.still_disturbed;
    p.what = fmt::format(
        "{} of {} sweep points kept repetitions in which a worker had its CPU less than {:.0f}% of the time, "
        "after measuring them again",
        p.value.still_disturbed, p.value.samples.size(), 100 * calibration::kMinCpuShare);
    return p;
  });
  const calibration::MemorySweep& sweep = memory.value;
  if (!sweep.error.empty()) return Error{"the bandwidth sweep failed: " + sweep.error};
  for (const BandwidthSample& s : sweep.samples) run.sweep.push_back({s.working_set, kernel_key(s), s.best_gbps, s.median_gbps});
  for (const BandwidthSample& s : sweep.nontemporal) run.sweep.push_back({s.working_set, kernel_key(s), s.best_gbps, s.median_gbps});
  for (const calibration::DetectedLevel& d : sweep.levels.levels) {
    if (d.sizes.empty()) continue;
    BandwidthLevel level = level_of(d, sweep);
    if (level.kernels.count("triad")) run.bandwidth[d.level] = std::move(level);
  }
  run.notes = sweep.levels.notes;
  run.notes.insert(run.notes.end(), sweep.notes.begin(), sweep.notes.end());

  const calibration::ComputeOptions compute = compute_options(cpus, options);
  say("calibrating " + label + ": FMA peak, OpenBLAS GEMM and the tanh/exp/erf kernels");
  auto measured = watched(label + ", FMA and GEMM", contention, say, [&] {
    Phase<std::vector<calibration::ComputeSample>> p{calibration::measure_fma(compute), 0, ""};
    for (auto& s : calibration::measure_gemm(compute)) p.value.push_back(std::move(s));
    for (auto& s : calibration::measure_transcendentals(compute)) p.value.push_back(std::move(s));
    for (const auto& s : p.value) {
      if (s.shared == 0) continue;
      ++p.disturbed;
      p.what += (p.what.empty() ? "" : "; ") + s.what + ": " + s.note;
    }
    return p;
  });
  for (const auto& s : measured.value) run.compute[s.what] = to_ceiling(s);
  for (const auto& s : early_fma) {
    auto later = run.compute.find(s.what);
    if (later == run.compute.end() || s.best_gflops > later->second.best) run.compute[s.what] = to_ceiling(s);
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return run;
}

// The run numbers a plausibility problem names ("/runs/1/..."), each once.
std::vector<std::size_t> runs_named(const std::vector<std::string>& problems) {
  std::vector<std::size_t> runs;
  for (const std::string& p : problems) {
    const auto at = p.find("/runs/");
    if (at == std::string::npos) continue;
    const std::size_t index = std::strtoul(p.c_str() + at + 6, nullptr, 10);
    if (std::find(runs.begin(), runs.end(), index) == runs.end()) runs.push_back(index);
  }
  return runs;
}

}  // namespace

Result<Machine> calibrate(const CalibrationOptions& options) {
  const Say say = [&](const std::string& line) {
    if (options.progress) options.progress(line);
  };
  if (!options.single_precision && !options.double_precision) return Error{"--precision: choose sp, dp or both"};
  Machine m;
  m.created = common::utc_timestamp();
  m.host = this_host_name();
  m.hwprof_version = kVersion;
  m.quick = options.quick;
  const std::vector<machine::CacheReport> reports = machine::cache_reports_of_this_machine();
  m.cpu = describe_this_cpu();

  const std::vector<int> core_cpus = common::cpus_one_per_core();
  std::vector<int> thread_counts = options.threads;
  if (thread_counts.empty()) thread_counts = {1, static_cast<int>(core_cpus.size())};
  std::sort(thread_counts.begin(), thread_counts.end());
  thread_counts.erase(std::unique(thread_counts.begin(), thread_counts.end()), thread_counts.end());
  for (int t : thread_counts) {
    if (t < 1 || t > static_cast<int>(core_cpus.size())) {
      return Error{"--threads " + std::to_string(t) + ": this machine has " + std::to_string(core_cpus.size()) +
                   " physical cores; calibration runs one pinned thread per core (1 to " + std::to_string(core_cpus.size()) + ")"};
    }
  }

  const std::vector<calibration::Isa> isas = calibration::supported_isas();
  const calibration::Isa best_isa = isas.empty() ? calibration::Isa::sse2 : isas.back();
  const calibration::TheoreticalPeak peak = calibration::theoretical_peak(
      m.cpu.vendor, m.cpu.family, m.cpu.model, best_isa, static_cast<int>(core_cpus.size()), m.cpu.frequency_ghz, m.cpu.frequency_source);
  m.theoretical = {peak.isa,       peak.cores,     peak.ghz,        peak.ghz_source, peak.sp_flops_per_cycle, peak.dp_flops_per_cycle,
                   peak.sp_gflops, peak.dp_gflops, peak.assumptions};

  check_before(m.contention, say, options.quick ? 1.0 : 3.0);
  for (int threads : thread_counts) {
    const std::vector<int> cpus(core_cpus.begin(), core_cpus.begin() + threads);
    auto run = measure_run(threads, cpus, reports, m.cpu, options, m.contention, say);
    if (!run) return run.error();
    m.runs.push_back(std::move(*run));
  }
  // Ceilings out of their own order were measured wrongly: twice more at most. Not under
  // contention: its neighbours would disturb the new measurements the same way, and the
  // report already says it is not to be kept.
  for (int attempt = 0; attempt < 2 && !m.contention.contended; ++attempt) {
    const std::vector<std::string> problems = implausible_fields(m);
    if (problems.empty()) break;
    for (std::size_t index : runs_named(problems)) {
      if (index >= m.runs.size()) continue;
      say("implausible ceilings (" + problems.front() + "): measuring the " + std::to_string(m.runs[index].threads) + "-thread run again");
      auto run = measure_run(m.runs[index].threads, m.runs[index].cpus, reports, m.cpu, options, m.contention, say);
      if (!run) return run.error();
      m.runs[index] = std::move(*run);
    }
  }
  return m;
}

}  // namespace hwprof
