#include "placement/window_overhead.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "common/stages.hpp"
#include "hwprof/statistics.hpp"

namespace hwprof::placement {
namespace {

// A region's calls inside the windows: sampled, and unsampled split by the parity of their
// window's place among the unsampled ones (the two halves measure the same thing: their
// difference is what the comparison cannot tell from noise).
struct WindowedCalls {
  std::vector<double> sampled;
  std::vector<double> unsampled[2];
  double time_ns = 0.0;
};

double windowed_median(const std::vector<double>& v) {
  return summarize(v).median;
}

}  // namespace

WindowOverhead window_overhead(std::span<const RegionSpan> spans, std::span<const SampleWindow> windows) {
  WindowOverhead out;
  std::vector<int> unsampled_place(windows.size(), 0);
  for (std::size_t w = 0; w < windows.size(); ++w) {
    if (windows[w].sampled) {
      ++out.sampled_windows;
    } else {
      unsampled_place[w] = out.unsampled_windows++;
    }
  }
  std::map<int, WindowedCalls> calls;
  for (const RegionSpan& s : spans) {
    if (s.end_ns < s.start_ns) continue;
    const auto after =
        std::upper_bound(windows.begin(), windows.end(), s.start_ns, [](std::uint64_t t, const SampleWindow& w) { return t < w.start_ns; });
    if (after == windows.begin()) continue;
    const SampleWindow& w = *(after - 1);
    if (s.end_ns > w.end_ns) continue;  // across a window's edge: part sampled, part not
    WindowedCalls& c = calls[s.region];
    const auto ns = static_cast<double>(s.end_ns - s.start_ns);
    c.time_ns += ns;
    if (w.sampled) {
      c.sampled.push_back(ns);
    } else {
      c.unsampled[unsampled_place[static_cast<std::size_t>(after - 1 - windows.begin())] % 2].push_back(ns);
    }
  }
  double weight = 0.0, sum = 0.0, noise_weight = 0.0, noise_sum = 0.0;
  for (auto& [region, c] : calls) {
    std::vector<double> unsampled = c.unsampled[0];
    unsampled.insert(unsampled.end(), c.unsampled[1].begin(), c.unsampled[1].end());
    if (c.sampled.size() < kWindowCallsToCompare || unsampled.size() < kWindowCallsToCompare) continue;
    const double base = windowed_median(unsampled);
    if (!(base > 0.0)) continue;
    ++out.regions_compared;
    weight += c.time_ns;
    sum += c.time_ns * (windowed_median(c.sampled) / base - 1.0);
    if (c.unsampled[0].size() >= kWindowCallsToCompare && c.unsampled[1].size() >= kWindowCallsToCompare) {
      const double odd = windowed_median(c.unsampled[1]);
      if (odd > 0.0) {
        noise_weight += c.time_ns;
        noise_sum += c.time_ns * std::abs(windowed_median(c.unsampled[0]) / odd - 1.0);
      }
    }
  }
  out.overhead = weight > 0.0 ? sum / weight : std::nan("");
  out.noise = noise_weight > 0.0 ? noise_sum / noise_weight : std::nan("");
  // A cost whose noise is unknown (one unsampled window, or too few calls in each half) could be
  // the windows' own spread: not printed as measured.
  if (weight > 0.0 && !(noise_weight > 0.0)) {
    out.overhead = std::nan("");
    out.reason = "how much the calls vary from one unsampled window to the next is not known (no region had " +
                 std::to_string(kWindowCallsToCompare) + " calls in each half of the " + std::to_string(out.unsampled_windows) +
                 " unsampled windows), so a cost could not be told from noise; a run of a few seconds measures it";
    return out;
  }
  if (weight <= 0.0) {
    out.reason = windows.empty() ? "no sampling windows were kept (the warnings say why)"
                 : out.sampled_windows == 0 || out.unsampled_windows == 0
                     ? "the run was shorter than two sampling windows, so nothing ran unsampled to compare with"
                     : "no region had " + std::to_string(kWindowCallsToCompare) +
                           " calls wholly inside sampled windows and as many inside unsampled ones (calls longer than a window cannot be "
                           "compared this way)";
  }
  return out;
}

}  // namespace hwprof::placement
