// hwprof calibrate: measures this machine's ceilings — bandwidth of every memory level from a
// working-set sweep, FMA and GEMM compute — for each thread count, and puts the theoretical
// peaks beside them.
#include <algorithm>
#include <chrono>
#include <cmath>

#include <unistd.h>

#include "calibrate/bandwidth.hpp"
#include "calibrate/compute.hpp"
#include "calibrate/topology.hpp"
#include "common/timestamp.hpp"
#include "hwprof/machine.hpp"
#include "hwprof/version.hpp"

namespace hwprof {
namespace {

using detail::BandwidthSample;
using detail::StreamKernel;

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

Ceiling to_ceiling(const detail::ComputeSample& s) {
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
  return std::string(detail::stream_kernel_name(s.kernel)) + (s.nontemporal ? "_nt" : "");
}

// Bytes of each cache level as `threads` workers on distinct cores see them together: a
// private cache counts once per worker, a shared one once per instance they use.
// The level a working set belongs to when quick mode measures one size per level.
std::string level_name(std::size_t index, std::size_t cache_levels) {
  if (index >= cache_levels) return "dram";
  return "l" + std::to_string(index + 1);
}

}  // namespace

Result<Machine> calibrate(const CalibrationOptions& options) {
  const auto say = [&](const std::string& line) {
    if (options.progress) options.progress(line);
  };
  Machine m;
  m.created = detail::utc_timestamp();
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  m.host = host;
  m.hwprof_version = kVersion;
  m.quick = options.quick;
  m.cpu = describe_this_cpu();
  if (!options.single_precision && !options.double_precision) return Error{"--precision: choose sp, dp or both"};

  const std::vector<int> core_cpus = detail::cpus_one_per_core();
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

  const std::vector<detail::Isa> isas = detail::supported_isas();
  const detail::Isa best_isa = isas.empty() ? detail::Isa::sse2 : isas.back();
  const detail::TheoreticalPeak peak = detail::theoretical_peak(m.cpu.vendor, m.cpu.family, m.cpu.model, best_isa,
                                                                static_cast<int>(core_cpus.size()), m.cpu.frequency_ghz,
                                                                m.cpu.frequency_source);
  m.theoretical = {peak.isa, peak.cores, peak.ghz, peak.ghz_source, peak.sp_flops_per_cycle, peak.dp_flops_per_cycle,
                   peak.sp_gflops, peak.dp_gflops, peak.assumptions};

  for (int threads : thread_counts) {
    const auto t0 = std::chrono::steady_clock::now();
    CalibrationRun run;
    run.threads = threads;
    run.cpus.assign(core_cpus.begin(), core_cpus.begin() + threads);
    const std::vector<std::int64_t> caches = cache_capacities(m.cpu, threads);
    const std::int64_t llc = caches.empty() ? (32 << 20) : caches.back();

    // Bandwidth: a sweep (quick: one size in the middle of each level and one well past the LLC).
    detail::BandwidthOptions bw;
    bw.cpus = run.cpus;
    if (options.quick) {
      std::int64_t lower = 0;
      for (std::int64_t c : caches) {
        bw.working_sets.push_back(std::max<std::int64_t>(lower * 2, c / 2));
        lower = c;
      }
      bw.working_sets.push_back(std::max<std::int64_t>(8 * llc, 256 << 20));  // in DRAM's band (plateau.cpp)
      bw.repetitions = 3;
      bw.seconds_per_point = 0.01;
    } else {
      bw.working_sets = detail::sweep_sizes(caches, threads, 512 << 20);
    }
    say("calibrating " + std::to_string(threads) + " thread(s): memory bandwidth over " + std::to_string(bw.working_sets.size()) +
        " working-set sizes");
    const std::vector<BandwidthSample> samples = detail::measure_bandwidth(bw);
    // Non-temporal stores for the DRAM ceiling, at the largest size.
    detail::BandwidthOptions nt = bw;
    nt.working_sets = {bw.working_sets.back()};
    nt.kernels = {StreamKernel::copy, StreamKernel::triad};
    nt.nontemporal = true;
    std::vector<BandwidthSample> nt_samples = detail::measure_bandwidth(nt);

    for (const BandwidthSample& s : samples) run.sweep.push_back({s.working_set, kernel_key(s), s.best_gbps, s.median_gbps});
    for (const BandwidthSample& s : nt_samples) run.sweep.push_back({s.working_set, kernel_key(s), s.best_gbps, s.median_gbps});

    // Levels: plateaus of the triad curve (quick: the designated sizes).
    std::vector<detail::Plateau> plateaus;
    if (options.quick) {
      // One size per level: each level takes the samples nearest (in log size) to its size,
      // since the kernels round working sets to whole per-thread chunks.
      for (std::size_t i = 0; i < bw.working_sets.size(); ++i) {
        detail::Plateau p;
        p.level = level_name(i, caches.size());
        p.from_bytes = bw.working_sets[i];
        p.to_bytes = bw.working_sets[i];
        for (const BandwidthSample& s : samples) {
          std::size_t nearest = 0;
          for (std::size_t k = 1; k < bw.working_sets.size(); ++k) {
            const auto distance = [&](std::size_t j) {
              return std::fabs(std::log(static_cast<double>(s.working_set) / static_cast<double>(bw.working_sets[j])));
            };
            if (distance(k) < distance(nearest)) nearest = k;
          }
          if (nearest != i) continue;
          p.from_bytes = std::min(p.from_bytes, s.working_set);
          p.to_bytes = std::max(p.to_bytes, s.working_set);
        }
        plateaus.push_back(p);
      }
    } else {
      std::vector<std::pair<std::int64_t, double>> curve;
      for (const BandwidthSample& s : samples) {
        if (s.kernel == StreamKernel::triad) curve.emplace_back(s.working_set, s.best_gbps);
      }
      plateaus = detail::with_band_fallbacks(detail::find_plateaus(curve, caches), curve, caches);
    }
    for (const detail::Plateau& p : plateaus) {
      BandwidthLevel level;
      level.from_bytes = p.from_bytes;
      level.to_bytes = p.to_bytes;
      level.plateau = p.flat;
      for (const BandwidthSample& s : samples) {
        if (s.working_set < p.from_bytes || s.working_set > p.to_bytes) continue;
        Ceiling& c = level.kernels[kernel_key(s)];
        if (s.best_gbps > c.best) c = to_ceiling(s);
      }
      if (p.level == "dram") {
        for (const BandwidthSample& s : nt_samples) level.kernels[kernel_key(s)] = to_ceiling(s);
      }
      if (level.kernels.count("triad")) run.bandwidth[p.level] = level;
    }

    // Compute.
    detail::ComputeOptions compute;
    compute.cpus = run.cpus;
    compute.single = options.single_precision;
    compute.dual = options.double_precision;
    if (options.quick) {
      compute.repetitions = 3;
      compute.seconds_per_point = 0.02;
      compute.gemm_sizes = {512, 1024};
    }
    say("calibrating " + std::to_string(threads) + " thread(s): FMA peak and OpenBLAS GEMM");
    for (const auto& s : detail::measure_fma(compute)) run.compute[s.what] = to_ceiling(s);
    for (const auto& s : detail::measure_gemm(compute)) run.compute[s.what] = to_ceiling(s);
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    m.runs.push_back(std::move(run));
  }
  return m;
}

}  // namespace hwprof
