// `hwprof compare A B --format json` (docs/cli.md, "Comparing runs").
#include <nlohmann/json.hpp>

#include "common/stages.hpp"
#include "report/compare.hpp"
#include "report/json_number.hpp"

namespace hwprof::report {
namespace {

nlohmann::ordered_json change_json(const LayerChange& c) {
  nlohmann::ordered_json j;
  j["name"] = c.name;
  j["op"] = c.op;
  j["median_a_ms"] = c.median_a_ms;
  j["median_b_ms"] = c.median_b_ms;
  j["change"] = c.change;
  j["samples_a"] = c.samples_a;
  j["samples_b"] = c.samples_b;
  j["p_value"] = json_number(c.p_value);
  j["p_adjusted"] = json_number(c.p_adjusted);
  j["verdict"] = std::string(verdict_name(c.verdict));
  j["efficiency_a"] = json_number(c.efficiency_a);
  j["efficiency_b"] = json_number(c.efficiency_b);
  j["bound_a"] = c.bound_a;
  j["bound_b"] = c.bound_b;
  if (!c.note.empty()) j["note"] = c.note;
  return j;
}

}  // namespace

std::string comparison_json(const ProfileComparison& c) {
  nlohmann::ordered_json j;
  j["a"] = c.a_label;
  j["b"] = c.b_label;
  j["alpha"] = c.alpha;
  j["test"] = "Mann-Whitney U, two-sided; layers Holm-adjusted";
  j["differences"] = c.differences;
  j["total"] = change_json(c.total);
  nlohmann::ordered_json layers = nlohmann::ordered_json::array();
  for (const LayerChange& l : c.layers) layers.push_back(change_json(l));
  j["layers"] = std::move(layers);
  j["only_in_a"] = c.only_in_a;
  j["only_in_b"] = c.only_in_b;
  return j.dump(2) + "\n";
}

}  // namespace hwprof::report
