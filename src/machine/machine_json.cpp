// The machine report as JSON (docs/calibration.md, "The machine report": schema, created, host,
// cpu, theoretical, runs), read back with the same care as a model spec: every problem names the file, the
// line and column, the JSON path and what was expected.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/input_file.hpp"
#include "common/json_reader.hpp"
#include "common/stages.hpp"
#include "common/text_position.hpp"
#include "hwprof/engine/graph.hpp"
#include "hwprof/engine/machine.hpp"
#include "machine/machine_json.hpp"
#include "machine/peak_inputs.hpp"

namespace hwprof {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

const char* const kBandwidthKernels[] = {"copy", "scale", "add", "triad", "copy_nt", "triad_nt"};
const char* const kComputeCeilings[] = {"fma_sp", "fma_dp", "gemm_sp", "gemm_dp"};

ordered_json ceiling_fields(const std::string& prefix, const Ceiling& c, const char* unit, const char* size_key) {
  ordered_json j;
  j[prefix + "_" + unit] = c.best;
  j[prefix + "_median_" + unit] = c.median;
  j[prefix + "_spread"] = c.spread;
  j[prefix + "_repetitions"] = c.repetitions;
  if (c.size > 0) j[prefix + "_" + size_key] = c.size;
  if (!c.variant.empty()) j[prefix + "_variant"] = c.variant;
  if (!c.note.empty()) j[prefix + "_note"] = c.note;
  return j;
}

using common::JsonReader;

// A ceiling stored as <prefix>_<unit>, <prefix>_median_<unit>, ... ; absent → nullopt.
std::optional<Ceiling> read_ceiling(const JsonReader& in, const json& object, const std::string& pointer, const std::string& prefix, const char* unit,
                                    const char* size_key) {
  const std::string best_key = prefix + "_" + unit;
  if (!object.contains(best_key)) return std::nullopt;
  Ceiling c;
  c.best = in.number(object, pointer, best_key.c_str(), true);
  c.median = in.number(object, pointer, (prefix + "_median_" + unit).c_str(), true);
  c.spread = in.number(object, pointer, (prefix + "_spread").c_str(), false);
  c.repetitions = static_cast<int>(in.integer(object, pointer, (prefix + "_repetitions").c_str(), 1));
  if (c.median > c.best * (1.0 + 1e-9)) in.fail(pointer + "/" + prefix + "_median_" + unit, "the median exceeds the best value");
  const std::string size = prefix + "_" + size_key;
  if (object.contains(size)) c.size = in.integer(object, pointer, size.c_str(), 1);
  const std::string variant = prefix + "_variant";
  if (object.contains(variant)) c.variant = in.string(object, pointer, variant.c_str());
  const std::string note = prefix + "_note";
  if (object.contains(note)) c.note = in.string(object, pointer, note.c_str());
  return c;
}

}  // namespace

const CalibrationRun* Machine::run_for(int threads) const noexcept {
  for (const CalibrationRun& run : runs) {
    if (run.threads == threads) return &run;
  }
  return nullptr;
}

std::vector<std::int64_t> cache_capacities(const MachineCpu& cpu, int threads) {
  std::vector<std::int64_t> levels;
  for (const CacheInfo& c : cpu.caches) {
    if (c.level < 1 || c.size_bytes <= 0) continue;
    const int sharing_cores = std::max(1, c.shared_by * cpu.cores / std::max(1, cpu.logical_cpus));
    const int instances = (std::max(threads, 1) + sharing_cores - 1) / sharing_cores;
    const std::int64_t bytes = c.size_bytes * instances;
    if (static_cast<std::size_t>(c.level) > levels.size()) levels.resize(static_cast<std::size_t>(c.level), 0);
    levels[static_cast<std::size_t>(c.level - 1)] = std::max(levels[static_cast<std::size_t>(c.level - 1)], bytes);
  }
  levels.erase(std::remove(levels.begin(), levels.end(), 0), levels.end());
  return levels;
}

namespace machine {

ordered_json caches_to_json(const std::vector<CacheInfo>& levels) {
  ordered_json caches = ordered_json::array();
  for (const CacheInfo& c : levels) {
    ordered_json j = {{"level", c.level}, {"type", c.type}, {"size_bytes", c.size_bytes}, {"shared_by", c.shared_by}};
    if (!c.source.empty()) j["source"] = c.source;
    caches.push_back(std::move(j));
  }
  return caches;
}

ordered_json cpu_to_json(const MachineCpu& cpu) {
  ordered_json caches = caches_to_json(cpu.caches);
  ordered_json sources = ordered_json::array();
  for (const CacheSource& s : cpu.cache_sources) {
    ordered_json j = {{"source", s.source}, {"how", s.how}, {"levels", caches_to_json(s.levels)}};
    if (!s.absent.empty()) j["absent"] = s.absent;
    if (!s.notes.empty()) j["notes"] = s.notes;
    sources.push_back(std::move(j));
  }
  return {{"vendor", cpu.vendor},
          {"model", cpu.brand},
          {"family", cpu.family},
          {"model_number", cpu.model},
          {"stepping", cpu.stepping},
          {"flags", cpu.flags},
          {"logical_cpus", cpu.logical_cpus},
          {"cores", cpu.cores},
          {"caches", caches},
          {"cache_sources", sources},
          {"cache_notes", cpu.cache_notes},
          {"frequency", {{"ghz", cpu.frequency_ghz}, {"source", cpu.frequency_source}}},
          {"hypervisor", cpu.hypervisor}};
}

ordered_json theoretical_to_json(const TheoreticalPeaks& t) {
  return {{"isa", t.isa},
          {"cores", t.cores},
          {"ghz", t.ghz},
          {"ghz_source", t.ghz_source},
          {"sp_flops_per_cycle", t.sp_flops_per_cycle},
          {"dp_flops_per_cycle", t.dp_flops_per_cycle},
          {"sp_gflops", t.sp_gflops},
          {"dp_gflops", t.dp_gflops},
          {"assumptions", t.assumptions}};
}

ordered_json run_to_json(const CalibrationRun& run) {
  ordered_json r;
  r["threads"] = run.threads;
  r["cpus"] = run.cpus;
  r["seconds"] = run.seconds;
  ordered_json bandwidth = ordered_json::object();
  for (const char* level : {"l1", "l2", "l3", "dram"}) {
    auto it = run.bandwidth.find(level);
    if (it == run.bandwidth.end()) continue;
    ordered_json b;
    b["from_bytes"] = it->second.from_bytes;
    b["to_bytes"] = it->second.to_bytes;
    b["plateau"] = it->second.plateau;
    if (it->second.capacity_bytes > 0) b["capacity_bytes"] = it->second.capacity_bytes;
    if (!it->second.capacity_source.empty()) b["capacity_source"] = it->second.capacity_source;
    if (it->second.reported_bytes > 0) b["reported_bytes"] = it->second.reported_bytes;
    if (!it->second.note.empty()) b["note"] = it->second.note;
    for (const char* kernel : kBandwidthKernels) {
      auto k = it->second.kernels.find(kernel);
      if (k != it->second.kernels.end()) b.update(ceiling_fields(kernel, k->second, "gbps", "bytes"));
    }
    if (auto triad = it->second.kernels.find("triad"); triad != it->second.kernels.end()) b["spread"] = triad->second.spread;
    bandwidth[level] = std::move(b);
  }
  r["bandwidth"] = std::move(bandwidth);
  ordered_json compute = ordered_json::object();
  for (const char* name : kComputeCeilings) {
    auto it = run.compute.find(name);
    if (it != run.compute.end()) compute.update(ceiling_fields(name, it->second, "gflops", "n"));
  }
  // Transcendental kernels: G evaluations per second (calibrate/compute.hpp).
  for (const char* name : machine::kTranscendentalCeilings) {
    auto it = run.compute.find(name);
    if (it != run.compute.end()) compute.update(ceiling_fields(name, it->second, "gevals", "n"));
  }
  r["compute"] = std::move(compute);
  ordered_json sweep = ordered_json::array();
  for (const SweepPoint& p : run.sweep) {
    sweep.push_back({{"bytes", p.bytes}, {"kernel", p.kernel}, {"best_gbps", p.best_gbps}, {"median_gbps", p.median_gbps}});
  }
  r["sweep"] = std::move(sweep);
  if (!run.notes.empty()) r["notes"] = run.notes;
  return r;
}

std::vector<std::string> strings_from_json(const JsonReader& in, const json& list, const std::string& at) {
  if (!list.is_array()) in.fail(at, "expected a list of strings");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string()) in.fail(at + "/" + std::to_string(i), "expected a string");
    out.push_back(list[i].get<std::string>());
  }
  return out;
}

std::vector<CacheInfo> caches_from_json(const JsonReader& in, const json& caches, const std::string& at) {
  if (!caches.is_array()) in.fail(at, "expected a list of caches");
  std::vector<CacheInfo> out;
  for (std::size_t i = 0; i < caches.size(); ++i) {
    const std::string cat = at + "/" + std::to_string(i);
    CacheInfo cache;
    cache.level = static_cast<int>(in.integer(caches[i], cat, "level", 1));
    cache.type = in.string(caches[i], cat, "type");
    cache.size_bytes = in.integer(caches[i], cat, "size_bytes", 1);
    cache.shared_by = static_cast<int>(in.integer(caches[i], cat, "shared_by", 0));  // 0: the source does not say
    if (caches[i].contains("source")) cache.source = in.string(caches[i], cat, "source");
    out.push_back(cache);
  }
  return out;
}

MachineCpu cpu_from_json(const JsonReader& in, const json& cpu, const std::string& at) {
  MachineCpu c;
  c.vendor = in.string(cpu, at, "vendor");
  c.brand = in.string(cpu, at, "model");
  c.family = static_cast<int>(in.integer(cpu, at, "family", 0));
  c.model = static_cast<int>(in.integer(cpu, at, "model_number", 0));
  c.stepping = static_cast<int>(in.integer(cpu, at, "stepping", 0));
  const json& flags = in.member(cpu, at, "flags");
  if (!flags.is_array()) in.fail(at + "/flags", "expected a list of strings");
  for (std::size_t i = 0; i < flags.size(); ++i) {
    if (!flags[i].is_string()) in.fail(at + "/flags/" + std::to_string(i), "expected a string");
    c.flags.push_back(flags[i].get<std::string>());
  }
  c.logical_cpus = static_cast<int>(in.integer(cpu, at, "logical_cpus", 1));
  c.cores = static_cast<int>(in.integer(cpu, at, "cores", 1));
  c.caches = caches_from_json(in, in.member(cpu, at, "caches"), at + "/caches");
  if (cpu.contains("cache_sources")) {
    const json& sources = cpu["cache_sources"];
    if (!sources.is_array()) in.fail(at + "/cache_sources", "expected a list of cache sources");
    for (std::size_t i = 0; i < sources.size(); ++i) {
      const std::string sat = at + "/cache_sources/" + std::to_string(i);
      CacheSource source;
      source.source = in.string(sources[i], sat, "source");
      source.how = in.string(sources[i], sat, "how");
      source.levels = caches_from_json(in, in.member(sources[i], sat, "levels"), sat + "/levels");
      if (sources[i].contains("absent")) source.absent = in.string(sources[i], sat, "absent");
      if (sources[i].contains("notes")) source.notes = strings_from_json(in, sources[i]["notes"], sat + "/notes");
      c.cache_sources.push_back(std::move(source));
    }
  }
  if (cpu.contains("cache_notes")) c.cache_notes = strings_from_json(in, cpu["cache_notes"], at + "/cache_notes");
  const json& frequency = in.member(cpu, at, "frequency");
  c.frequency_ghz = in.number(frequency, at + "/frequency", "ghz", false);
  c.frequency_source = in.string(frequency, at + "/frequency", "source");
  c.hypervisor = in.boolean(cpu, at, "hypervisor");
  return c;
}

TheoreticalPeaks theoretical_from_json(const JsonReader& in, const json& t, const std::string& at) {
  TheoreticalPeaks p;
  p.isa = in.string(t, at, "isa");
  p.cores = static_cast<int>(in.integer(t, at, "cores", 1));
  p.ghz = in.number(t, at, "ghz", false);
  p.ghz_source = in.string(t, at, "ghz_source");
  p.sp_flops_per_cycle = static_cast<int>(in.integer(t, at, "sp_flops_per_cycle", 1));
  p.dp_flops_per_cycle = static_cast<int>(in.integer(t, at, "dp_flops_per_cycle", 1));
  p.sp_gflops = in.number(t, at, "sp_gflops", false);
  p.dp_gflops = in.number(t, at, "dp_gflops", false);
  p.assumptions = in.string(t, at, "assumptions");
  return p;
}

CalibrationRun run_from_json(const JsonReader& in, const json& r, const std::string& at) {
  CalibrationRun run;
  run.threads = static_cast<int>(in.integer(r, at, "threads", 1));
  const json& cpus = in.member(r, at, "cpus");
  if (!cpus.is_array()) in.fail(at + "/cpus", "expected a list of CPU numbers");
  for (const json& c : cpus) {
    if (!c.is_number_integer() || c.get<std::int64_t>() < 0) in.fail(at + "/cpus", "expected non-negative CPU numbers");
    run.cpus.push_back(c.get<int>());
  }
  run.seconds = in.number(r, at, "seconds", false);
  const json& bandwidth = in.member(r, at, "bandwidth");
  if (!bandwidth.is_object()) in.fail(at + "/bandwidth", "expected an object of memory levels");
  for (const auto& [level, b] : bandwidth.items()) {
    const std::string lat = at + "/bandwidth/" + level;
    if (level != "l1" && level != "l2" && level != "l3" && level != "dram") {
      in.fail(lat, "unknown memory level \"" + level + "\"; expected l1, l2, l3 or dram");
    }
    BandwidthLevel bl;
    bl.from_bytes = in.integer(b, lat, "from_bytes", 1);
    bl.to_bytes = in.integer(b, lat, "to_bytes", bl.from_bytes);
    if (b.contains("plateau")) {
      if (!b["plateau"].is_boolean()) in.fail(lat + "/plateau", "expected true or false");
      bl.plateau = b["plateau"].get<bool>();
    }
    for (const char* kernel : kBandwidthKernels) {
      if (auto c = read_ceiling(in, b, lat, kernel, "gbps", "bytes")) bl.kernels[kernel] = *c;
    }
    if (!bl.kernels.count("triad")) in.fail(lat, "missing \"triad_gbps\": every level needs at least the triad ceiling");
    if (b.contains("capacity_bytes")) bl.capacity_bytes = in.integer(b, lat, "capacity_bytes", 0);
    if (b.contains("capacity_source")) bl.capacity_source = in.string(b, lat, "capacity_source");
    if (b.contains("reported_bytes")) bl.reported_bytes = in.integer(b, lat, "reported_bytes", 0);
    if (b.contains("note")) bl.note = in.string(b, lat, "note");
    run.bandwidth[level] = bl;
  }
  const json& compute = in.member(r, at, "compute");
  if (!compute.is_object()) in.fail(at + "/compute", "expected an object of compute ceilings");
  for (const char* name : kComputeCeilings) {
    if (auto c = read_ceiling(in, compute, at + "/compute", name, "gflops", "n")) run.compute[name] = *c;
  }
  // Absent in calibrations from before hwprof measured them: those ops keep the FMA roof.
  for (const char* name : machine::kTranscendentalCeilings) {
    if (auto c = read_ceiling(in, compute, at + "/compute", name, "gevals", "n")) run.compute[name] = *c;
  }
  if (r.contains("notes")) run.notes = strings_from_json(in, r["notes"], at + "/notes");
  if (r.contains("sweep")) {
    const json& sweep = r["sweep"];
    if (!sweep.is_array()) in.fail(at + "/sweep", "expected a list of points");
    for (std::size_t k = 0; k < sweep.size(); ++k) {
      const std::string pat = at + "/sweep/" + std::to_string(k);
      SweepPoint p;
      p.bytes = in.integer(sweep[k], pat, "bytes", 1);
      p.kernel = in.string(sweep[k], pat, "kernel");
      p.best_gbps = in.number(sweep[k], pat, "best_gbps", true);
      p.median_gbps = in.number(sweep[k], pat, "median_gbps", true);
      run.sweep.push_back(p);
    }
  }
  return run;
}

}  // namespace machine

std::string machine_to_json(const Machine& m) {
  ordered_json j;
  j["schema"] = m.schema;
  j["created"] = m.created;
  j["host"] = m.host;
  j["hwprof_version"] = m.hwprof_version;
  j["quick"] = m.quick;
  j["cpu"] = machine::cpu_to_json(m.cpu);
  j["theoretical"] = machine::theoretical_to_json(m.theoretical);
  ordered_json runs = ordered_json::array();
  for (const CalibrationRun& run : m.runs) runs.push_back(machine::run_to_json(run));
  j["runs"] = std::move(runs);
  j["contended"] = m.contention.contended;
  j["contention"] = {{"others_cpus", m.contention.others_cpus}, {"steal_percent", m.contention.steal_percent}, {"evidence", m.contention.evidence}};
  return j.dump(2) + "\n";
}

Result<Machine> machine_from_json(std::string_view text, const std::string& source_name) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return Error{source_name + ": the machine report is empty (truncated?); run `hwprof calibrate` again"};
  }
  if (std::string nesting = common::json_nesting_error(text, source_name); !nesting.empty()) return Error{nesting};
  json root;
  try {
    root = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    std::string what = e.what();
    const auto colon = what.find(": ");
    if (colon != std::string::npos) what = what.substr(colon + 2);
    return Error{source_name + ": not a valid machine report (corrupt or truncated JSON: " + what + "); run `hwprof calibrate` again"};
  }
  const SourceText source(source_name, std::string(text));
  const JsonReader in(source);
  Machine m;
  try {
    if (!root.is_object()) in.fail("", "a machine report is a JSON object");
    // A profile's schema is not a machine report's: said before its number is read as one.
    if (root.contains("layers") && root.contains("total")) {
      in.fail("", "this is a profile (`hwprof profile`; `hwprof report` renders it), not a machine report: `hwprof calibrate` writes one");
    }
    const std::int64_t schema = in.integer(root, "", "schema", 1);
    if (schema != kMachineSchema) {
      in.fail("/schema", "schema " + std::to_string(schema) + " is not " + std::to_string(kMachineSchema) +
                             (schema > kMachineSchema ? "; it was written by a newer hwprof: upgrade hwprof" : "; calibrate again"));
    }
    m.schema = static_cast<int>(schema);
    m.created = in.string(root, "", "created");
    m.host = in.string(root, "", "host");
    m.hwprof_version = in.string(root, "", "hwprof_version");
    m.quick = in.boolean(root, "", "quick");
    m.cpu = machine::cpu_from_json(in, in.member(root, "", "cpu"), "/cpu");
    m.theoretical = machine::theoretical_from_json(in, in.member(root, "", "theoretical"), "/theoretical");
    const json& runs = in.member(root, "", "runs");
    if (!runs.is_array() || runs.empty()) in.fail("/runs", "expected a non-empty list of runs, one per thread count");
    std::set<int> seen;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const std::string at = "/runs/" + std::to_string(i);
      CalibrationRun run = machine::run_from_json(in, runs[i], at);
      if (!seen.insert(run.threads).second) in.fail(at + "/threads", "a second run with " + std::to_string(run.threads) + " threads");
      m.runs.push_back(std::move(run));
    }
    // Reports written before contention was watched have neither field.
    if (root.contains("contended")) m.contention.contended = in.boolean(root, "", "contended");
    if (root.contains("contention")) {
      const json& c = root["contention"];
      m.contention.others_cpus = in.number(c, "/contention", "others_cpus", false);
      m.contention.steal_percent = in.number(c, "/contention", "steal_percent", false);
      m.contention.evidence = machine::strings_from_json(in, in.member(c, "/contention", "evidence"), "/contention/evidence");
    }
    if (const std::vector<std::string> problems = implausible_fields(m); !problems.empty()) {
      // Each problem starts with the JSON path of the field it names: located at the first.
      std::string all;
      for (const std::string& p : problems) all += (all.empty() ? "" : "; ") + p;
      in.fail(problems.front().substr(0, problems.front().find(' ')),
              "an implausible machine report: " + all + "; it was measured under load or edited: run `hwprof calibrate` again on a quiet machine");
    }
  } catch (const common::JsonReadError& e) {
    return Error{e.message};
  }
  return m;
}

Result<Machine> load_machine(const std::string& path) {
  // Real reports are a few kB; 16 MiB leaves room for any sweep and bounds a hostile file.
  auto text = common::read_input_file(path, "machine report", std::size_t{16} << 20);
  if (!text) return text.error();
  return machine_from_json(*text, path);
}

}  // namespace hwprof
