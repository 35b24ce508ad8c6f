#include "analyze/run_ceilings.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

#include "analyze/number_format.hpp"
#include "common/stages.hpp"

namespace hwprof::analysis {

DrawnCeilings ceilings_of(const CalibrationRun& run, bool single_precision) {
  DrawnCeilings c;
  const char* precision = single_precision ? "sp" : "dp";
  const std::pair<const char*, const char*> levels[] = {{"l1", "#1b9e77"}, {"l2", "#7570b3"}, {"l3", "#e7298a"}, {"dram", "#d95f02"}};
  for (const auto& [level, color] : levels) {
    auto it = run.bandwidth.find(level);
    if (it == run.bandwidth.end()) continue;
    auto triad = it->second.kernels.find("triad");
    if (triad == it->second.kernels.end()) continue;
    std::string name = level;
    std::transform(name.begin(), name.end(), name.begin(), [](char ch) { return static_cast<char>(std::toupper(ch)); });
    c.slopes.push_back(
        {name + " " + short_number(triad->second.best) + " GB/s" + (it->second.plateau ? "" : " (no flat plateau)"), triad->second.best, color});
  }
  if (auto it = run.compute.find(std::string("fma_") + precision); it != run.compute.end()) {
    c.roofs.push_back({"FMA peak " + short_number(it->second.best) + " GFLOP/s", it->second.best, ""});
  }
  if (auto it = run.compute.find(std::string("gemm_") + precision); it != run.compute.end()) {
    c.roofs.push_back({"GEMM " + short_number(it->second.best) + " GFLOP/s", it->second.best, "8 4"});
  }
  return c;
}

}  // namespace hwprof::analysis
