#include "report/sampling_report.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include "common/stages.hpp"

namespace hwprof::report {
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

std::string function_cell(const SampledFunction& f, bool interval) {
  if (!interval) return fmt::format("{} {}", short_function(f.function), percent(f.share));
  return fmt::format("{} {} ({}-{})", short_function(f.function), percent(f.share), percent(f.low), percent(f.high));
}

std::string part_cell(const SampledPart& p) {
  return fmt::format("{} {} ({}-{})", p.part, percent(p.share), percent(p.low), percent(p.high));
}

// A row's parts of the code (at most five, most samples first), then its leading functions.
std::string sampled_row_cells(const SampledLayer& l, std::size_t indent) {
  if (!l.enough) return "too few samples to say";
  std::string cells;
  for (std::size_t k = 0; k < l.parts.size() && k < 5; ++k) cells += (k > 0 ? " · " : "") + part_cell(l.parts[k]);
  // A profile written before parts were kept: its functions with their intervals.
  const bool parts = !cells.empty();
  std::string functions;
  for (std::size_t k = 0; k < l.top.size() && k < 3; ++k) functions += (k > 0 ? " · " : "") + function_cell(l.top[k], !parts);
  if (!parts) return functions;
  return cells + "\n" + std::string(indent, ' ') + "functions: " + functions;
}

// Compact lines, one string each, so that thousands of them stay one line each in the pretty
// document (docs/profile.md, "`sampling`"): a stack is "FRAME;FRAME;... SAMPLES", as the folded
// format writes names; an instant is "TIME_US LANE ROW FRAME".
nlohmann::ordered_json stacks_json(const SamplingProfile& s) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const SampledStackRow& r : s.stacks) out.push_back(fmt::format("{} {}", fmt::join(r.frames, ";"), r.samples));
  return out;
}
nlohmann::ordered_json instants_json(const SamplingProfile& s) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const SampleInstant& i : s.instants) out.push_back(fmt::format("{:.3f} {} {} {}", i.time_us, i.thread, i.row, i.frame));
  return out;
}

}  // namespace

std::string sampling_section(const Profile& p, std::size_t rows) {
  if (!p.sampling) return "";
  const SamplingProfile& s = *p.sampling;
  // Rows are layers in a profile's passes; regions in a regions program (sampled in windows of
  // its run) and under hwprof record (one run sampled throughout: no passes to count).
  const bool windows = s.cost_from == "windows";
  const int passes = s.sampled_passes + s.unsampled_passes;
  const bool layers = !windows && passes > 0;
  const char* noun = layers ? "layer" : "region";
  std::string out = fmt::format("\nWhere inside the {}s the time went (sampled: {}, {}; {} sample{}{})\n", noun, s.spec, s.rate, s.samples,
                                s.samples == 1 ? "" : "s",
                                windows  ? fmt::format(" in {} of {} time windows", s.sampled_passes, passes)
                                : layers ? fmt::format(" on {} of {} measured passes", s.sampled_passes, passes)
                                         : std::string());
  if (s.samples == 0) return out + "  no samples were taken\n";
  std::size_t width = 12;
  const std::size_t shown = std::min(rows == 0 ? s.layers.size() : rows, s.layers.size());
  for (std::size_t i = 0; i < shown; ++i) width = std::max(width, s.layers[i].name.size());
  const bool parts = std::any_of(s.layers.begin(), s.layers.end(), [](const SampledLayer& l) { return !l.parts.empty(); });
  out += fmt::format("{:<{}}  {:>8}  {}: share of the {}'s samples (95% interval)\n", layers ? "Layer" : "Region", width, "Samples",
                     parts ? "Parts of the code" : "Functions", noun);
  for (std::size_t i = 0; i < shown; ++i) {
    const SampledLayer& l = s.layers[i];
    out += fmt::format("{:<{}}  {:>8}  {}\n", l.name, width, l.samples, sampled_row_cells(l, width + 12));
  }
  if (shown < s.layers.size())
    out += fmt::format("... {} more rows with samples; the JSON and the flame graph have them all\n", s.layers.size() - shown);
  out += fmt::format(
      "Shares are of each row's samples (pool workers' samples go to the {} their launching thread was in); fewer than 30 samples say "
      "nothing.\n",
      noun);
  if (parts) out += "Parts: each sample's function sorted by kind (GEMM kernel, packing, im2col, ...; docs/sampling.md, \"Parts of a layer\").\n";
  if (std::isfinite(s.overhead) && windows) {
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
  if (s.ambiguous > 0)
    out += fmt::format("{} samples on threads without a {} while several threads had one open: not attributed.\n", s.ambiguous, noun);
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
    json parts = json::array();
    for (const SampledPart& p : l.parts)
      parts.push_back({{"part", p.part}, {"samples", p.samples}, {"share", p.share}, {"low", p.low}, {"high", p.high}});
    layers.push_back({{"name", l.name},
                      {"layer", l.layer},
                      {"samples", l.samples},
                      {"by_pool_workers", l.by_pool_workers},
                      {"enough", l.enough},
                      {"top", std::move(top)},
                      {"rest", l.rest},
                      {"parts", std::move(parts)}});
    if (l.outside) layers.back()["outside"] = true;  // only there: older readers see the rows they knew
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
          {"layers", std::move(layers)},
          {"frame_names", s.frame_names},
          {"frame_modules", s.frame_modules},
          {"stacks", stacks_json(s)},
          {"instants", instants_json(s)},
          {"instants_left_out", s.instants_left_out}};
}

std::vector<SampledStack> sampled_stacks(const SamplingProfile& s) {
  std::vector<SampledStack> out;
  out.reserve(s.stacks.size());
  for (const SampledStackRow& r : s.stacks) out.push_back({r.frames, r.samples});
  return out;
}

}  // namespace hwprof::report
