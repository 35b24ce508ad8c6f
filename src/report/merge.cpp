#include "report/merge.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/input_file.hpp"
#include "common/statistics.hpp"
#include "hwprof/statistics.hpp"
#include "report/json_number.hpp"
#include "report/profile_view.hpp"
#include "report/svg.hpp"

namespace hwprof::detail {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::size_t kMaxMergedBytes = std::size_t{1} << 30;
// Beyond these, the HTML keeps the spread (min, median, max, straggler) and leaves each rank's
// own figure to merged.json: a table 10 000 columns wide helps no one.
constexpr std::size_t kMaxRankColumns = 64;
constexpr std::size_t kMaxRankPoints = 256;

// What a rank spent in a layer or region: summed over its threads' rows where the profile has
// them (every call, the dropped samples included), else mean per call × calls.
struct RankSpent {
  double ms = 0;
  double calls = 0;
};
RankSpent rank_spent(const Profile& p, const LayerProfile& l) {
  RankSpent s;
  bool found = false;
  for (const RegionThreadRow& r : p.region_threads) {
    if (r.region != l.name) continue;
    s.ms += r.inclusive_ms;
    s.calls += static_cast<double>(r.calls);
    found = true;
  }
  if (found) return s;
  return {l.time_ms.mean * static_cast<double>(l.time_ms.n), static_cast<double>(l.time_ms.n)};
}

void add_profile(const fs::path& file, std::vector<RankProfile>& out, std::vector<std::string>& problems) {
  auto p = load_profile(file.string());
  if (!p) {
    problems.push_back(p.error().message);
    return;
  }
  out.push_back({file.string(), std::move(*p)});
}

std::string straggler_text(const MergedRanks& m, const MergedRegion& r) {
  return r.straggler >= 0 ? std::to_string(rank_number(m.ranks, static_cast<std::size_t>(r.straggler))) : "-";
}

// A rank's GFLOP/s in a region: its work over its time (absent without work or time).
std::optional<double> rank_gflops(const MergedRegion& r, std::size_t k) {
  if (!r.flops_per_call || *r.flops_per_call <= 0 || !std::isfinite(r.rank_ms[k]) || r.rank_ms[k] <= 0) return std::nullopt;
  if (k >= r.rank_calls.size() || !std::isfinite(r.rank_calls[k])) return std::nullopt;
  return *r.flops_per_call * r.rank_calls[k] / (r.rank_ms[k] * 1e-3) / 1e9;
}

json region_json(const MergedRanks& m, const MergedRegion& r) {
  json j;
  j["name"] = r.name;
  json per_rank = json::array();
  for (double v : r.rank_ms) per_rank.push_back(json_number(v));
  j["rank_ms"] = std::move(per_rank);
  json calls = json::array();
  for (double v : r.rank_calls) calls.push_back(json_number(v));
  j["rank_calls"] = std::move(calls);
  j["flops_per_call"] = json_number(r.flops_per_call);
  j["bytes_per_call"] = json_number(r.bytes_per_call);
  j["min_ms"] = r.min_ms;
  j["median_ms"] = r.median_ms;
  j["mean_ms"] = r.mean_ms;
  j["max_ms"] = r.max_ms;
  j["imbalance"] = r.imbalance;
  j["straggler_rank"] = r.straggler >= 0 ? json(rank_number(m.ranks, static_cast<std::size_t>(r.straggler))) : json(nullptr);
  j["missing_ranks"] = r.missing;
  return j;
}

// ---- reading a merge back ----

// Reads fields of one JSON object, collecting the first problem with its place.
class FieldReader {
 public:
  FieldReader(const json& object, std::string place, std::string& problem) : object_(object), place_(std::move(place)), problem_(problem) {}
  const json* get(const char* key, bool required = true) {
    if (!problem_.empty()) return nullptr;
    if (!object_.is_object()) return fail(place_ + ": expected an object");
    const auto it = object_.find(key);
    if (it == object_.end()) return required ? fail(place_ + "." + key + ": missing") : nullptr;
    return &*it;
  }
  std::string text(const char* key, bool required = true) {
    const json* v = get(key, required);
    if (v == nullptr) return {};
    if (!v->is_string()) return fail(place_ + "." + key + ": expected a string"), std::string();
    return v->get<std::string>();
  }
  double number(const char* key) {
    const json* v = get(key);
    if (v == nullptr) return 0;
    if (!v->is_number() || !std::isfinite(v->get<double>())) return fail(place_ + "." + key + ": expected a finite number"), 0.0;
    return v->get<double>();
  }
  std::optional<double> number_or_null(const char* key) {
    const json* v = get(key, false);
    if (v == nullptr || v->is_null()) return std::nullopt;
    if (!v->is_number() || !std::isfinite(v->get<double>())) return fail(place_ + "." + key + ": expected a number or null"), std::nullopt;
    return v->get<double>();
  }
  int integer(const char* key, int lo, int hi, bool null_is = false, int null_value = 0) {
    const json* v = get(key);
    if (v == nullptr) return 0;
    if (null_is && v->is_null()) return null_value;
    if (!v->is_number_integer() || v->get<long long>() < lo || v->get<long long>() > hi) {
      return fail(fmt::format("{}.{}: expected a whole number from {} to {}", place_, key, lo, hi)), 0;
    }
    return static_cast<int>(v->get<long long>());
  }
  std::vector<double> numbers(const char* key, std::size_t expected) {
    const json* v = get(key);
    std::vector<double> out;
    if (v == nullptr) return out;
    if (!v->is_array() || v->size() != expected) {
      return fail(fmt::format("{}.{}: expected an array of {} numbers (one per rank)", place_, key, expected)), out;
    }
    for (std::size_t i = 0; i < v->size(); ++i) {
      const json& e = (*v)[i];
      if (e.is_null()) {
        out.push_back(kNaN);
      } else if (e.is_number() && std::isfinite(e.get<double>()) && e.get<double>() >= 0 && e.get<double>() <= kMaxRankMs) {
        out.push_back(e.get<double>());
      } else {
        return fail(fmt::format("{}.{}[{}]: expected a number from 0 to {:g}, or null", place_, key, i, kMaxRankMs)), out;
      }
    }
    return out;
  }
  const json* fail(const std::string& message) {
    if (problem_.empty()) problem_ = message;
    return nullptr;
  }

 private:
  const json& object_;
  std::string place_;
  std::string& problem_;
};

MergedRegion region_from_json(const json& j, const std::string& place, const std::vector<MergedRankInfo>& ranks, std::string& problem) {
  FieldReader f(j, place, problem);
  MergedRegion r;
  r.name = f.text("name");
  r.rank_ms = f.numbers("rank_ms", ranks.size());
  r.rank_calls = f.numbers("rank_calls", ranks.size());
  r.flops_per_call = f.number_or_null("flops_per_call");
  r.bytes_per_call = f.number_or_null("bytes_per_call");
  if (!problem.empty()) return r;
  summarize_merged_region(r);
  const auto stated = f.number_or_null("imbalance");
  if (stated && std::fabs(*stated - r.imbalance) > 1e-6 + 1e-3 * std::fabs(r.imbalance)) {
    f.fail(fmt::format("{}.imbalance: {} disagrees with its rank_ms, which give {}", place, *stated, r.imbalance));
  }
  return r;
}

// ---- HTML ----

std::string esc(std::string_view s) {
  return xml_escape(s);
}

// A cell's background: white at 0, deep orange at the row's max.
std::string heat(double share) {
  const double t = std::clamp(share, 0.0, 1.0);
  const int g = static_cast<int>(std::lround(255 - 120 * t));
  const int b = static_cast<int>(std::lround(255 - 200 * t));
  return fmt::format("#ff{:02x}{:02x}", g, b);
}

std::string merged_roofline_svg(const MergedRanks& m) {
  double x_lo = 1e30, x_hi = 0, y_lo = 1e30, y_hi = 0;
  for (const MergedRegion& r : m.regions) {
    if (!r.flops_per_call || !r.bytes_per_call || *r.bytes_per_call <= 0) continue;
    for (std::size_t k = 0; k < r.rank_ms.size(); ++k) {
      const auto g = rank_gflops(r, k);
      if (!g || *g <= 0) continue;
      const double x = *r.flops_per_call / *r.bytes_per_call;
      x_lo = std::min(x_lo, x);
      x_hi = std::max(x_hi, x);
      y_lo = std::min(y_lo, *g);
      y_hi = std::max(y_hi, *g);
    }
  }
  if (x_hi <= 0) {
    return "<p class=\"note\">No roofline: no region has both FLOPs and bytes per call (HWPROF_SCOPE_WORK gives a region its work).</p>\n";
  }
  Ceilings ceilings;
  for (const MergedCeiling& c : m.ceilings.compute_gflops) ceilings.roofs.push_back({c.label, c.value, ceilings.roofs.empty() ? "" : "6 3"});
  static const char* const kSlopeColours[] = {"#1f77b4", "#2ca02c", "#9467bd", "#d62728", "#8c564b"};
  for (const MergedCeiling& c : m.ceilings.memory_gbps) {
    ceilings.slopes.push_back({c.label, c.value, kSlopeColours[std::min<std::size_t>(ceilings.slopes.size(), 4)]});
  }
  for (const ComputeRoof& r : ceilings.roofs) y_hi = std::max(y_hi, r.gflops);
  LogLogFrame frame;
  frame.left = 70;
  frame.top = 20;
  frame.width = 640;
  frame.height = 400;
  frame.x_min = std::pow(2.0, std::floor(std::log2(std::min(x_lo, 1.0 / 16))));
  frame.x_max = std::pow(2.0, std::ceil(std::log2(std::max(x_hi * 2, 64.0))));
  frame.y_min = std::pow(10.0, std::floor(std::log10(y_lo / 2)));
  frame.y_max = std::pow(10.0, std::ceil(std::log10(y_hi * 1.5)));
  std::string svg = svg_open(frame.left + frame.width + 230, frame.top + frame.height + 60, false);
  svg += svg_axes(frame, frame.bottom() + 40, "arithmetic intensity (FLOP/byte)", "GFLOP/s");
  if (!ceilings.roofs.empty()) svg += svg_ceilings(frame, ceilings, ceilings.roofs.front().gflops, nullptr);
  for (const MergedRegion& r : m.regions) {
    if (!r.flops_per_call || !r.bytes_per_call || *r.bytes_per_call <= 0) continue;
    std::vector<std::pair<double, std::size_t>> points;
    for (std::size_t k = 0; k < r.rank_ms.size(); ++k) {
      if (const auto g = rank_gflops(r, k); g && *g > 0) points.emplace_back(*g, k);
    }
    if (points.empty()) continue;
    std::sort(points.begin(), points.end());
    const double x = frame.px(*r.flops_per_call / *r.bytes_per_call);
    std::vector<double> sorted_gflops;
    for (const auto& point : points) sorted_gflops.push_back(point.first);
    const double median = detail::percentile_sorted(sorted_gflops.data(), sorted_gflops.size(), 50.0);
    svg += fmt::format("<g><title>{}: {} rank(s), {} to {} GFLOP/s (median {})</title>", esc(r.name), points.size(),
                       short_number(points.front().first), short_number(points.back().first), short_number(median));
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#444\" stroke-width=\"2\"/>", x,
                       frame.py(points.front().first), frame.py(points.back().first));
    for (const auto& [g, k] : points) {
      if (points.size() > kMaxRankPoints && static_cast<int>(k) != r.straggler) continue;
      const bool straggler = static_cast<int>(k) == r.straggler;
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"none\" stroke=\"{}\"><title>rank {}: {} GFLOP/s</title></circle>", x,
                         frame.py(g), straggler ? "#b00020" : "#444", rank_number(m.ranks, k), short_number(g));
    }
    svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4.5\" fill=\"#e6550d\"/>", x, frame.py(median));
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\">{}</text></g>\n", x + 7, frame.py(median) + 4, esc(r.name));
  }
  svg += "</svg>\n";
  return svg;
}

// ---- reading the ranks' profiles ----

// The name of a file type, for "a rank entry is a FIFO".
std::string type_name(fs::file_type t) {
  switch (t) {
    case fs::file_type::regular:
      return "regular file";
    case fs::file_type::directory:
      return "directory";
    case fs::file_type::symlink:
      return "symbolic link";
    case fs::file_type::block:
      return "block device";
    case fs::file_type::character:
      return "character device";
    case fs::file_type::fifo:
      return "FIFO";
    case fs::file_type::socket:
      return "socket";
    default:
      return "file of unknown type";
  }
}

// One rank-NNNNN entry of a run's folder. A folder without profile.json is a rank that wrote
// nothing (listed among the missing with that reason); an entry that is no folder, a folder
// that cannot be opened, or a profile.json that cannot be read is a problem with its reason,
// never a silent missing rank (read_input_file refuses directories, devices and silent FIFOs
// by name, and bounds every read).
void add_rank_entry(const fs::path& entry, RankProfiles& found, std::vector<std::string>& problems) {
  std::error_code ec;
  const fs::file_status st = fs::status(entry, ec);
  if (ec) {
    problems.push_back(fmt::format("{}: cannot be read ({})", entry.string(), ec.message()));
    return;
  }
  if (st.type() != fs::file_type::directory) {
    problems.push_back(fmt::format("{}: a rank entry should be a folder holding profile.json; this is a {}", entry.string(), type_name(st.type())));
    return;
  }
  const fs::path file = entry / "profile.json";
  const fs::file_status lst = fs::symlink_status(file, ec);
  if (ec && lst.type() != fs::file_type::not_found) {
    problems.push_back(fmt::format("{}: cannot be read ({})", file.string(), ec.message()));
    return;
  }
  if (lst.type() == fs::file_type::not_found) {
    found.empty_folders.push_back(entry.string());
    return;
  }
  add_profile(file, found.ranks, problems);
}

// One path given to `hwprof merge`: a profile, a rank's folder or a run's folder.
void add_path(const std::string& path, RankProfiles& found, std::vector<std::string>& problems) {
  std::error_code ec;
  const fs::path p(path);
  if (!fs::is_directory(p, ec)) {
    if (fs::symlink_status(p, ec).type() == fs::file_type::not_found) {
      problems.push_back(path + ": no such file or folder");
    } else {
      add_profile(p, found.ranks, problems);  // read_input_file names what it is when not a file
    }
    return;
  }
  if (fs::symlink_status(p / "profile.json", ec).type() != fs::file_type::not_found) {
    add_profile(p / "profile.json", found.ranks, problems);
    return;
  }
  std::vector<fs::path> entries;
  for (fs::directory_iterator it(p, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename().string().rfind("rank-", 0) == 0) entries.push_back(it->path());
  }
  if (ec) {
    problems.push_back(fmt::format("{}: cannot be listed ({})", path, ec.message()));
    return;
  }
  if (entries.empty()) {
    problems.push_back(path +
                       ": holds neither a profile.json nor rank-NNNNN/profile.json folders (HWPROF_OUTPUT under mpirun, srun or "
                       "torchrun writes those)");
  }
  std::sort(entries.begin(), entries.end());
  for (const fs::path& e : entries) add_rank_entry(e, found, problems);
}

// Every problem on a line of its own, at most kMaxListed of them.
std::string problem_list(const std::vector<std::string>& problems) {
  constexpr std::size_t kMaxListed = 10;
  std::string message = problems.size() == 1 ? problems.front() : fmt::format("{} rank profiles cannot be merged:", problems.size());
  if (problems.size() == 1) return message;
  for (std::size_t i = 0; i < problems.size() && i < kMaxListed; ++i) message += "\n  " + problems[i];
  if (problems.size() > kMaxListed) message += fmt::format("\n  ... and {} more", problems.size() - kMaxListed);
  return message;
}

// The ranks must be of one run: each rank once, one size, and either all ranked or none (an
// unranked profile is counted by its place, which would collide with a ranked one).
std::optional<std::string> rank_fields_problem(const std::vector<RankProfile>& ranks) {
  const RankProfile* ranked = nullptr;
  const RankProfile* unranked = nullptr;
  std::map<int, const RankProfile*> seen;
  for (const RankProfile& r : ranks) {
    const Profile& p = r.profile;
    if (p.rank < 0) {
      unranked = &r;
      continue;
    }
    if (ranked != nullptr && p.rank_count != ranked->profile.rank_count) {
      return fmt::format("{}: /rank/size says {} ranks, {} says {}: merge the folders of one run only", r.file, p.rank_count, ranked->file,
                         ranked->profile.rank_count);
    }
    ranked = &r;
    const auto [it, fresh] = seen.emplace(p.rank, &r);
    if (!fresh) return fmt::format("{} and {} are both rank {}: merge the folders of one run only", it->second->file, r.file, p.rank);
  }
  if (ranked != nullptr && unranked != nullptr) {
    return fmt::format("{}: /rank is null (not launched by mpirun, srun or torchrun) while {} is rank {} of {}: merge the profiles of one run only",
                       unranked->file, ranked->file, ranked->profile.rank, ranked->profile.rank_count);
  }
  return std::nullopt;
}

// A rank's time in a layer (or its total) that no run can take: refused, so that sums and
// means over the ranks stay finite (1e308 ms × 5 calls is not a time, and would print −inf%).
std::optional<std::string> time_problem(const RankProfile& r) {
  auto check = [&](const std::string& at, const std::string& name, double ms) -> std::optional<std::string> {
    if (std::isfinite(ms) && ms >= 0 && ms <= kMaxRankMs) return std::nullopt;
    return fmt::format("{}: {} ({}): {:.6g} ms in all is not a time a rank can spend (at most {:g} ms): a damaged profile", r.file, at, name, ms,
                       kMaxRankMs);
  };
  const Profile& p = r.profile;
  for (std::size_t i = 0; i < p.layers.size(); ++i) {
    if (auto problem = check(fmt::format("/layers/{}", i), display_name(p.layers[i]), rank_spent(p, p.layers[i]).ms)) return problem;
  }
  return check("/total", "the total", p.total.time_ms.mean * static_cast<double>(p.total.time_ms.n));
}

// "rank 3", "ranks 1-9999999, 10000001": the ranks below `size` not in `present` (sorted), as
// ranges, at most kMaxRanges of them; `count` gets how many ranks they hold.
std::string missing_ranges(const std::vector<int>& present, int size, long long& count) {
  constexpr std::size_t kMaxRanges = 20;
  std::vector<std::pair<int, int>> ranges;
  count = 0;
  int next = 0;
  auto gap = [&](int upto) {
    if (upto <= next) return;
    count += upto - next;
    ranges.emplace_back(next, upto - 1);
  };
  for (int r : present) {
    if (r >= size) break;
    gap(r);
    next = std::max(next, r + 1);
  }
  gap(size);
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < ranges.size() && i < kMaxRanges; ++i) {
    const auto [lo, hi] = ranges[i];
    parts.push_back(lo == hi ? std::to_string(lo) : fmt::format("{}-{}", lo, hi));
  }
  std::string text = fmt::format("{} {}", count == 1 ? "rank" : "ranks", fmt::join(parts, ", "));
  if (ranges.size() > kMaxRanges) text += fmt::format(" and {} more ranges", ranges.size() - kMaxRanges);
  return text;
}

// Which ranks the launcher said there were, and which of them are here: the missing ones as
// ranges (a size of 10^7 with one rank here is one line, not 10^7), with the folders that hold
// no profile.
void missing_ranks_warning(MergedRanks& m, const std::vector<std::string>& empty_folders) {
  int declared = 0;
  std::vector<int> present;
  for (const MergedRankInfo& r : m.ranks) {
    declared = std::max(declared, r.size);
    if (r.rank >= 0) present.push_back(r.rank);
  }
  std::sort(present.begin(), present.end());
  long long count = 0;
  const std::string ranges = missing_ranges(present, declared, count);
  std::string folders;
  if (!empty_folders.empty()) {
    const std::size_t shown = std::min<std::size_t>(empty_folders.size(), 5);
    folders = fmt::format(
        "; {} hold{} no profile.json: {}{}", empty_folders.size() == 1 ? "a rank folder" : std::to_string(empty_folders.size()) + " rank folders",
        empty_folders.size() == 1 ? "s" : "", fmt::join(empty_folders.begin(), empty_folders.begin() + static_cast<std::ptrdiff_t>(shown), ", "),
        empty_folders.size() > shown ? fmt::format(" and {} more", empty_folders.size() - shown) : "");
  }
  if (count > 0) {
    m.warnings.push_back(fmt::format("{} of {} ranks are here; missing: {}{}{} (did they crash before exit, or write elsewhere?)", m.ranks.size(),
                                     declared, ranges, count > 1 ? fmt::format(" ({} ranks)", count) : "", folders));
  } else if (!folders.empty()) {
    m.warnings.push_back(folders.substr(2));
  }
}

}  // namespace

Result<RankProfiles> load_rank_profiles(const std::vector<std::string>& paths) {
  RankProfiles found;
  std::vector<std::string> problems;
  for (const std::string& path : paths) add_path(path, found, problems);
  if (!problems.empty()) return Error{problem_list(problems)};
  if (found.ranks.empty()) return Error{"no profile to merge"};
  if (auto problem = rank_fields_problem(found.ranks)) return Error{*problem};
  for (const RankProfile& r : found.ranks) {
    if (auto problem = time_problem(r)) return Error{*problem};
  }
  return found;
}

void summarize_merged_region(MergedRegion& r) {
  std::vector<double> present;
  for (double v : r.rank_ms) {
    if (std::isfinite(v)) present.push_back(v);
  }
  r.missing = static_cast<int>(r.rank_ms.size() - present.size());
  r.straggler = -1;
  if (present.empty()) return;
  const Summary s = summarize(present);
  r.min_ms = s.min;
  r.median_ms = s.median;
  r.mean_ms = s.mean;
  r.max_ms = s.max;
  r.imbalance = s.max > 0 ? (s.max - s.mean) / s.max : 0.0;
  double best = -1;
  for (std::size_t k = 0; k < r.rank_ms.size(); ++k) {
    if (std::isfinite(r.rank_ms[k]) && r.rank_ms[k] > best) {
      best = r.rank_ms[k];
      r.straggler = static_cast<int>(k);
    }
  }
}

void sort_merged_regions(MergedRanks& m) {
  std::stable_sort(m.regions.begin(), m.regions.end(),
                   [](const MergedRegion& a, const MergedRegion& b) { return a.max_ms != b.max_ms ? a.max_ms > b.max_ms : a.name < b.name; });
}

MergedCeilings merged_ceilings(const CalibrationRun& run, const std::string& source) {
  MergedCeilings c;
  c.source = source;
  const Ceilings drawn = ceilings_of(run, true);
  for (const ComputeRoof& r : drawn.roofs) c.compute_gflops.push_back({r.label, r.gflops});
  for (const MemorySlope& s : drawn.slopes) c.memory_gbps.push_back({s.label, s.gbps});
  return c;
}

MergedRanks merge_ranks(std::vector<RankProfile> ranks, const std::vector<std::string>& empty_folders) {
  MergedRanks m;
  m.made_by = "hwprof merge";
  std::stable_sort(ranks.begin(), ranks.end(), [](const RankProfile& a, const RankProfile& b) { return a.profile.rank < b.profile.rank; });
  const std::size_t n = ranks.size();
  for (const RankProfile& r : ranks) {
    const Profile& p = r.profile;
    m.ranks.push_back({p.rank, p.rank_count, r.file, p.machine.host, p.machine.cpu.brand, p.model, p.threads});
  }
  missing_ranks_warning(m, empty_folders);
  for (const MergedRankInfo& r : m.ranks) {
    if (r.rank < 0) m.warnings.push_back(r.file + " says no rank (not launched by mpirun, srun or torchrun): counted by its place");
    if (r.model != m.ranks.front().model) {
      m.warnings.push_back(
          fmt::format("{} profiles '{}', {} profiles '{}': not one run", m.ranks.front().file, m.ranks.front().model, r.file, r.model));
    }
  }
  // Regions by name, in the order they first appear.
  std::map<std::string, std::size_t> index;
  for (std::size_t k = 0; k < n; ++k) {
    const Profile& p = ranks[k].profile;
    for (const LayerProfile& l : p.layers) {
      const std::string name = display_name(l);
      auto [it, fresh] = index.emplace(name, m.regions.size());
      if (fresh) {
        MergedRegion r;
        r.name = name;
        r.rank_ms.assign(n, kNaN);
        r.rank_calls.assign(n, kNaN);
        m.regions.push_back(std::move(r));
      }
      MergedRegion& r = m.regions[it->second];
      const RankSpent spent = rank_spent(p, l);
      r.rank_ms[k] = spent.ms;
      r.rank_calls[k] = spent.calls;
      const LayerNumbers numbers = layer_numbers(l);
      if (!r.flops_per_call && numbers.flops.value > 0) r.flops_per_call = numbers.flops.value;
      if (!r.bytes_per_call && numbers.bytes.value > 0) r.bytes_per_call = numbers.bytes.value;
    }
  }
  m.total.name = "total";
  m.total.rank_ms.resize(n);
  m.total.rank_calls.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    const LayerProfile& t = ranks[k].profile.total;
    m.total.rank_ms[k] = t.time_ms.mean * static_cast<double>(t.time_ms.n);
    m.total.rank_calls[k] = static_cast<double>(t.time_ms.n);
  }
  summarize_merged_region(m.total);
  for (MergedRegion& r : m.regions) summarize_merged_region(r);
  sort_merged_regions(m);
  for (std::size_t k = 0; k < n; ++k) {
    const ProfileMachine& machine = ranks[k].profile.machine;
    if (!machine.ceilings) continue;
    m.ceilings = merged_ceilings(*machine.ceilings, fmt::format("rank {}'s calibration ({})", rank_number(m.ranks, k),
                                                                machine.calibration_file.empty() ? "stored" : machine.calibration_file));
    break;
  }
  return m;
}

std::string merged_table(const MergedRanks& m, std::size_t top) {
  const std::size_t n = m.ranks.size();
  std::string out = fmt::format("{}: {} rank{} of '{}'\n", m.made_by, n, n == 1 ? "" : "s", n > 0 ? m.ranks.front().model : "");
  const MergedRegion& t = m.total;
  if (t.straggler >= 0) {
    out += fmt::format("Total per rank: min {:.4g} ms, median {:.4g} ms, max {:.4g} ms (rank {}): imbalance {:.1f}%\n", t.min_ms, t.median_ms,
                       t.max_ms, straggler_text(m, t), 100 * t.imbalance);
  }
  for (const std::string& w : m.warnings) out += "WARNING: " + w + "\n";
  out += "\nRanks\n";
  for (std::size_t k = 0; k < n; ++k) {
    const MergedRankInfo& r = m.ranks[k];
    out += fmt::format("  rank {:>5}  {:<20} {} ({} thread{}){}\n", rank_number(m.ranks, k), r.host.empty() ? "-" : r.host,
                       r.cpu.empty() ? "-" : r.cpu, r.threads, r.threads == 1 ? "" : "s", r.file.empty() ? "" : "  " + r.file);
  }
  std::size_t width = 6;
  const std::size_t shown = top == 0 ? m.regions.size() : std::min(top, m.regions.size());
  for (std::size_t i = 0; i < shown; ++i) width = std::max(width, m.regions[i].name.size());
  out += fmt::format("\n{:<{}}  {:>11}  {:>11}  {:>11}  {:>10}  {:>9}  {}\n", "Region", width, "min ms", "median ms", "max ms", "imbalance",
                     "straggler", "missing");
  for (std::size_t i = 0; i < shown; ++i) {
    const MergedRegion& r = m.regions[i];
    out += fmt::format("{:<{}}  {:>11.4g}  {:>11.4g}  {:>11.4g}  {:>9.1f}%  {:>9}  {}\n", r.name, width, r.min_ms, r.median_ms, r.max_ms,
                       100 * r.imbalance, straggler_text(m, r), r.missing > 0 ? fmt::format("{} rank{}", r.missing, r.missing == 1 ? "" : "s") : "");
  }
  if (shown < m.regions.size()) out += fmt::format("... {} more regions; --all shows every row\n", m.regions.size() - shown);
  out +=
      "\nPer rank, a region's time is all the time the rank spent in it (every call, every thread). Imbalance = (max - mean) / max "
      "across the ranks: the share of the slowest rank's time the average rank waits.\n";
  return out;
}

std::string merged_json(const MergedRanks& m) {
  json j;
  j["kind"] = kMergedKind;
  j["schema"] = kMergedSchema;
  j["made_by"] = m.made_by;
  j["model"] = m.ranks.empty() ? "" : m.ranks.front().model;
  json ranks = json::array();
  for (std::size_t k = 0; k < m.ranks.size(); ++k) {
    const MergedRankInfo& r = m.ranks[k];
    ranks.push_back({{"rank", rank_number(m.ranks, k)},
                     {"size", r.size},
                     {"file", r.file},
                     {"host", r.host},
                     {"cpu", r.cpu},
                     {"model", r.model},
                     {"threads", r.threads}});
  }
  j["ranks"] = std::move(ranks);
  j["warnings"] = m.warnings;
  j["total"] = region_json(m, m.total);
  json regions = json::array();
  for (const MergedRegion& r : m.regions) regions.push_back(region_json(m, r));
  j["regions"] = std::move(regions);
  json ceilings;
  ceilings["source"] = m.ceilings.source;
  for (const char* key : {"compute_gflops", "memory_gbps"}) {
    json list = json::array();
    for (const MergedCeiling& c : key[0] == 'c' ? m.ceilings.compute_gflops : m.ceilings.memory_gbps) {
      list.push_back({{"label", c.label}, {"value", c.value}});
    }
    ceilings[key] = std::move(list);
  }
  j["ceilings"] = std::move(ceilings);
  return j.dump(2) + "\n";
}

namespace {

bool is_merge(const json& j) {
  return j.is_object() && j.contains("kind") && j["kind"] == kMergedKind;
}

Result<MergedRanks> merged_from_parsed(const json& j, const std::string& source_name) {
  std::string problem;
  FieldReader top(j, source_name, problem);
  if (top.text("kind") != kMergedKind && problem.empty()) top.fail(source_name + ": not a merge of ranks (its kind is not \"hwprof-merge\")");
  const int schema = top.integer("schema", 1, 1000000);
  if (problem.empty() && schema > kMergedSchema) {
    top.fail(fmt::format("{}: schema {} is newer than this hwprof reads ({}): use a newer hwprof", source_name, schema, kMergedSchema));
  }
  MergedRanks m;
  m.made_by = top.text("made_by");
  const json* ranks = top.get("ranks");
  if (ranks != nullptr && (!ranks->is_array() || ranks->empty())) top.fail(source_name + ".ranks: expected a non-empty array");
  if (!problem.empty()) return Error{problem};
  for (std::size_t k = 0; k < ranks->size() && problem.empty(); ++k) {
    FieldReader f((*ranks)[k], fmt::format("{}.ranks[{}]", source_name, k), problem);
    MergedRankInfo r;
    r.rank = f.integer("rank", 0, 1 << 30);
    r.size = f.integer("size", 0, 1 << 30);
    r.file = f.text("file");
    r.host = f.text("host");
    r.cpu = f.text("cpu");
    r.model = f.text("model");
    r.threads = f.integer("threads", 0, 1 << 20);
    m.ranks.push_back(std::move(r));
  }
  if (const json* warnings = top.get("warnings"); warnings != nullptr) {
    if (!warnings->is_array()) top.fail(source_name + ".warnings: expected an array of strings");
    for (std::size_t i = 0; problem.empty() && i < warnings->size(); ++i) {
      if (!(*warnings)[i].is_string())
        top.fail(fmt::format("{}.warnings[{}]: expected a string", source_name, i));
      else
        m.warnings.push_back((*warnings)[i].get<std::string>());
    }
  }
  if (const json* total = top.get("total"); total != nullptr) m.total = region_from_json(*total, source_name + ".total", m.ranks, problem);
  if (const json* regions = top.get("regions"); regions != nullptr) {
    if (!regions->is_array()) top.fail(source_name + ".regions: expected an array");
    for (std::size_t i = 0; problem.empty() && i < regions->size(); ++i) {
      m.regions.push_back(region_from_json((*regions)[i], fmt::format("{}.regions[{}]", source_name, i), m.ranks, problem));
    }
  }
  if (const json* ceilings = top.get("ceilings", false); ceilings != nullptr && problem.empty()) {
    FieldReader c(*ceilings, source_name + ".ceilings", problem);
    m.ceilings.source = c.text("source");
    for (const char* key : {"compute_gflops", "memory_gbps"}) {
      const json* list = c.get(key);
      if (list == nullptr) break;
      if (!list->is_array()) c.fail(fmt::format("{}.ceilings.{}: expected an array", source_name, key));
      for (std::size_t i = 0; problem.empty() && i < list->size(); ++i) {
        FieldReader e((*list)[i], fmt::format("{}.ceilings.{}[{}]", source_name, key, i), problem);
        MergedCeiling ceiling{e.text("label"), e.number("value")};
        if (problem.empty() && ceiling.value <= 0) e.fail(fmt::format("{}.ceilings.{}[{}].value: expected a number > 0", source_name, key, i));
        (key[0] == 'c' ? m.ceilings.compute_gflops : m.ceilings.memory_gbps).push_back(std::move(ceiling));
      }
    }
  }
  if (!problem.empty()) return Error{problem};
  sort_merged_regions(m);
  return m;
}

}  // namespace

Result<MergedRanks> merged_from_json(std::string_view text, const std::string& source_name) {
  const json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) return Error{source_name + ": not valid JSON"};
  return merged_from_parsed(j, source_name);
}

std::optional<Result<MergedRanks>> merged_if_merge(std::string_view text, const std::string& source_name) {
  const json j = json::parse(text, nullptr, false);
  if (!is_merge(j)) return std::nullopt;
  return merged_from_parsed(j, source_name);
}

Result<MergedRanks> load_merged(const std::string& path) {
  auto text = read_input_file(path, "merged profile", kMaxMergedBytes);
  if (!text) return text.error();
  return merged_from_json(*text, path);
}

std::string merged_html(const MergedRanks& m) {
  const std::size_t n = m.ranks.size();
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>hwprof merge</title>\n<style>"
      "body{font:14px sans-serif;margin:24px;color:#222}table{border-collapse:collapse}td,th{padding:3px 8px;"
      "border-bottom:1px solid #ddd;text-align:right}td:first-child,th:first-child{text-align:left}"
      ".warn{color:#b00020}.note{color:#555}.straggler{font-weight:bold;outline:1px solid #b00020}"
      "</style></head><body>\n";
  html += fmt::format("<h1>{} rank{} of '{}'</h1>\n<p class=\"note\">Merged by {}.</p>\n", n, n == 1 ? "" : "s",
                      esc(n > 0 ? m.ranks.front().model : ""), esc(m.made_by));
  const MergedRegion& t = m.total;
  if (t.straggler >= 0) {
    html += fmt::format("<p><b>Total per rank</b>: min {:.4g} ms, median {:.4g} ms, max {:.4g} ms (rank {}): <b>imbalance {:.1f}%</b></p>\n",
                        t.min_ms, t.median_ms, t.max_ms, straggler_text(m, t), 100 * t.imbalance);
  }
  for (const std::string& w : m.warnings) html += "<p class=\"warn\">WARNING: " + esc(w) + "</p>\n";
  html += "<h2>Ranks</h2>\n<table><tr><th>Rank</th><th>Host</th><th>CPU</th><th>Threads</th><th>Total ms</th><th>of the slowest</th></tr>\n";
  for (std::size_t k = 0; k < n; ++k) {
    const MergedRankInfo& r = m.ranks[k];
    const double share = t.max_ms > 0 && std::isfinite(t.rank_ms[k]) ? t.rank_ms[k] / t.max_ms : 0;
    html += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><svg width=\"120\" height=\"10\"><rect width=\"{:.0f}\" "
        "height=\"10\" fill=\"#e6550d\"/></svg> {:.0f}%</td></tr>\n",
        rank_number(m.ranks, k), esc(r.host), esc(r.cpu), r.threads, std::isfinite(t.rank_ms[k]) ? fmt::format("{:.4g}", t.rank_ms[k]) : "&ndash;",
        120 * share, 100 * share);
  }
  html += "</table>\n";
  // The per-rank view: every region's time on every rank, shaded by its share of the row's max.
  const std::size_t columns = n <= kMaxRankColumns ? n : 0;
  html +=
      "<h2>Per rank</h2>\n<p class=\"note\">Each cell: the time that rank spent in the region (ms), shaded by its share of the slowest "
      "rank's; the straggler is outlined.";
  if (columns == 0) html += fmt::format(" With {} ranks, only the spread is shown here; the merge's JSON has every rank's time.", n);
  html += "</p>\n<table><tr><th>Region</th><th>imbalance</th><th>min ms</th><th>median ms</th><th>max ms</th><th>straggler</th>";
  for (std::size_t k = 0; k < columns; ++k) html += fmt::format("<th>rank {}</th>", rank_number(m.ranks, k));
  html += "</tr>\n";
  for (const MergedRegion* r : [&] {
         std::vector<const MergedRegion*> rows{&m.total};
         for (const MergedRegion& x : m.regions) rows.push_back(&x);
         return rows;
       }()) {
    html += fmt::format("<tr><td>{}</td><td>{:.1f}%</td><td>{:.4g}</td><td>{:.4g}</td><td>{:.4g}</td><td>{}</td>", esc(r->name), 100 * r->imbalance,
                        r->min_ms, r->median_ms, r->max_ms, straggler_text(m, *r));
    for (std::size_t k = 0; k < columns; ++k) {
      const double v = r->rank_ms[k];
      if (!std::isfinite(v)) {
        html += "<td>&ndash;</td>";
        continue;
      }
      html += fmt::format("<td style=\"background:{}\"{}>{:.4g}</td>", heat(r->max_ms > 0 ? v / r->max_ms : 0),
                          static_cast<int>(k) == r->straggler && n > 1 ? " class=\"straggler\"" : "", v);
    }
    html += "</tr>\n";
  }
  html +=
      "</table>\n<h2>Roofline: the spread across the ranks</h2>\n<p class=\"note\">Per region: each rank's GFLOP/s (its work over its "
      "time; hollow, the straggler red), the median filled, the line from the slowest rank to the fastest.";
  if (!m.ceilings.source.empty()) html += " Ceilings: " + esc(m.ceilings.source) + ".";
  html += "</p>\n" + merged_roofline_svg(m);
  html +=
      "<p class=\"note\">Per rank, a region's time is all the time the rank spent in it (every call, every thread). Imbalance = "
      "(max &minus; mean) / max across the ranks: the share of the slowest rank's time the average rank waits.</p>\n</body></html>\n";
  return html;
}

}  // namespace hwprof::detail
