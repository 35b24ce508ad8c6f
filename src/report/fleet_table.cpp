// Machine reports side by side as a table for a terminal: each machine, then every ceiling of
// the one-thread and the all-cores runs with its ratio to A's.
#include <fmt/format.h>

#include "common/stages.hpp"
#include "report/fleet.hpp"

namespace hwprof::report {
namespace {

std::string cache_text(const Machine& m) {
  std::string out;
  for (const CacheInfo& c : m.cpu.caches) {
    if (!out.empty()) out += ", ";
    out += fmt::format("L{} {}", c.level,
                       c.size_bytes >= (1 << 20) ? fmt::format("{:g} MiB", c.size_bytes / 1048576.0) : fmt::format("{} KiB", c.size_bytes / 1024));
  }
  return out.empty() ? "-" : out;
}

}  // namespace

std::string fleet_table(const FleetComparison& fleet) {
  const std::vector<FleetMachine>& machines = fleet.machines;
  std::string out = fmt::format("hwprof compare: {} machine calibrations (ratios to A)\n\n", machines.size());
  for (std::size_t i = 0; i < machines.size(); ++i) {
    const Machine& m = machines[i].machine;
    out += fmt::format("{}: {} — {} ({} cores, {} logical CPUs{}), calibrated {}{}{}\n   {}\n   caches: {}\n", fleet.labels[i],
                       m.host.empty() ? "-" : m.host, m.cpu.brand, m.cpu.cores, m.cpu.logical_cpus, m.cpu.hypervisor ? ", virtual machine" : "",
                       m.created, m.quick ? " (quick)" : "", m.contention.contended ? ", CONTENDED: ceilings too low" : "", machines[i].file,
                       cache_text(m));
  }
  for (const FleetRuns* runs : {&fleet.one_thread, &fleet.all_cores}) {
    out += fmt::format("\n{:<14}", runs->all_cores ? "All cores" : "1 thread");
    for (std::size_t i = 0; i < machines.size(); ++i) {
      const std::optional<int> threads = runs->threads[i];
      out += fmt::format("  {:>20}", fleet.labels[i] + (runs->all_cores && threads ? fmt::format(" ({} thr)", *threads) : ""));
    }
    out += "\n";
    for (const FleetCeiling& c : runs->ceilings) {
      std::string line = fmt::format("{:<14}", c.label);
      bool any = false;
      for (std::size_t i = 0; i < machines.size(); ++i) {
        const std::optional<double> v = c.values[i];
        any = any || v.has_value();
        std::string cell = v ? fmt::format("{:.3g} {}", *v, c.unit) : std::string("-");
        if (i > 0 && c.ratios[i]) cell += fmt::format(" {:.2f}x", *c.ratios[i]);
        line += fmt::format("  {:>20}", cell);
      }
      if (any) out += line + "\n";
    }
  }
  out += "\n(x: the ratio to A's ceiling on the same row; '-': not measured there. Bandwidth is STREAM triad, decimal GB/s.)\n";
  return out;
}

}  // namespace hwprof::report
