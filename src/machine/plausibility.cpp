// What a machine report must satisfy to be believed, and what a profile placed under it must
// say about it first.
//
// The orders checked are physics, not tuning: a nearer level never streams slower than a
// farther one (each level's data passes through the nearer ones), a double-precision FMA or
// GEMM never outruns single precision on the same units, and a GEMM is FMAs plus loads, so it
// cannot beat the FMA peak. 5 % is allowed where two measurements meet, for noise. A measured
// peak more than twice the theoretical one means a wrong clock or a broken kernel: turbo
// over a VM's TSC rate stays far below that.
#include <cmath>

#include <fmt/format.h>

#include "hwprof/engine/machine.hpp"

namespace hwprof {
namespace {

constexpr double kNoise = 1.05;
constexpr double kTheoreticalFactor = 2.0;

const Ceiling* triad_of(const CalibrationRun& run, const char* level) {
  auto it = run.bandwidth.find(level);
  if (it == run.bandwidth.end()) return nullptr;
  auto k = it->second.kernels.find("triad");
  return k == it->second.kernels.end() ? nullptr : &k->second;
}

const Ceiling* compute_of(const CalibrationRun& run, const std::string& name) {
  auto it = run.compute.find(name);
  return it == run.compute.end() ? nullptr : &it->second;
}

}  // namespace

std::vector<std::string> implausible_fields(const Machine& m) {
  std::vector<std::string> problems;
  for (std::size_t i = 0; i < m.runs.size(); ++i) {
    const CalibrationRun& run = m.runs[i];
    const std::string at = "/runs/" + std::to_string(i);
    // L1 ≥ L2 ≥ L3 ≥ DRAM, among the levels present.
    const char* nearer = nullptr;
    for (const char* level : {"l1", "l2", "l3", "dram"}) {
      const Ceiling* c = triad_of(run, level);
      if (c == nullptr) continue;
      if (nearer != nullptr) {
        const Ceiling* n = triad_of(run, nearer);
        if (c->best > kNoise * n->best) {
          problems.push_back(
              fmt::format("{0}/bandwidth/{1}/triad_gbps ({2:.1f} GB/s) exceeds {0}/bandwidth/{3}/triad_gbps "
                          "({4:.1f} GB/s) by more than 5%: a farther level cannot stream faster than a nearer "
                          "one (L1 >= L2 >= L3 >= DRAM)",
                          at, level, c->best, nearer, n->best));
        }
      }
      nearer = level;
    }
    for (const char* kind : {"fma", "gemm"}) {
      const Ceiling* sp = compute_of(run, std::string(kind) + "_sp");
      const Ceiling* dp = compute_of(run, std::string(kind) + "_dp");
      if (sp != nullptr && dp != nullptr && dp->best > kNoise * sp->best) {
        problems.push_back(
            fmt::format("{0}/compute/{1}_dp_gflops ({2:.1f}) exceeds {0}/compute/{1}_sp_gflops ({3:.1f}): "
                        "double precision cannot outrun single precision (DP <= SP)",
                        at, kind, dp->best, sp->best));
      }
    }
    for (const char* precision : {"sp", "dp"}) {
      const Ceiling* gemm = compute_of(run, std::string("gemm_") + precision);
      const Ceiling* fma = compute_of(run, std::string("fma_") + precision);
      if (gemm != nullptr && fma != nullptr && gemm->best > kNoise * fma->best) {
        problems.push_back(
            fmt::format("{0}/compute/gemm_{1}_gflops ({2:.1f}) exceeds {0}/compute/fma_{1}_gflops ({3:.1f}): a "
                        "GEMM is FMAs and loads, it cannot beat the FMA peak (GEMM <= FMA)",
                        at, precision, gemm->best, fma->best));
      }
      // The theoretical figure is for every core; a run on fewer scales it down.
      const double per_core = std::string(precision) == "sp" ? m.theoretical.sp_gflops : m.theoretical.dp_gflops;
      if (!(per_core > 0) || m.theoretical.cores < 1) continue;
      const double theoretical = per_core * std::min(run.threads, m.theoretical.cores) / m.theoretical.cores;
      for (const Ceiling* c : {fma, gemm}) {
        if (c == nullptr || c->best <= kTheoreticalFactor * theoretical) continue;
        problems.push_back(
            fmt::format("{0}/compute/{1}_{2}_gflops ({3:.1f}) is more than twice the theoretical {4:.1f} GFLOP/s "
                        "for {5} core(s) (/theoretical): a broken kernel or a wrong clock",
                        at, c == fma ? "fma" : "gemm", precision, c->best, theoretical, run.threads));
      }
    }
  }
  return problems;
}

std::vector<std::string> calibration_doubts(const Machine& m, int threads) {
  std::vector<std::string> doubts;
  if (m.contention.contended) {
    std::string evidence;
    for (const std::string& e : m.contention.evidence) evidence += (evidence.empty() ? "" : "; ") + e;
    doubts.push_back("the calibration was measured while other processes ran (" + evidence +
                     "): its ceilings are too low, and layers may show above 100% of them; calibrate again on a quiet machine");
  }
  for (const std::string& p : implausible_fields(m)) doubts.push_back("the calibration is implausible: " + p);
  const CalibrationRun* run = m.run_for(threads);
  if (run == nullptr) return doubts;
  auto dram = run->bandwidth.find("dram");
  if (dram == run->bandwidth.end()) {
    doubts.push_back(
        fmt::format("the calibration's {}-thread run has no DRAM ceiling: memory-bound layers are placed under the "
                    "nearest cache's bandwidth",
                    threads));
  } else if (!dram->second.plateau) {
    doubts.push_back(
        fmt::format("the calibration's DRAM ceiling for {} thread(s) ({:.1f} GB/s) is not from a flat tail{}: "
                    "memory-bound layers may be placed too high or too low",
                    threads, dram->second.kernels.count("triad") ? dram->second.kernels.at("triad").best : 0.0,
                    dram->second.note.empty() ? "" : " (" + dram->second.note + ")"));
  }
  for (const auto& [name, level] : run->bandwidth) {
    if (name != "dram" && level.capacity_source.empty() && !level.note.empty() && level.capacity_bytes == 0) {
      doubts.push_back(fmt::format("where {} ends is unknown ({}): layers are named by the levels that are known", name, level.note));
    }
  }
  return doubts;
}

}  // namespace hwprof
