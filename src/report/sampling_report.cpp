#include "report/sampling_report.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace hwprof::detail {
namespace {

std::string percent(double share) {
  return fmt::format("{:.0f}%", 100.0 * share);
}

// A C++ function without its parameter list ("ns::im2col(Geometry const&, float const*)" is
// "ns::im2col"; "(anonymous namespace)" inside the name is kept), at most 60 characters.
std::string short_function(const std::string& name) {
  std::string out = name;
  // GCC's clones ("f(int) [clone ._omp_fn.0]": an OpenMP region's body outlined, a constant
  // propagated) are their function's code: the suffix goes, an OpenMP body says so.
  std::string suffix;
  if (const auto clone = out.find(" [clone "); clone != std::string::npos) {
    if (out.find("_omp_fn", clone) != std::string::npos) suffix = " [omp]";
    out.resize(clone);
  }
  if (!out.empty() && out.back() == ')') {
    int depth = 0;
    for (std::size_t i = out.size(); i-- > 0;) {
      depth += out[i] == ')' ? 1 : out[i] == '(' ? -1 : 0;
      if (depth == 0) {
        if (i > 0) out.resize(i);
        break;
      }
    }
  }
  if (out.size() > 60) out = ".." + out.substr(out.size() - 58);
  return out + suffix;
}

std::string function_cell(const SampledFunction& f) {
  return fmt::format("{} {} ({}-{})", short_function(f.function), percent(f.share), percent(f.low), percent(f.high));
}

}  // namespace

std::string sampling_section(const Profile& p, std::size_t rows) {
  if (!p.sampling) return "";
  const SamplingProfile& s = *p.sampling;
  const bool windows = s.cost_from == "windows";  // a regions program's: rows are regions, sampled in windows of its run
  std::string out = fmt::format("\nWhere inside the {} the time went (sampled: {}, {}; {} sample{} {} {} of {} {})\n", windows ? "regions" : "layers",
                                s.spec, s.rate, s.samples, s.samples == 1 ? "" : "s", windows ? "in" : "on", s.sampled_passes,
                                s.sampled_passes + s.unsampled_passes, windows ? "time windows" : "measured passes");
  if (s.samples == 0) return out + "  no samples were taken\n";
  std::size_t width = 12;
  const std::size_t shown = std::min(rows == 0 ? s.layers.size() : rows, s.layers.size());
  for (std::size_t i = 0; i < shown; ++i) width = std::max(width, s.layers[i].name.size());
  out += fmt::format("{:<{}}  {:>8}  {}\n", windows ? "Region" : "Layer", width, "Samples",
                     windows ? "Functions: share of the region's samples (95% interval)" : "Functions: share of the layer's samples (95% interval)");
  for (std::size_t i = 0; i < shown; ++i) {
    const SampledLayer& l = s.layers[i];
    std::string cells;
    if (!l.enough) {
      cells = "too few samples to say";
    } else {
      for (std::size_t k = 0; k < l.top.size() && k < 3; ++k) cells += (k > 0 ? " · " : "") + function_cell(l.top[k]);
    }
    out += fmt::format("{:<{}}  {:>8}  {}\n", l.name, width, l.samples, cells);
  }
  if (shown < s.layers.size())
    out += fmt::format("... {} more rows with samples; the JSON and the flame graph have them all\n", s.layers.size() - shown);
  out +=
      "Shares are of each row's samples (pool workers' samples go to the layer their launching thread was in); fewer than 30 samples say "
      "nothing.\n";
  if (std::isfinite(s.overhead) && s.cost_from == "windows") {
    out += fmt::format(
        "Sampling cost: the regions' median calls in the {} sampled windows were {:+.1f}% of those in the {} unsampled ones (measured, same "
        "run; two halves of the unsampled windows differ by {}{}).\n",
        s.sampled_passes, 100.0 * s.overhead, s.unsampled_passes,
        std::isfinite(s.overhead_noise) ? fmt::format("{:.1f}%", 100.0 * s.overhead_noise) : std::string("an amount not known: too few calls"),
        std::isfinite(s.overhead_noise) && std::abs(s.overhead) <= s.overhead_noise ? ", so the cost is within the noise" : "");
  } else if (std::isfinite(s.overhead)) {
    out += fmt::format(
        "Sampling cost: the sampled passes' median was {:+.1f}% of the others' (measured, same run; the unsampled passes themselves "
        "spread ±{:.1f}%{}).\n",
        100.0 * s.overhead, 100.0 * s.overhead_noise,
        std::abs(s.overhead) <= s.overhead_noise ? ", so the cost is within the noise: more --iterations tell it better" : "");
  } else if (!s.overhead_reason.empty()) {
    out += "Sampling cost: not measured: " + s.overhead_reason + ".\n";
  }
  if (s.timeline_full > 0) {
    out += fmt::format("{} samples not attributed: the timeline was full after {} calls; raise HWPROF_TIMELINE_EVENTS.\n", s.timeline_full,
                       s.timeline_calls);
  }
  if (s.ambiguous > 0) out += fmt::format("{} samples on threads without a layer while several threads had one open: not attributed.\n", s.ambiguous);
  for (const std::string& w : s.warnings) out += "WARNING: " + w + "\n";
  return out;
}

nlohmann::ordered_json sampling_json(const SamplingProfile& s) {
  using json = nlohmann::ordered_json;
  json layers = json::array();
  for (const SampledLayer& l : s.layers) {
    json top = json::array();
    for (const SampledFunction& f : l.top) {
      top.push_back({{"function", f.function}, {"module", f.module}, {"samples", f.samples}, {"share", f.share}, {"low", f.low}, {"high", f.high}});
    }
    layers.push_back({{"name", l.name},
                      {"layer", l.layer},
                      {"samples", l.samples},
                      {"by_pool_workers", l.by_pool_workers},
                      {"enough", l.enough},
                      {"top", std::move(top)},
                      {"rest", l.rest}});
  }
  return {{"spec", s.spec},
          {"rate", s.rate},
          {"samples", s.samples},
          {"lost", s.lost},
          {"throttled", s.throttled},
          {"dropped", s.dropped},
          {"ambiguous", s.ambiguous},
          {"outside", s.outside},
          {"overhead", std::isfinite(s.overhead) ? json(s.overhead) : json(nullptr)},
          {"overhead_noise", std::isfinite(s.overhead_noise) ? json(s.overhead_noise) : json(nullptr)},
          {"sampled_passes", s.sampled_passes},
          {"unsampled_passes", s.unsampled_passes},
          {"cost_from", s.cost_from},
          {"overhead_reason", s.overhead_reason},
          {"timeline_full", s.timeline_full},
          {"timeline_calls", s.timeline_calls},
          {"warnings", s.warnings},
          {"layers", std::move(layers)}};
}

std::vector<SampledStack> sampled_stacks(const SamplingProfile& s) {
  std::vector<SampledStack> out;
  out.reserve(s.stacks.size());
  for (const SampledStackRow& r : s.stacks) out.push_back({r.frames, r.samples});
  return out;
}

}  // namespace hwprof::detail
