// Event groups: the data files in counters/ (format documented in counters/README.md) that
// name events by their libpfm4 names and define metrics as linear formulas over them.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hwprof/export.hpp"
#include "hwprof/result.hpp"

HWPROF_API_BEGIN

namespace hwprof {

struct GroupEvent {
  std::string id;     // short name used in formulas, e.g. "dp_256"
  std::string event;  // libpfm4 or kernel generic name, e.g. "FP_ARITH_INST_RETIRED:256B_PACKED_DOUBLE"
  int line = 0;
};

// coefficient × value of `id`; id "time" is the interval in seconds.
struct MetricTerm {
  double coefficient = 1.0;
  std::string id;
};

// What a metric means to hwprof, whatever its display name: the roofline and
// `hwprof info --self-test` find metrics by role, never by name (counters/README.md, "The
// format"). A metric with a role is a count over the interval: no denominator, no `time`.
enum class MetricRole {
  none,
  flops,            // FP operations, weighted by vector width [FLOP]
  dram_bytes,       // bytes read from and written to DRAM [bytes]
  dram_read_bytes,  // bytes read from DRAM, where the group counts reads apart [bytes]
  llc_miss_bytes,   // last-level cache misses × line size [bytes]
};
// "flops", "dram_bytes", ...; "" for none.
std::string_view metric_role_name(MetricRole role);
// The role a group file spells `name`, or nullopt for a name that is not a role.
std::optional<MetricRole> metric_role_named(std::string_view name);

// value = Σ numerator / Σ denominator (an empty denominator means 1).
struct Metric {
  std::string name;  // e.g. "DP FLOP/s"
  std::string unit;  // e.g. "GFLOP/s"
  std::vector<MetricTerm> numerator;
  std::vector<MetricTerm> denominator;
  int line = 0;
  MetricRole role = MetricRole::none;
};

enum class GroupScope { core, uncore, software };

struct EventGroup {
  std::string name;  // file stem, e.g. "flops_dp"
  std::string title;
  GroupScope scope = GroupScope::core;
  std::vector<std::string> families;  // CPU families it applies to, e.g. {"skylake-sp"}
  std::vector<GroupEvent> events;
  std::vector<Metric> metrics;
  std::string description;  // prose: what it measures and its caveats
  std::string source;       // where the encodings and weights come from
  std::string file;
  // Set where the group was asked for by another name (`flops` on a family that splits the
  // precisions, `flops_sp` on one that cannot): what the name stands for here, to show.
  std::string alias_note;
};

// The families a group file's FAMILIES may name: the folders under counters/ with a match file,
// which counter_family() returns ("skylake-sp", ...), "generic" (any CPU, counter_family()'s
// answer where no match file names the CPU) and "software" (the kernel's software events,
// which every machine has).
const std::vector<std::string>& known_group_families();

// `source_name` is the file name used in messages ("counters/zen3/flops.txt:12: ...").
Result<EventGroup> parse_event_group(std::string_view text, const std::string& source_name);
Result<EventGroup> load_event_group(const std::string& path);
// The group's metric with `role` (a group has at most one), or nullptr.
const Metric* metric_with_role(const EventGroup& group, MetricRole role);

// A group by name — counters/<family>/NAME.txt, then generic/ and software/, in each of
// `counters_dirs` in turn — or by path (a name with '/' or ending in .txt). `flops` works on
// every family with FLOP events (flops_sp where the family splits precisions), and flops_sp /
// flops_dp on families that cannot split them (their `flops`); alias_note then says so. The
// error says where it looked and how to list the groups, and, for a FLOP/DRAM/LLC group on a
// family without such events, that the family has none.
// `family` is unused for a path. counter_family() (<hwprof/cpu.hpp>) gives a CPU's family.
Result<EventGroup> find_event_group(const std::string& name, const std::string& family, const std::vector<std::string>& counters_dirs);
// Whether find_event_group takes `name` as a path: it has a '/' or ends in .txt.
bool names_group_file(const std::string& name);
// Every group file of `family` under `counters_dir` (counters/<family>/*.txt), sorted by name;
// an empty list where that folder does not exist. Errors: an unknown family, an unreadable
// folder, the first file that does not parse, a file whose FAMILIES omit the folder's family.
Result<std::vector<EventGroup>> load_family_groups(const std::string& counters_dir, const std::string& family);

// A metric's value, or the reason it has none (a term's event unavailable, a zero denominator).
struct MetricValue {
  std::optional<double> value;
  std::string reason;
};
// `lookup(id)` gives an event's value, or nullopt when that event has none.
MetricValue evaluate_metric(const Metric& metric, const std::function<std::optional<double>(std::string_view)>& lookup);

}  // namespace hwprof
HWPROF_API_END
