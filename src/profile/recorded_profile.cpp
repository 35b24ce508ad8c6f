#include "profile/recorded_profile.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <system_error>
#include <unordered_map>
#include <vector>

#include "common/stages.hpp"
#include "placement/process_samples.hpp"
#include "session/span_file.hpp"
#include "symbols/recorded_mappings.hpp"
#include "symbols/symbols.hpp"

namespace hwprof::profile {
namespace {

constexpr const char* kOutsideEveryRegion = "(outside every region)";

// One span per thread of `pid`'s samples, from its first sample to its last: region 0, the
// whole program.
std::vector<RegionSpan> whole_program_spans(const SampleStore& store, std::uint32_t pid) {
  std::unordered_map<std::uint32_t, std::size_t> index;
  std::vector<RegionSpan> spans;
  for (const SampleRecord& s : store.samples()) {
    if (s.pid != pid) continue;
    const auto [it, fresh] = index.emplace(s.tid, spans.size());
    if (fresh) spans.push_back({static_cast<std::int64_t>(s.tid), 0, 0, s.time_ns, s.time_ns});
    RegionSpan& span = spans[it->second];
    span.start_ns = std::min(span.start_ns, s.time_ns);
    span.end_ns = std::max(span.end_ns, s.time_ns);
  }
  return spans;
}

// `from`'s rows and stacks into `out`, its frame names interned into out's, each row's name
// (and its stacks' root) passed through `rename`.
template <class Rename>
void merge_sampling(SamplingProfile& from, const Rename& rename, SamplingProfile& out) {
  std::unordered_map<std::string, int> ids;
  for (std::size_t i = 0; i < out.frame_names.size(); ++i) ids.emplace(out.frame_names[i], static_cast<int>(i));
  const auto intern = [&](const std::string& name) {
    const auto [it, fresh] = ids.emplace(name, static_cast<int>(out.frame_names.size()));
    if (fresh) out.frame_names.push_back(name);
    return it->second;
  };
  for (SampledStackRow& row : from.stacks) {
    for (std::size_t f = 0; f < row.frames.size(); ++f) {
      const std::string& name = from.frame_names[static_cast<std::size_t>(row.frames[f])];
      row.frames[f] = intern(f == 0 ? rename(name) : name);
    }
    out.stacks.push_back(std::move(row));
  }
  for (SampledLayer& l : from.layers) {
    l.name = rename(l.name);
    out.layers.push_back(std::move(l));
  }
  out.samples += from.samples;
  out.ambiguous += from.ambiguous;
  out.outside += from.outside;
}

// A process's command name: its name at its last exec, else the last it had; else the command's.
std::string recorded_name(const SampleStore& store, std::uint32_t pid, const std::string& fallback) {
  std::string name;
  bool from_exec = false;
  for (const CommRecord& c : store.comms) {
    if (c.pid != pid || c.tid != pid) continue;
    if (c.exec || !from_exec) name = c.comm;
    from_exec = from_exec || c.exec;
  }
  return name.empty() ? std::filesystem::path(fallback).filename().string() : name;
}

// Each process with samples, its name and its span file (where it left one; a file that cannot
// be used is a warning, and the process one row).
std::vector<RecordedProcess> recorded_processes(const SampleStore& store, const std::string& span_folder, const std::string& program, pid_t launched,
                                                std::vector<std::string>& warnings) {
  std::set<std::uint32_t> pids;
  for (const SampleRecord& s : store.samples()) pids.insert(s.pid);
  std::vector<RecordedProcess> out;
  for (const std::uint32_t pid : pids) {
    RecordedProcess p;
    p.pid = pid;
    p.launched = static_cast<pid_t>(pid) == launched;
    p.name = recorded_name(store, pid, program);
    const std::string path = span_file_path(span_folder, static_cast<long>(pid));
    std::error_code ec;
    if (!span_folder.empty() && std::filesystem::exists(path, ec)) {
      auto spans = read_span_file(path);
      if (!spans) {
        warnings.push_back(spans.error().message);
      } else if (spans->pid != static_cast<long>(pid)) {
        warnings.push_back(path + ": written by pid " + std::to_string(spans->pid) + ", not " + std::to_string(pid) + "; not used");
      } else {
        p.spans = std::move(*spans);
      }
    }
    out.push_back(std::move(p));
  }
  return out;
}

// Names addresses per process with a symbolizer of its recorded mappings and perf map, made the
// first time the process is asked for.
class RecordedSymbols {
 public:
  explicit RecordedSymbols(const SampleStore& store) : store_(store) {}

  FrameName name(std::uint32_t pid, std::uint64_t address) {
    auto it = symbolizers_.find(pid);
    if (it == symbolizers_.end())
      it = symbolizers_.emplace(pid, symbolizer_for_exited_process(static_cast<int>(pid), recorded_mappings(store_, pid))).first;
    return frame_name_of(it->second.resolve(address));  // as hwprof profile --sample names them
  }

  void add_warnings(std::vector<std::string>& out) const {
    for (const auto& [pid, symbolizer] : symbolizers_) {
      for (const std::string& w : symbolizer.warnings()) {
        if (std::find(out.begin(), out.end(), w) == out.end()) out.push_back(w);
      }
    }
  }

 private:
  const SampleStore& store_;
  std::map<std::uint32_t, Symbolizer> symbolizers_;
};

}  // namespace

void add_recorded_processes(const SampleStore& store, std::span<const RecordedProcess> processes, const NameOfAddressIn& name_of, std::size_t top,
                            SamplingProfile& out) {
  const bool several = processes.size() > 1;
  for (const RecordedProcess& p : processes) {
    const std::string prefix = several && !p.launched ? "pid " + std::to_string(p.pid) + " (" + p.name + "): " : "";
    std::unordered_map<int, std::string> region_names;
    std::vector<RegionSpan> spans;
    if (p.spans) {
      for (const RecordedRegion& r : p.spans->regions) region_names[r.id] = r.name;
      spans = p.spans->spans;
    } else {
      region_names[0] = p.name + " (the whole program)";
      spans = whole_program_spans(store, p.pid);
    }
    region_names[kOutsideRegion] = kOutsideEveryRegion;
    const RowOfRegion row_of = [&](int region) -> std::optional<SampledRow> {
      const auto it = region_names.find(region);
      return it == region_names.end() ? std::nullopt : std::optional<SampledRow>(SampledRow{it->second, -1});
    };
    const NameOfAddress names = [&](std::uint64_t address) { return name_of(p.pid, address); };
    SamplingProfile one;
    add_sampled_layers(store, static_cast<int>(p.pid), spans, row_of, names, top, one);
    merge_sampling(
        one, [&](const std::string& row) { return prefix + row; }, out);
    if (p.spans && p.spans->timeline_dropped > 0) {
      out.warnings.push_back(prefix + std::to_string(p.spans->timeline_dropped) +
                             " region calls ran after the session's timeline was full: samples taken during them are counted outside every region");
    }
  }
  std::stable_sort(out.layers.begin(), out.layers.end(), [](const SampledLayer& a, const SampledLayer& b) {
    if (a.outside != b.outside) return b.outside;
    return a.samples > b.samples;
  });
}

SamplingProfile recorded_sampling(const std::string& spec_text, const std::string& program, const Recording& recording,
                                  const std::string& span_folder) {
  SamplingProfile s;
  s.spec = spec_text;
  s.rate = recording.stats.rate;
  s.lost = recording.stats.lost;
  s.throttled = recording.stats.throttled;
  s.dropped = recording.stats.dropped;
  s.overhead = std::nan("");  // not measured: the program runs once, sampled throughout
  s.overhead_noise = std::nan("");
  s.warnings = recording.warnings;
  const auto processes = recorded_processes(recording.store, span_folder, program, recording.launched, s.warnings);
  RecordedSymbols symbols(recording.store);
  add_recorded_processes(
      recording.store, processes, [&](std::uint32_t pid, std::uint64_t address) { return symbols.name(pid, address); }, 5, s);
  symbols.add_warnings(s.warnings);
  if (const std::string hint = anonymous_code_hint(s); !hint.empty()) s.warnings.push_back(hint);
  return s;
}

}  // namespace hwprof::profile
