// A merge's JSON (docs/merge.md): written by `hwprof merge --format json` and by hwprof::mpi
// (merged.json), and read back to render it again. The reader names the file, line and column
// and the JSON pointer of the first problem (common/json_reader.hpp).
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analyze/merge.hpp"
#include "common/input_file.hpp"
#include "common/json_reader.hpp"
#include "common/stages.hpp"
#include "common/text_position.hpp"
#include "report/json_number.hpp"
#include "report/merge.hpp"

namespace hwprof::report {
namespace {

using json = nlohmann::ordered_json;
using Reader = BasicJsonReader<json>;
constexpr std::size_t kMaxMergedBytes = std::size_t{1} << 30;

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
  if (!r.impossible_reason.empty()) j["impossible_reason"] = r.impossible_reason;
  return j;
}

// ---- reading a merge back ----

std::string at(const std::string& pointer, const char* key) {
  return pointer + "/" + json_pointer_token(key);
}

int whole_number(const Reader& in, const json& object, const std::string& pointer, const char* key, int lo, int hi) {
  const json& v = in.member(object, pointer, key);
  if (!v.is_number_integer() || v.get<long long>() < lo || v.get<long long>() > hi) {
    in.fail(at(pointer, key), fmt::format("expected a whole number from {} to {}, got {}", lo, hi, v.dump()));
  }
  return static_cast<int>(v.get<long long>());
}

// Absent or null: none.
std::optional<double> number_or_null(const Reader& in, const json& object, const std::string& pointer, const char* key) {
  if (!object.contains(key) || object[key].is_null()) return std::nullopt;
  const json& v = object[key];
  if (!v.is_number() || !std::isfinite(v.get<double>())) in.fail(at(pointer, key), "expected a number or null, got " + v.dump());
  return v.get<double>();
}

// One number per rank, null where the rank lacks the region.
std::vector<double> rank_numbers(const Reader& in, const json& object, const std::string& pointer, const char* key, std::size_t ranks) {
  const json& v = in.member(object, pointer, key);
  if (!v.is_array() || v.size() != ranks) in.fail(at(pointer, key), fmt::format("expected an array of {} numbers (one per rank)", ranks));
  std::vector<double> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const json& e = v[i];
    if (e.is_null()) {
      out.push_back(std::nan(""));
    } else if (e.is_number() && std::isfinite(e.get<double>()) && e.get<double>() >= 0 && e.get<double>() <= kMaxRankMs) {
      out.push_back(e.get<double>());
    } else {
      in.fail(at(pointer, key) + "/" + std::to_string(i), fmt::format("expected a number from 0 to {:g}, or null, got {}", kMaxRankMs, e.dump()));
    }
  }
  return out;
}

MergedRegion region_from_json(const Reader& in, const json& j, const std::string& pointer, std::size_t ranks) {
  MergedRegion r;
  r.name = in.string(j, pointer, "name");
  r.rank_ms = rank_numbers(in, j, pointer, "rank_ms", ranks);
  r.rank_calls = rank_numbers(in, j, pointer, "rank_calls", ranks);
  r.flops_per_call = number_or_null(in, j, pointer, "flops_per_call");
  r.bytes_per_call = number_or_null(in, j, pointer, "bytes_per_call");
  if (j.contains("impossible_reason")) r.impossible_reason = in.string(j, pointer, "impossible_reason");
  summarize_merged_region(r);
  const auto stated = number_or_null(in, j, pointer, "imbalance");
  if (stated && std::fabs(*stated - r.imbalance) > 1e-6 + 1e-3 * std::fabs(r.imbalance)) {
    in.fail(at(pointer, "imbalance"), fmt::format("{} disagrees with its rank_ms, which give {}", *stated, r.imbalance));
  }
  return r;
}

const json& array_member(const Reader& in, const json& object, const std::string& pointer, const char* key) {
  const json& v = in.member(object, pointer, key);
  if (!v.is_array()) in.fail(at(pointer, key), std::string("expected an array, got ") + v.type_name());
  return v;
}

std::vector<MergedRankInfo> ranks_from_json(const Reader& in, const json& root) {
  const json& ranks = array_member(in, root, "", "ranks");
  if (ranks.empty()) in.fail("/ranks", "expected at least one rank");
  std::vector<MergedRankInfo> out;
  for (std::size_t k = 0; k < ranks.size(); ++k) {
    const std::string p = "/ranks/" + std::to_string(k);
    const json& e = ranks[k];
    MergedRankInfo r;
    r.rank = whole_number(in, e, p, "rank", 0, 1 << 30);
    r.size = whole_number(in, e, p, "size", 0, 1 << 30);
    r.file = in.string(e, p, "file");
    r.host = in.string(e, p, "host");
    r.cpu = in.string(e, p, "cpu");
    r.model = in.string(e, p, "model");
    r.threads = whole_number(in, e, p, "threads", 0, 1 << 20);
    out.push_back(std::move(r));
  }
  return out;
}

MergedCeilings ceilings_from_json(const Reader& in, const json& c) {
  MergedCeilings out;
  out.source = in.string(c, "/ceilings", "source");
  for (const char* key : {"compute_gflops", "memory_gbps"}) {
    const json& list = array_member(in, c, "/ceilings", key);
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string p = at("/ceilings", key) + "/" + std::to_string(i);
      MergedCeiling ceiling{in.string(list[i], p, "label"), in.number(list[i], p, "value", true)};
      (key[0] == 'c' ? out.compute_gflops : out.memory_gbps).push_back(std::move(ceiling));
    }
  }
  return out;
}

bool is_merge(const json& j) {
  return j.is_object() && j.contains("kind") && j["kind"] == kMergedKind;
}

MergedRanks merged_from_parsed(const Reader& in, const json& j) {
  if (!j.is_object()) in.fail("", std::string("a merge is a JSON object, got ") + j.type_name());
  if (in.string(j, "", "kind") != kMergedKind) in.fail("/kind", "not a merge of ranks (its kind is not \"hwprof-merge\")");
  const std::int64_t schema = in.integer(j, "", "schema", 1);
  if (schema > kMergedSchema) {
    in.fail("/schema", fmt::format("schema {} is newer than this hwprof reads ({}): use a newer hwprof", schema, kMergedSchema));
  }
  MergedRanks m;
  m.made_by = in.string(j, "", "made_by");
  m.ranks = ranks_from_json(in, j);
  const json& warnings = array_member(in, j, "", "warnings");
  for (std::size_t i = 0; i < warnings.size(); ++i) {
    if (!warnings[i].is_string()) in.fail("/warnings/" + std::to_string(i), std::string("expected a string, got ") + warnings[i].type_name());
    m.warnings.push_back(warnings[i].get<std::string>());
  }
  m.total = region_from_json(in, in.member(j, "", "total"), "/total", m.ranks.size());
  const json& regions = array_member(in, j, "", "regions");
  for (std::size_t i = 0; i < regions.size(); ++i) {
    m.regions.push_back(region_from_json(in, regions[i], "/regions/" + std::to_string(i), m.ranks.size()));
  }
  if (j.contains("ceilings")) m.ceilings = ceilings_from_json(in, j["ceilings"]);
  sort_merged_regions(m);
  return m;
}

Result<MergedRanks> read_parsed(const json& j, std::string_view text, const std::string& source_name) {
  const SourceText source(source_name, std::string(text));
  const Reader in(source);
  try {
    return merged_from_parsed(in, j);
  } catch (const JsonReadError& e) {
    return Error{e.message};
  }
}

// The text parsed, or why not: the place of a syntax error, too deep a nesting.
Result<json> parse_merge(std::string_view text, const std::string& source_name) {
  if (std::string nesting = json_nesting_error(text, source_name); !nesting.empty()) return Error{nesting};
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    const std::size_t byte = e.byte > 0 ? e.byte - 1 : 0;
    return Error{source_name + ":" + line_column(text, byte) + ": not valid JSON"};
  }
}

}  // namespace

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

Result<MergedRanks> merged_from_json(std::string_view text, const std::string& source_name) {
  auto j = parse_merge(text, source_name);
  if (!j) return j.error();
  return read_parsed(*j, text, source_name);
}

std::optional<Result<MergedRanks>> merged_if_merge(std::string_view text, const std::string& source_name) {
  const json j = json::parse(text, nullptr, false);
  if (!is_merge(j)) return std::nullopt;
  return read_parsed(j, text, source_name);
}

Result<MergedRanks> load_merged(const std::string& path) {
  auto text = read_input_file(path, "merged profile", kMaxMergedBytes);
  if (!text) return text.error();
  return merged_from_json(*text, path);
}

}  // namespace hwprof::report
