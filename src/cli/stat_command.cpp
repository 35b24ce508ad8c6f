#include "cli/stat_command.hpp"

#include <filesystem>
#include <iostream>
#include <optional>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/arguments.hpp"
#include "cli/child_process.hpp"
#include "cli/data_lookup.hpp"
#include "cli/output.hpp"
#include "common/stages.hpp"
#include "hwprof/counters.hpp"
#include "hwprof/cpu.hpp"
#include "hwprof/engine/report.hpp"
#include "hwprof/event_group.hpp"

namespace hwprof::cli {
namespace {

// perf stat's default view: what works everywhere (software) and the basic hardware events.
const std::vector<std::string> kDefaultEvents = {"task-clock", "context-switches", "cpu-migrations", "page-faults",
                                                 "cycles",     "instructions",     "branches",       "branch-misses"};

Result<EventGroup> find_group(const std::string& name) {
  const std::vector<std::string> dirs = counter_directories();
  if (names_group_file(name)) return find_event_group(name, {}, dirs);
  auto family = counter_family(detect_cpu(), dirs);
  if (!family) return Error{"event group '" + name + "': this CPU's counter family is unknown: " + family.error().message};
  return find_event_group(name, family->name, dirs);
}

}  // namespace

std::shared_ptr<StatCommandOptions> setup_stat(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<StatCommandOptions>();
  CLI::App* sub = app.add_subcommand("stat", "Count events over a whole program, like perf stat");
  sub->description(
      "Runs CMD (no shell) with counters on it and every thread it starts, from exec to exit, then prints each\n"
      "event with its status (ok, multiplexed with the share of time it ran, unsupported, no-permission,\n"
      "not-counted) and the group's metrics. An unavailable counter is shown with the reason, never as 0.\n"
      "The report goes to standard error (the program keeps standard output) unless -o is given;\n"
      "hwprof exits with the program's exit code.\n\nExample: hwprof stat -e task-clock,page-faults -- python3 train.py");
  auto* group = sub->add_option("-g,--group", options->group, "Event group: a name from `hwprof info`, or a group file");
  sub->add_option("-e,--events", options->events, "Events, comma-separated (libpfm4, kernel generic or PAPI names)")
      ->allow_extra_args(false)
      ->excludes(group);
  sub->add_option("--backend", options->backend, "Counter backend")->check(CLI::IsMember({"perf", "papi", "timer"}))->capture_default_str();
  sub->add_option("-f,--format", options->format, "Report format")->check(CLI::IsMember({"table", "json"}))->capture_default_str();
  sub->add_option("-o,--output", options->output, "Write the report to FILE (atomically)")->check(file_name());
  // The program: everything after `--` (main hands it over before parsing, so that none of it
  // is taken for hwprof's options), or from the first word that is not an option of hwprof's.
  sub->prefix_command();
  sub->callback([options, sub, &exit_code]() {
    if (options->command.empty()) options->command = sub->remaining();
    if (options->command.empty()) {
      std::cerr << "hwprof: error: stat: no program given; usage: hwprof stat [OPTIONS] -- CMD [ARGS...]\n";
      exit_code = kExitUsage;
      return;
    }
    exit_code = run_stat(*options);
  });
  return options;
}

namespace {

// The events `stat` counts: the group's, those named, or the defaults; or the usage error.
struct StatEvents {
  std::optional<EventGroup> group;
  std::vector<std::string> names;
  BackendKind backend = BackendKind::perf;
};

Result<StatEvents> stat_events(const StatCommandOptions& options, bool& usage_error) {
  StatEvents out;
  auto listed = event_arguments(options.events);
  if (!listed) {
    usage_error = true;
    return listed.error();
  }
  out.names = std::move(*listed);
  if (!options.group.empty()) {
    auto g = find_group(options.group);
    if (!g) return g.error();
    out.group = std::move(*g);
    out.names.clear();
    for (const GroupEvent& e : out.group->events) out.names.push_back(e.event);
  }
  out.backend = options.backend == "papi" ? BackendKind::papi : options.backend == "timer" ? BackendKind::timer : BackendKind::perf;
  if (out.names.empty() && out.backend == BackendKind::perf) out.names = kDefaultEvents;
  return out;
}

// What was counted, as the report's records: each event by name (for the metrics) and as JSON.
struct StatRecords {
  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  std::vector<std::pair<std::string, CounterReading>> values;
  void add(const std::string& name, const CounterReading& r, const std::string& unit, const std::string& reason) {
    values.emplace_back(name, r);
    nlohmann::ordered_json e = {{"name", name}};
    e["value"] = r.has_value() ? nlohmann::ordered_json(r.value) : nlohmann::ordered_json(nullptr);
    e["unit"] = unit;
    e["status"] = counter_status_name(r.status);
    e["running_fraction"] = r.running_fraction;
    if (!reason.empty()) e["reason"] = reason;
    events.push_back(std::move(e));
  }
};

StatRecords stat_records(const StatEvents& asked, const ChildResult& child, CounterSet* set) {
  StatRecords out;
  if (asked.backend == BackendKind::timer) {
    const auto add = [&](const char* name, double seconds) {
      CounterReading r;
      r.status = CounterStatus::ok;
      r.value = seconds * 1e9;
      r.running_fraction = 1.0;
      out.add(name, r, "ns", "");
    };
    add("wall-time", child.wall_seconds);
    add("user-time", child.user_seconds);
    add("system-time", child.system_seconds);
    // The events asked for are not dropped without a word.
    for (const std::string& name : asked.names) {
      CounterReading r;
      r.status = CounterStatus::unsupported;
      out.add(name, r, "count", "not counted: the timer backend counts no events (use --backend perf or papi)");
    }
  } else if (set != nullptr) {
    CounterSnapshot after;
    set->read(after);
    CounterSnapshot zero;  // enabled at exec: everything counted is the program's
    zero.valid.fill(true);
    const std::vector<CounterReading> readings = readings_between(*set, zero, after);
    for (std::size_t i = 0; i < set->events().size(); ++i) {
      const EventInfo& info = set->events()[i];
      out.add(info.name, i < readings.size() ? readings[i] : CounterReading{}, info.unit.empty() ? "count" : info.unit, info.reason);
    }
  }
  return out;
}

// The group's metrics over the program's whole run (derived from the records).
nlohmann::ordered_json stat_metrics(const EventGroup& group, const StatRecords& records, double wall_seconds) {
  nlohmann::ordered_json metrics = nlohmann::ordered_json::array();
  for (const Metric& m : group.metrics) {
    const MetricValue v = evaluate_metric(m, [&](std::string_view id) -> std::optional<double> {
      if (id == "time") return wall_seconds;
      for (const GroupEvent& ge : group.events) {
        if (ge.id != id) continue;
        for (const auto& [name, r] : records.values) {
          if (name == ge.event && r.has_value()) return r.value;
        }
      }
      return std::nullopt;
    });
    nlohmann::ordered_json j = {{"name", m.name}};
    j["value"] = v.value ? nlohmann::ordered_json(*v.value) : nlohmann::ordered_json(nullptr);
    j["unit"] = m.unit;
    j["source"] = "derived";
    if (!v.value) j["reason"] = v.reason;
    metrics.push_back(std::move(j));
  }
  return metrics;
}

std::string stat_json(const StatCommandOptions& options, const StatEvents& asked, const ChildResult& child, StatRecords records,
                      nlohmann::ordered_json metrics) {
  nlohmann::ordered_json j;
  j["command"] = options.command;
  j["backend"] = options.backend;
  if (asked.group) j["group"] = asked.group->name;
  if (asked.group && !asked.group->alias_note.empty()) j["group_note"] = asked.group->alias_note;
  j["exit_code"] = child.exit_code;
  j["wall_seconds"] = child.wall_seconds;
  j["events"] = std::move(records.events);
  j["metrics"] = std::move(metrics);
  return j.dump(2) + "\n";
}

std::string stat_table(const StatCommandOptions& options, const StatEvents& asked, const ChildResult& child, const StatRecords& records,
                       const nlohmann::ordered_json& metrics) {
  const std::optional<EventGroup>& group = asked.group;
  std::string text = fmt::format("\n Counter stats for '{}' (backend {}{}):\n\n", quote_command(options.command), options.backend,
                                 group ? ", group " + group->name : "");
  if (group && !group->alias_note.empty()) text += "  (" + group->alias_note + ")\n\n";
  for (const auto& e : records.events) {
    const std::string name = e["name"];
    const std::string status = e["status"];
    if (e["value"].is_null()) {
      text += fmt::format("  {:>18}  {:<28} {}\n", "<" + status + ">", name, e.contains("reason") ? e["reason"].get<std::string>() : "");
      continue;
    }
    const double value = e["value"];
    const std::string unit = e["unit"];
    const std::string shown = unit == "ns" ? fmt::format("{:.2f} ms", value / 1e6) : fmt::format("{:.0f}", value);
    const double fraction = e["running_fraction"];
    text += fmt::format("  {:>18}  {:<28} {}\n", shown, name,
                        status == "multiplexed" ? fmt::format("(multiplexed: counted {:.1f}% of the time, scaled)", fraction * 100) : "");
  }
  if (!metrics.empty()) {
    text += "\n";
    for (const auto& m : metrics) {
      const std::string name = m["name"];
      if (m["value"].is_null()) {
        text += fmt::format("  {:>18}  {:<28} unavailable: {}\n", "-", name, m["reason"].get<std::string>());
      } else {
        text += fmt::format("  {:>18.4g}  {:<28} {}\n", m["value"].get<double>(), name, m["unit"].get<std::string>());
      }
    }
  }
  text += fmt::format("\n  {:.6f} seconds wall; exit code {}\n\n", child.wall_seconds, child.exit_code);
  return text;
}

}  // namespace

int run_stat(const StatCommandOptions& options) {
  if (!options.output.empty()) {
    // A report that cannot be written is known before the program runs.
    if (auto error = check_output_path(options.output)) return fail(*error);
  }
  bool usage_error = false;
  auto asked = stat_events(options, usage_error);
  if (!asked) {
    if (!usage_error) return fail(asked.error());
    std::cerr << "hwprof: error: " << asked.error().message << "\n";
    return kExitUsage;
  }
  std::unique_ptr<CounterSet> set;
  auto child = run_child(options.command, [&](pid_t pid) -> std::optional<Error> {
    if (asked->backend == BackendKind::timer) return std::nullopt;  // the child's times come from wait4
    CounterOptions counter_options;
    counter_options.backend = asked->backend;
    counter_options.events = asked->names;
    counter_options.pid = pid;
    counter_options.enable_on_exec = true;
    set = open_counters(counter_options);
    return std::nullopt;
  });
  if (!child || !child->exec_error.empty()) {
    std::cerr << "hwprof: error: " << (child ? child->exec_error : child.error().message) << "\n";
    return 127;
  }
  StatRecords records = stat_records(*asked, *child, set.get());
  nlohmann::ordered_json metrics = asked->group ? stat_metrics(*asked->group, records, child->wall_seconds) : nlohmann::ordered_json::array();
  const std::string text = options.format == "json" ? stat_json(options, *asked, *child, std::move(records), std::move(metrics))
                                                    : stat_table(options, *asked, *child, records, metrics);
  if (!options.output.empty()) {
    if (auto error = write_file_atomically(options.output, text)) {
      fail(*error);
      return child->exit_code == 0 ? kExitError : child->exit_code;
    }
  } else {
    std::cerr << text;
  }
  return child->exit_code;
}

}  // namespace hwprof::cli
