// Machine reports side by side as JSON: per machine, every ceiling of its one-thread and
// all-cores runs with its unit and its ratio to the first machine's.
#include <nlohmann/json.hpp>

#include "common/stages.hpp"
#include "report/fleet.hpp"
#include "report/json_number.hpp"

namespace hwprof::report {

std::string fleet_json(const FleetComparison& fleet) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < fleet.machines.size(); ++i) {
    const Machine& m = fleet.machines[i].machine;
    nlohmann::ordered_json e;
    e["label"] = fleet.labels[i];
    e["file"] = fleet.machines[i].file;
    e["host"] = m.host;
    e["cpu"] = m.cpu.brand;
    e["cores"] = m.cpu.cores;
    e["contended"] = m.contention.contended;
    for (const FleetRuns* runs : {&fleet.one_thread, &fleet.all_cores}) {
      nlohmann::ordered_json r;
      r["threads"] = runs->threads[i] ? nlohmann::ordered_json(*runs->threads[i]) : nlohmann::ordered_json(nullptr);
      for (const FleetCeiling& c : runs->ceilings) {
        r[c.key] = {{"value", json_number(c.values[i])}, {"unit", c.unit}, {"ratio_to_first", json_number(c.ratios[i])}};
      }
      e[runs->all_cores ? "all_cores" : "one_thread"] = std::move(r);
    }
    j.push_back(std::move(e));
  }
  return j.dump(2) + "\n";
}

}  // namespace hwprof::report
