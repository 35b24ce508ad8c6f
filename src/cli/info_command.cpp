#include "cli/info_command.hpp"

#include <set>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/arguments.hpp"
#include "cli/data_lookup.hpp"
#include "cli/output.hpp"
#include "common/stages.hpp"
#include "counters/papi_backend.hpp"
#include "counters/self_test.hpp"
#include "counters/system_info.hpp"
#include "hwprof/counters.hpp"
#include "hwprof/cpu.hpp"
#include "hwprof/event_group.hpp"
#include "hwprof/version.hpp"

namespace hwprof::cli {
namespace {

std::string paranoid_meaning(int level) {
  switch (level) {
    case -1:
      return "no restrictions";
    case 0:
      return "users may count their processes and the whole system (uncore/DRAM events), no raw tracepoints";
    case 1:
      return "users may count their own processes, kernel included; not system-wide";
    case 2:
      return "users may count their own processes in user space only; not system-wide";
    default:
      return "counting is restricted for users (beyond the upstream levels: a distribution patch)";
  }
}

// What `hwprof info` says of this CPU's counter family: its name and note, or "unknown" and why.
struct FamilyShown {
  std::string name;
  std::string note;
  std::string unknown_reason;
};

FamilyShown family_shown(const CpuIdentity& cpu) {
  auto family = counter_family(cpu, counter_directories());
  if (!family) return {"unknown", {}, family.error().message};
  return {family->name, family->note, {}};
}

// The groups that apply here: this CPU's family (where known), then the generic and software sets.
std::vector<EventGroup> applicable_groups(const FamilyShown& family, std::vector<std::string>* problems) {
  std::vector<EventGroup> groups;
  std::set<std::string> seen;
  for (const std::string& f : {family.name, std::string("generic"), std::string("software")}) {
    if (!family.unknown_reason.empty() && f == family.name) continue;
    for (const std::string& dir : counter_directories()) {
      auto loaded = load_family_groups(dir, f);
      if (!loaded) {
        problems->push_back(loaded.error().message);
        continue;
      }
      if (loaded->empty()) continue;
      for (EventGroup& g : *loaded) {
        if (seen.insert(f + "/" + g.name).second) groups.push_back(std::move(g));
      }
      break;  // the first directory that has this family wins
    }
  }
  return groups;
}

std::string fmt_count(const std::optional<double>& v) {
  if (!v) return "n/a";
  return fmt::format("{:.4g}", *v);
}

// `hwprof info --self-test`: the known-count kernels under this CPU's FLOP and DRAM groups.
int run_self_test_command(const InfoCommandOptions& options, const counters::SystemInfo& sys, const CpuIdentity& cpu, const FamilyShown& family,
                          const std::vector<EventGroup>& groups) {
  std::vector<EventGroup> checked;
  for (const EventGroup& g : groups) {
    if (counters::checked_metric(g) != nullptr) checked.push_back(g);
  }
  const std::string cpu_line = fmt::format("{} family {:#x} model {:#x} ({}), counter family {}", cpu.vendor, cpu.family, cpu.model,
                                           cpu.brand.empty() ? "no brand string" : cpu.brand, family.name);
  std::string why_not;
  if (!sys.hardware_pmu) {
    why_not = std::string(cpu.hypervisor ? "this virtual machine" : "this machine") +
              " exposes no hardware PMU, so no FLOP or DRAM event can be counted and the self-test has nothing to check "
              "(run it on bare metal, or ask for PMU passthrough)";
  } else if (!family.unknown_reason.empty()) {
    why_not = "this CPU's counter family is unknown, so there is no FLOP or DRAM group to check: " + family.unknown_reason;
  } else if (checked.empty()) {
    why_not = "counter family " + family.name + " has no FLOP or DRAM group to check" + (family.note.empty() ? "" : " (" + family.note + ")");
  }
  counters::SelfTestReport report;
  if (why_not.empty()) {
    const auto kernels = counters::self_test_kernels(options.self_test_iterations, options.self_test_stream_mib << 20);
    report = counters::run_self_test(checked, kernels, [](const EventGroup& g) {
      CounterOptions co;
      for (const GroupEvent& e : g.events) co.events.push_back(e.event);
      return open_counters(co);
    });
  }
  std::string text;
  if (options.format == "json") {
    nlohmann::ordered_json j;
    j["hwprof"] = kVersion;
    j["cpu"] = cpu_line;
    j["ran"] = why_not.empty();
    if (!why_not.empty()) j["reason"] = why_not;
    nlohmann::ordered_json checks = nlohmann::ordered_json::array();
    for (const auto& c : report.checks) {
      nlohmann::ordered_json e = {{"group", c.group}, {"kernel", c.kernel}, {"what", c.what}};
      e["measured"] = c.measured ? nlohmann::ordered_json(*c.measured) : nlohmann::ordered_json(nullptr);
      e["expected"] = c.expected;
      e["result"] = !c.measured ? "unavailable" : c.pass ? "pass" : "fail";
      if (!c.note.empty()) e["note"] = c.note;
      checks.push_back(std::move(e));
    }
    j["checks"] = std::move(checks);
    j["skipped"] = report.skipped;
    j["failed"] = report.failed();
    text = j.dump(2) + "\n";
  } else {
    text += fmt::format("hwprof {} counter self-test — {}\n\n", kVersion, cpu_line);
    if (!why_not.empty()) {
      text += "Not run: " + why_not + ".\n";
    } else {
      text +=
          "Each kernel retires a known number of FP instructions (or reads a known number of bytes); each FP event\n"
          "must count FLOPs / its weight in the group's FLOP metric, within 2% (DRAM bytes: -10%..+25%).\n\n";
      text += fmt::format("  {:<10} {:<20} {:<22} {:>12} {:>12} {:>8}  {}\n", "group", "kernel", "event/metric", "measured", "expected", "ratio",
                          "result");
      for (const auto& c : report.checks) {
        const std::string ratio = c.measured && c.expected > 0 ? fmt::format("{:.3f}", *c.measured / c.expected) : "-";
        const std::string result = !c.measured ? "n/a" : c.pass ? "pass" : "FAIL";
        text += fmt::format("  {:<10} {:<20} {:<22} {:>12} {:>12} {:>8}  {}{}\n", c.group, c.kernel, c.what, fmt_count(c.measured),
                            fmt::format("{:.4g}", c.expected), ratio, result, c.note.empty() ? "" : "  (" + c.note + ")");
      }
      for (const auto& s : report.skipped) text += "  skipped: " + s + "\n";
      text +=
          fmt::format("\n{} checks: {} passed, {} failed, {} unavailable\n", report.checks.size(),
                      report.checks.size() - static_cast<std::size_t>(report.failed() + report.unavailable()), report.failed(), report.unavailable());
    }
  }
  const int written = emit(text, options.output);
  if (written != 0) return written;
  return report.failed() > 0 ? 1 : 0;
}

}  // namespace

std::shared_ptr<InfoCommandOptions> setup_info(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<InfoCommandOptions>();
  CLI::App* sub = app.add_subcommand("info", "What this machine lets hwprof count, and how to fix what it does not");
  sub->description(
      "Reports the kernel, perf_event_paranoid, privileges (root, CAP_PERFMON), the PMUs the kernel exposes,\n"
      "whether this is a virtual machine, user-space rdpmc, PAPI, the CPU's counter family and its event\n"
      "groups — each event tried, and for each that cannot open, why and how to fix it.");
  sub->add_option("-f,--format", options->format, "Report format")->check(CLI::IsMember({"table", "json"}))->capture_default_str();
  sub->add_option("-o,--output", options->output, "Write the report to FILE (atomically) instead of standard output")->check(file_name());
  sub->add_flag("--self-test", options->self_test,
                "Run kernels of known FLOP and byte counts (scalar, SSE, AVX2, AVX-512; SP and DP; FMA and add/multiply; a DRAM "
                "read stream) under each FLOP and DRAM group and report measured/expected per event, pass or fail; exits 1 when "
                "a check fails, 0 when all pass or when there is no PMU to test");
  sub->callback([options, &exit_code]() { exit_code = run_info(*options); });
  return options;
}

namespace {

// What `hwprof info` found: the system, the CPU, PAPI, and each group's events tried.
struct InfoFindings {
  counters::SystemInfo sys;
  CpuIdentity cpu;
  FamilyShown family;
  std::string papi;
  std::string papi_why;
  std::vector<counters::PapiComponent> papi_components;
  std::vector<std::string> problems;  // reading the group files
  nlohmann::ordered_json groups = nlohmann::ordered_json::array();
  std::set<std::string> fixes;
};

// Each group's events opened once: which can be counted here, and for those that cannot, why
// and the fix.
void try_groups(const std::vector<EventGroup>& groups, InfoFindings& f) {
  for (const EventGroup& g : groups) {
    CounterOptions probe;
    for (const GroupEvent& e : g.events) probe.events.push_back(e.event);
    const auto set = open_counters(probe);
    nlohmann::ordered_json events = nlohmann::ordered_json::array();
    std::size_t usable = 0;
    for (std::size_t i = 0; i < set->events().size(); ++i) {
      const EventInfo& info = set->events()[i];
      usable += info.status == CounterStatus::ok;
      nlohmann::ordered_json e = {{"id", g.events[i].id}, {"event", info.name}, {"status", counter_status_name(info.status)}};
      if (!info.reason.empty()) e["reason"] = info.reason;
      events.push_back(std::move(e));
      if (info.status == CounterStatus::no_permission) {
        f.fixes.insert(g.scope == GroupScope::uncore
                           ? "system-wide (uncore) events: `sudo sysctl kernel.perf_event_paranoid=0` (scripts/enable-counters.sh --paranoid 0)"
                           : "`sudo sysctl kernel.perf_event_paranoid=1` or CAP_PERFMON for hwprof (scripts/enable-counters.sh)");
      }
    }
    nlohmann::ordered_json j = {{"name", g.name}, {"title", g.title}, {"file", g.file}};
    j["available"] = usable == g.events.size() ? "yes" : usable == 0 ? "no" : "partly";
    j["events"] = std::move(events);
    f.groups.push_back(std::move(j));
  }
  if (!f.sys.hardware_pmu) {
    f.fixes.insert(std::string(f.cpu.hypervisor ? "this virtual machine" : "this machine") +
                   " exposes no hardware PMU: hardware events (cycles, FP operations, cache misses, DRAM bytes) cannot be "
                   "counted; only software events and timers work. Ask for PMU passthrough (vPMU) or use a bare-metal host");
  }
}

std::string info_json(InfoFindings f) {
  const counters::SystemInfo& sys = f.sys;
  const CpuIdentity& cpu = f.cpu;
  nlohmann::ordered_json j;
  j["hwprof"] = kVersion;
  j["kernel"] = sys.kernel;
  j["perf_event_paranoid"] = sys.perf_event_paranoid;
  j["root"] = sys.root;
  j["cap_perfmon"] = sys.cap_perfmon;
  j["virtual_machine"] = cpu.hypervisor;
  j["cpu"] = {{"vendor", cpu.vendor}, {"family", cpu.family}, {"model", cpu.model}, {"stepping", cpu.stepping}, {"brand", cpu.brand}};
  j["counter_family"] = f.family.name;
  if (!f.family.note.empty()) j["counter_family_note"] = f.family.note;
  if (!f.family.unknown_reason.empty()) j["counter_family_reason"] = f.family.unknown_reason;
  nlohmann::ordered_json pmus = nlohmann::ordered_json::array();
  for (const auto& p : sys.pmus) pmus.push_back({{"name", p.name}, {"type", p.type}});
  j["pmus"] = std::move(pmus);
  j["hardware_pmu"] = sys.hardware_pmu;
  j["rdpmc"] = {{"available", sys.rdpmc_available}, {"detail", sys.rdpmc}};
  j["papi"] = f.papi.empty() ? nlohmann::ordered_json{{"available", false}, {"reason", f.papi_why}}
                             : nlohmann::ordered_json{{"available", true}, {"version", f.papi}};
  nlohmann::ordered_json components = nlohmann::ordered_json::array();
  for (const auto& c : f.papi_components) {
    nlohmann::ordered_json comp = {{"name", c.name}, {"enabled", c.enabled}};
    if (!c.enabled) comp["reason"] = c.reason;
    components.push_back(std::move(comp));
  }
  j["papi"]["components"] = std::move(components);
  j["groups"] = std::move(f.groups);
  j["fixes"] = std::vector<std::string>(f.fixes.begin(), f.fixes.end());
  if (!f.problems.empty()) j["problems"] = f.problems;
  return j.dump(2) + "\n";
}

std::string info_table(const InfoFindings& f) {
  const counters::SystemInfo& sys = f.sys;
  const CpuIdentity& cpu = f.cpu;
  const auto row = [](const std::string& label, const std::string& value) { return fmt::format("  {:<21}{}\n", label, value); };
  std::string text = fmt::format("hwprof {} — what this machine lets hwprof count\n\nSystem\n", kVersion);
  text += row("kernel", sys.kernel);
  text += row(
      "CPU", fmt::format("{} family {} model {:#x}: {}{}", cpu.vendor, cpu.family, cpu.model, cpu.brand, cpu.hypervisor ? " (virtual machine)" : ""));
  text += row("counter family", f.family.name);
  if (!f.family.note.empty()) text += row("", f.family.note);
  if (!f.family.unknown_reason.empty()) text += row("", "why: " + f.family.unknown_reason);
  text += row("perf_event_paranoid", fmt::format("{} ({})", sys.perf_event_paranoid, paranoid_meaning(sys.perf_event_paranoid)));
  text += row("privileges", std::string(sys.root ? "root" : "not root") + ", CAP_PERFMON " + (sys.cap_perfmon ? "yes" : "no"));
  std::string pmu_list;
  for (const auto& p : sys.pmus) pmu_list += (pmu_list.empty() ? "" : ", ") + p.name + " (" + std::to_string(p.type) + ")";
  text += row("PMUs", pmu_list.empty() ? "none listed in /sys/bus/event_source/devices" : pmu_list);
  text += row("hardware PMU", sys.hardware_pmu ? "yes" : "none exposed");
  text += row("rdpmc", sys.rdpmc);
  text += row("PAPI", f.papi.empty() ? "unavailable: " + f.papi_why : f.papi);
  for (const auto& c : f.papi_components) {
    text += row("", "  component " + c.name + (c.enabled ? ": enabled" : ": disabled (" + c.reason + ")"));
  }
  text += "\nEvent groups\n";
  for (const auto& g : f.groups) {
    text += fmt::format("  {:<20} {:<48} available: {}\n", g["name"].get<std::string>(), g["title"].get<std::string>(),
                        g["available"].get<std::string>());
    for (const auto& e : g["events"]) {
      if (e["status"] == "ok") continue;
      text += fmt::format("      {:<44} {}: {}\n", e["event"].get<std::string>(), e["status"].get<std::string>(),
                          e.contains("reason") ? e["reason"].get<std::string>() : "");
    }
  }
  if (!f.problems.empty()) {
    text += "\nProblems reading the group files\n";
    for (const auto& p : f.problems) text += "  " + p + "\n";
  }
  if (!f.fixes.empty()) {
    text += "\nHow to fix\n";
    for (const auto& fix : f.fixes) text += "  - " + fix + "\n";
  }
  return text;
}

}  // namespace

int run_info(const InfoCommandOptions& options) {
  InfoFindings f;
  f.sys = counters::probe_system();
  f.cpu = detect_cpu();
  f.family = family_shown(f.cpu);
  f.papi = counters::papi_version(&f.papi_why);
  f.papi_components = counters::papi_components();
  const std::vector<EventGroup> groups = applicable_groups(f.family, &f.problems);
  if (options.self_test) return run_self_test_command(options, f.sys, f.cpu, f.family, groups);
  try_groups(groups, f);
  return emit(options.format == "json" ? info_json(std::move(f)) : info_table(f), options.output);
}

}  // namespace hwprof::cli
