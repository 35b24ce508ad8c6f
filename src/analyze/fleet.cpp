#include "analyze/fleet.hpp"
#include "common/stages.hpp"

namespace hwprof::analysis {
namespace {

// The rows compared: a ceiling of a run, by where it is kept.
struct Row {
  const char* label;
  const char* unit;
  bool bandwidth;  // bandwidth[level].kernels["triad"] (level in key); else compute[key]
  const char* key;
};

constexpr Row kRows[] = {
    {"L1 triad", "GB/s", true, "l1"},
    {"L2 triad", "GB/s", true, "l2"},
    {"L3 triad", "GB/s", true, "l3"},
    {"DRAM triad", "GB/s", true, "dram"},
    {"FMA peak SP", "GFLOP/s", false, "fma_sp"},
    {"FMA peak DP", "GFLOP/s", false, "fma_dp"},
    {"GEMM SP", "GFLOP/s", false, "gemm_sp"},
    {"GEMM DP", "GFLOP/s", false, "gemm_dp"},
    {"tanh kernel", "Geval/s", false, "tanh_sp"},
    {"exp kernel", "Geval/s", false, "exp_sp"},
    {"erf kernel", "Geval/s", false, "erf_sp"},
};

std::optional<double> value_of(const CalibrationRun* run, const Row& row) {
  if (run == nullptr) return std::nullopt;
  if (row.bandwidth) {
    const auto level = run->bandwidth.find(row.key);
    if (level == run->bandwidth.end()) return std::nullopt;
    const auto triad = level->second.kernels.find("triad");
    if (triad == level->second.kernels.end() || triad->second.best <= 0) return std::nullopt;
    return triad->second.best;
  }
  const auto c = run->compute.find(row.key);
  if (c == run->compute.end() || c->second.best <= 0) return std::nullopt;
  return c->second.best;
}

// The one-thread run, and the run with the most threads (all cores, as calibrate makes it).
const CalibrationRun* single_run(const Machine& m) {
  return m.run_for(1);
}
const CalibrationRun* widest_run(const Machine& m) {
  const CalibrationRun* best = nullptr;
  for (const CalibrationRun& r : m.runs) {
    if (best == nullptr || r.threads > best->threads) best = &r;
  }
  return best;
}

std::string letter(std::size_t i) {
  return i < 26 ? std::string(1, static_cast<char>('A' + i)) : std::to_string(i + 1);
}

FleetRuns runs_of(const std::vector<FleetMachine>& machines, bool all_cores) {
  FleetRuns out;
  out.all_cores = all_cores;
  std::vector<const CalibrationRun*> runs;
  for (const FleetMachine& f : machines) {
    runs.push_back(all_cores ? widest_run(f.machine) : single_run(f.machine));
    out.threads.push_back(runs.back() != nullptr ? std::optional<int>(runs.back()->threads) : std::nullopt);
  }
  for (const Row& row : kRows) {
    FleetCeiling c{row.label, row.unit, row.key, {}, {}};
    const std::optional<double> base = runs.empty() ? std::nullopt : value_of(runs[0], row);
    for (const CalibrationRun* run : runs) {
      const std::optional<double> v = value_of(run, row);
      c.values.push_back(v);
      c.ratios.push_back(v && base && *base > 0 ? std::optional<double>(*v / *base) : std::nullopt);
    }
    out.ceilings.push_back(std::move(c));
  }
  return out;
}

}  // namespace

const FleetCeiling* FleetRuns::find(std::string_view key) const {
  for (const FleetCeiling& c : ceilings) {
    if (c.key == key) return &c;
  }
  return nullptr;
}

FleetComparison compare_machines(std::vector<FleetMachine> machines) {
  FleetComparison out;
  for (std::size_t i = 0; i < machines.size(); ++i) out.labels.push_back(letter(i));
  out.one_thread = runs_of(machines, false);
  out.all_cores = runs_of(machines, true);
  out.machines = std::move(machines);
  return out;
}

}  // namespace hwprof::analysis
