#include "report/merge.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/launch_rank.hpp"
#include "hwprof/statistics.hpp"
#include "report/json_number.hpp"
#include "report/profile_view.hpp"

namespace hwprof::detail {
namespace {

namespace fs = std::filesystem;

// The whole time a rank spent in a layer or region: summed over its threads' rows where the
// profile has them (every call, the dropped samples included), else mean per call × calls.
double rank_time_ms(const Profile& p, const LayerProfile& l) {
  double threads_ms = 0;
  bool found = false;
  for (const RegionThreadRow& r : p.region_threads) {
    if (r.region != l.name) continue;
    threads_ms += r.inclusive_ms;
    found = true;
  }
  if (found) return threads_ms;
  return l.time_ms.mean * static_cast<double>(l.time_ms.n);
}

void summarize_region(MergedRegion& r) {
  std::vector<double> present;
  for (double v : r.rank_ms) {
    if (std::isfinite(v)) present.push_back(v);
  }
  r.missing = static_cast<int>(r.rank_ms.size() - present.size());
  if (present.empty()) return;
  const Summary s = summarize(present);
  r.min_ms = s.min;
  r.median_ms = s.median;
  r.mean_ms = s.mean;
  r.max_ms = s.max;
  r.imbalance = s.max > 0 ? (s.max - s.mean) / s.max : 0.0;
}

int rank_of(const RankProfile& r, std::size_t fallback) { return r.profile.rank >= 0 ? r.profile.rank : static_cast<int>(fallback); }

// The rank number of a merged row's straggler (its index into the ranks when a profile says no rank).
int straggler_rank(const std::vector<RankProfile>& ranks, const MergedRegion& r) {
  const auto k = static_cast<std::size_t>(r.straggler);
  return rank_of(ranks[k], k);
}

void add_profile(const fs::path& file, std::vector<RankProfile>& out, std::vector<std::string>& problems) {
  auto p = load_profile(file.string());
  if (!p) {
    problems.push_back(p.error().message);
    return;
  }
  out.push_back({file.string(), std::move(*p)});
}

nlohmann::ordered_json region_json(const MergedRegion& r, const std::vector<RankProfile>& ranks) {
  nlohmann::ordered_json j;
  j["name"] = r.name;
  nlohmann::ordered_json per_rank = nlohmann::ordered_json::array();
  for (double v : r.rank_ms) per_rank.push_back(json_number(v));
  j["rank_ms"] = std::move(per_rank);
  j["min_ms"] = r.min_ms;
  j["median_ms"] = r.median_ms;
  j["mean_ms"] = r.mean_ms;
  j["max_ms"] = r.max_ms;
  j["imbalance"] = r.imbalance;
  j["straggler_rank"] = r.straggler >= 0 ? nlohmann::ordered_json(straggler_rank(ranks, r)) : nlohmann::ordered_json(nullptr);
  j["missing_ranks"] = r.missing;
  return j;
}

}  // namespace

Result<std::vector<RankProfile>> load_rank_profiles(const std::vector<std::string>& paths) {
  std::vector<RankProfile> out;
  std::vector<std::string> problems;
  for (const std::string& path : paths) {
    std::error_code ec;
    const fs::path p(path);
    if (fs::is_regular_file(p, ec)) {
      add_profile(p, out, problems);
      continue;
    }
    if (!fs::is_directory(p, ec)) {
      problems.push_back(path + ": no such file or folder");
      continue;
    }
    if (fs::is_regular_file(p / "profile.json", ec)) {
      add_profile(p / "profile.json", out, problems);
      continue;
    }
    std::vector<fs::path> folders;
    for (const auto& entry : fs::directory_iterator(p, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("rank-", 0) == 0 && fs::is_regular_file(entry.path() / "profile.json", ec)) folders.push_back(entry.path());
    }
    if (folders.empty()) {
      problems.push_back(path + ": holds neither a profile.json nor rank-NNNNN/profile.json folders (HWPROF_OUTPUT under mpirun, "
                                "srun or torchrun writes those)");
    }
    std::sort(folders.begin(), folders.end());
    for (const fs::path& f : folders) add_profile(f / "profile.json", out, problems);
  }
  if (!problems.empty()) {
    std::string message = problems.front();
    if (problems.size() > 1) message += fmt::format(" (and {} more problem{})", problems.size() - 1, problems.size() > 2 ? "s" : "");
    return Error{message};
  }
  if (out.empty()) return Error{"no profile to merge"};
  std::map<int, std::string> seen;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const int rank = out[i].profile.rank;
    if (rank < 0) continue;
    const auto [it, fresh] = seen.emplace(rank, out[i].file);
    if (!fresh) return Error{fmt::format("{} and {} are both rank {}: merge the folders of one run only", it->second, out[i].file, rank)};
  }
  return out;
}

MergedRanks merge_ranks(std::vector<RankProfile> ranks) {
  MergedRanks m;
  std::stable_sort(ranks.begin(), ranks.end(), [](const RankProfile& a, const RankProfile& b) { return a.profile.rank < b.profile.rank; });
  m.ranks = std::move(ranks);
  const std::size_t n = m.ranks.size();
  // Which ranks the launcher said there were, and which of them are here.
  int declared = 0;
  for (const RankProfile& r : m.ranks) declared = std::max(declared, r.profile.rank_count);
  if (declared > 0 && static_cast<int>(n) < declared) {
    std::vector<std::string> absent;
    for (int k = 0; k < declared; ++k) {
      if (std::none_of(m.ranks.begin(), m.ranks.end(), [&](const RankProfile& r) { return r.profile.rank == k; })) {
        absent.push_back(std::to_string(k));
      }
    }
    m.warnings.push_back(fmt::format("{} of {} ranks are here; missing: rank {} (did they crash before exit, or write elsewhere?)", n,
                                     declared, fmt::join(absent, ", ")));
  }
  for (const RankProfile& r : m.ranks) {
    if (r.profile.rank < 0) m.warnings.push_back(r.file + " says no rank (not launched by mpirun, srun or torchrun): counted by its place");
    if (r.profile.model != m.ranks.front().profile.model) {
      m.warnings.push_back(fmt::format("{} profiles '{}', {} profiles '{}': not one run", m.ranks.front().file, m.ranks.front().profile.model,
                                       r.file, r.profile.model));
    }
  }
  // Regions by name, in the order they first appear.
  std::map<std::string, std::size_t> index;
  for (std::size_t k = 0; k < n; ++k) {
    const Profile& p = m.ranks[k].profile;
    for (const LayerProfile& l : p.layers) {
      const std::string name = display_name(l);
      auto [it, fresh] = index.emplace(name, m.regions.size());
      if (fresh) {
        MergedRegion r;
        r.name = name;
        r.rank_ms.assign(n, std::numeric_limits<double>::quiet_NaN());
        m.regions.push_back(std::move(r));
      }
      m.regions[it->second].rank_ms[k] = rank_time_ms(p, l);
    }
  }
  m.total.name = "total";
  m.total.rank_ms.resize(n);
  for (std::size_t k = 0; k < n; ++k) m.total.rank_ms[k] = m.ranks[k].profile.total.time_ms.mean * static_cast<double>(m.ranks[k].profile.total.time_ms.n);
  std::vector<MergedRegion*> all{&m.total};
  for (MergedRegion& x : m.regions) all.push_back(&x);
  for (MergedRegion* r : all) {
    summarize_region(*r);
    double best = -1;
    for (std::size_t k = 0; k < n; ++k) {
      if (std::isfinite(r->rank_ms[k]) && r->rank_ms[k] > best) {
        best = r->rank_ms[k];
        r->straggler = static_cast<int>(k);
      }
    }
  }
  std::stable_sort(m.regions.begin(), m.regions.end(), [](const MergedRegion& a, const MergedRegion& b) { return a.max_ms > b.max_ms; });
  return m;
}

std::string merged_table(const MergedRanks& m, std::size_t top) {
  const std::size_t n = m.ranks.size();
  std::string out = fmt::format("hwprof merge: {} rank{} of '{}'\n", n, n == 1 ? "" : "s", n > 0 ? m.ranks.front().profile.model : "");
  const MergedRegion& t = m.total;
  if (t.straggler >= 0) {
    out += fmt::format("Total per rank: min {:.4g} ms, median {:.4g} ms, max {:.4g} ms (rank {}): imbalance {:.1f}%\n", t.min_ms, t.median_ms,
                       t.max_ms, straggler_rank(m.ranks, t),
                       100 * t.imbalance);
  }
  for (const std::string& w : m.warnings) out += "WARNING: " + w + "\n";
  out += "\nRanks\n";
  for (std::size_t k = 0; k < n; ++k) {
    const Profile& p = m.ranks[k].profile;
    out += fmt::format("  rank {:>5}  {:<20} {} ({} threads)  {}\n", rank_of(m.ranks[k], k), p.machine.host.empty() ? "-" : p.machine.host,
                       p.machine.cpu.brand.empty() ? "-" : p.machine.cpu.brand, p.threads, m.ranks[k].file);
  }
  std::size_t width = 6;
  const std::size_t shown = top == 0 ? m.regions.size() : std::min(top, m.regions.size());
  for (std::size_t i = 0; i < shown; ++i) width = std::max(width, m.regions[i].name.size());
  out += fmt::format("\n{:<{}}  {:>11}  {:>11}  {:>11}  {:>10}  {:>9}  {}\n", "Region", width, "min ms", "median ms", "max ms", "imbalance",
                     "straggler", "missing");
  for (std::size_t i = 0; i < shown; ++i) {
    const MergedRegion& r = m.regions[i];
    out += fmt::format("{:<{}}  {:>11.4g}  {:>11.4g}  {:>11.4g}  {:>9.1f}%  {:>9}  {}\n", r.name, width, r.min_ms, r.median_ms, r.max_ms,
                       100 * r.imbalance,
                       r.straggler >= 0 ? std::to_string(straggler_rank(m.ranks, r)) : "-",
                       r.missing > 0 ? fmt::format("{} rank{}", r.missing, r.missing == 1 ? "" : "s") : "");
  }
  if (shown < m.regions.size()) out += fmt::format("... {} more regions; --all shows every row\n", m.regions.size() - shown);
  out += "\nPer rank, a region's time is all the time the rank spent in it (every call, every thread). Imbalance = (max - mean) / max "
         "across the ranks: the share of the slowest rank's time the average rank waits.\n";
  return out;
}

std::string merged_json(const MergedRanks& m) {
  nlohmann::ordered_json j;
  nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
  for (std::size_t k = 0; k < m.ranks.size(); ++k) {
    const Profile& p = m.ranks[k].profile;
    ranks.push_back({{"rank", rank_of(m.ranks[k], k)},
                     {"size", p.rank_count},
                     {"file", m.ranks[k].file},
                     {"host", p.machine.host},
                     {"cpu", p.machine.cpu.brand},
                     {"threads", p.threads}});
  }
  j["model"] = m.ranks.empty() ? "" : m.ranks.front().profile.model;
  j["ranks"] = std::move(ranks);
  j["warnings"] = m.warnings;
  j["total"] = region_json(m.total, m.ranks);
  nlohmann::ordered_json regions = nlohmann::ordered_json::array();
  for (const MergedRegion& r : m.regions) regions.push_back(region_json(r, m.ranks));
  j["regions"] = std::move(regions);
  return j.dump(2) + "\n";
}

}  // namespace hwprof::detail
