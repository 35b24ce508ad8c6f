// Everything that is not a generic event or a raw spec goes through libpfm4 (PMU::EVENT:UMASK
// names, PFM_PLM3: user space only unless asked); on failure the message says which PMU the
// name needs and whether this machine has it.
#include <perfmon/pfmlib_perf_event.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/stages.hpp"
#include "common/suggest.hpp"
#include "counters/event_resolvers.hpp"
#include "counters/system_info.hpp"

namespace hwprof::counters::resolver {
namespace {

struct Pfm {
  std::once_flag once;
  int status = PFM_ERR_NOINIT;
  std::mutex mutex;  // libpfm4 does not promise thread safety; resolving is never on a hot path
};

Pfm& pfm() {
  static Pfm p;
  // pfm_initialize reads LIBPFM_FORCE_PMU, so it runs once, on first use.
  std::call_once(p.once, [] { p.status = pfm_initialize(); });
  return p;
}

struct PmuDescription {
  std::string name;
  std::string desc;
  bool present = false;
  bool uncore = false;
  bool core = false;  // a CPU core PMU (not uncore, not the OS's generic perf/perf_raw)
  int first_event = -1;
};

std::vector<PmuDescription> all_pmus() {
  std::vector<PmuDescription> pmus;
  for (int p = PFM_PMU_NONE; p < PFM_PMU_MAX; ++p) {
    pfm_pmu_info_t info;
    std::memset(&info, 0, sizeof info);
    info.size = sizeof info;
    if (pfm_get_pmu_info(static_cast<pfm_pmu_t>(p), &info) != PFM_SUCCESS || info.name == nullptr) continue;
    pmus.push_back({info.name, info.desc ? info.desc : "", info.is_present != 0, info.type == PFM_PMU_TYPE_UNCORE, info.type == PFM_PMU_TYPE_CORE,
                    info.first_event});
  }
  return pmus;
}

std::vector<std::string> event_names(const PmuDescription& pmu) {
  std::vector<std::string> names;
  for (int idx = pmu.first_event; idx != -1; idx = pfm_get_event_next(idx)) {
    pfm_event_info_t info;
    std::memset(&info, 0, sizeof info);
    info.size = sizeof info;
    if (pfm_get_event_info(idx, PFM_OS_NONE, &info) == PFM_SUCCESS && info.name != nullptr) names.emplace_back(info.name);
  }
  return names;
}

std::vector<std::string> present_pmu_names() {
  std::vector<std::string> names;
  for (const PmuDescription& p : all_pmus()) {
    if (p.present) names.push_back(p.name);
  }
  return names;
}

// libpfm4's uncore PMU names follow the kernel's: skx_unc_imc0 is uncore_imc_0, and
// amd64_fam19h_zen3_l3 is amd_l3.
std::string kernel_pmu_guess(const std::string& pfm_name) {
  if (pfm_name.starts_with("amd64_") && pfm_name.size() > 3 && pfm_name.compare(pfm_name.size() - 3, 3, "_l3") == 0) {
    return "amd_l3";
  }
  const auto unc = pfm_name.find("_unc_");
  if (unc == std::string::npos) return {};
  std::string box = pfm_name.substr(unc + 5);
  std::size_t digits = box.size();
  while (digits > 0 && std::isdigit(static_cast<unsigned char>(box[digits - 1]))) --digits;
  return "uncore_" + box.substr(0, digits) + (digits < box.size() ? "_" + box.substr(digits) : "");
}

// libpfm4 activates a core PMU by CPUID, and a hypervisor that hides the PMU hides it there
// too: then no core PMU is present, and "this CPU does not have it" would send the user to
// another event group when no group can count. Said when the kernel lists no core PMU either.
std::string no_core_pmu(const std::string& name, const std::vector<std::string>& owners) {
  return in_quotes(name) + ": this machine exposes no hardware PMU (a virtual machine without PMU passthrough?), so libpfm4 " +
         "activated none of the PMUs that have this event (" + short_list(owners) +
         "); only software events such as task-clock and page-faults can be counted here";
}

// No core PMU anywhere: neither the kernel's (sysfs) nor libpfm4's (forced with
// LIBPFM_FORCE_PMU, libpfm4 has one, and the other families' events are told apart from it).
bool no_core_pmu_at_all(const std::filesystem::path& root) {
  const auto pmus = all_pmus();
  const bool libpfm_core = std::any_of(pmus.begin(), pmus.end(), [](const PmuDescription& p) { return p.present && p.core; });
  return !libpfm_core && !hardware_pmu_exposed(root.string());
}

std::string pmu_absent(const std::string& name, const PmuDescription& pmu, const std::filesystem::path& root) {
  if (!pmu.uncore && no_core_pmu_at_all(root)) return no_core_pmu(name, {pmu.name});
  if (pmu.uncore) {
    const std::string kernel = kernel_pmu_guess(pmu.name);
    return in_quotes(name) + ": uncore PMU " + in_quotes(pmu.name) + " (" + pmu.desc + ") is not exposed on this machine" +
           (kernel.empty() ? "" : ": the kernel has no " + (root / kernel).string()) +
           " (a VM without a virtual PMU, or the uncore driver is not loaded)";
  }
  return in_quotes(name) + " needs PMU " + in_quotes(pmu.name) + " (" + pmu.desc +
         "), which this CPU does not have; detected PMUs: " + short_list(present_pmu_names()) +
         ". Use the event group of this CPU's family (hwprof info lists it)";
}

// Why libpfm4 found no event of this name.
// "skx::FP_ARITH_INST_RETIRED:SCALAR_DOUBLE" → PMU "skx", event "FP_ARITH_INST_RETIRED".
struct EventNameParts {
  std::string pmu;   // empty without a PMU:: prefix
  std::string base;  // the event, without unit masks or modifiers
};
EventNameParts split_event_name(std::string_view rest) {
  EventNameParts parts;
  if (const auto sep = rest.find("::"); sep != std::string_view::npos) {
    parts.pmu = std::string(rest.substr(0, sep));
    rest.remove_prefix(sep + 2);
  }
  parts.base = std::string(rest.substr(0, rest.find(':')));
  return parts;
}

std::string explain_not_found(const std::string& name, const std::filesystem::path& root) {
  // Named, not a structured binding: lambdas below capture them (clang 14 cannot).
  const EventNameParts parts = split_event_name(name);
  const std::string& pmu_name = parts.pmu;
  const std::string& base = parts.base;
  const auto pmus = all_pmus();
  if (!pmu_name.empty()) {
    const auto pmu = std::find_if(pmus.begin(), pmus.end(), [&](const PmuDescription& p) { return p.name == pmu_name; });
    // Forced to one PMU (LIBPFM_FORCE_PMU), libpfm4 drops its uncore PMUs from the list.
    const std::string kernel = kernel_pmu_guess(pmu_name);
    std::error_code ec;
    if (pmu == pmus.end() && !kernel.empty() && !std::filesystem::exists(root / kernel, ec)) {
      return in_quotes(name) + ": uncore PMU " + in_quotes(pmu_name) + " is not exposed on this machine: libpfm4 does not list it and " +
             "the kernel has no " + (root / kernel).string() + " (a VM without a virtual PMU, or the uncore driver is not loaded)";
    }
    if (pmu == pmus.end()) {
      std::vector<std::string_view> names;
      for (const PmuDescription& p : pmus) names.push_back(p.name);
      return in_quotes(name) + ": libpfm4 knows no PMU " + in_quotes(pmu_name) + did_you_mean(pmu_name, names) +
             "; detected PMUs: " + short_list(present_pmu_names());
    }
    if (!pmu->present) return pmu_absent(name, *pmu, root);
    const auto events = event_names(*pmu);
    return in_quotes(name) + ": PMU " + in_quotes(pmu_name) + " has no event " + in_quotes(base) +
           did_you_mean(base, std::vector<std::string_view>(events.begin(), events.end()));
  }
  std::vector<const PmuDescription*> owners;
  const auto generic = generic_names();
  std::vector<std::string> known(generic.begin(), generic.end());
  for (const PmuDescription& p : pmus) {
    const auto events = event_names(p);
    if (std::any_of(events.begin(), events.end(), [&](const std::string& e) { return iequals(e, base); })) owners.push_back(&p);
    if (p.present) known.insert(known.end(), events.begin(), events.end());
  }
  if (owners.empty()) {
    return in_quotes(name) + ": unknown event " + in_quotes(base) + did_you_mean(base, std::vector<std::string_view>(known.begin(), known.end())) +
           "; names are the kernel's generic events (cycles, task-clock, ...), libpfm4 names of this CPU's PMUs (detected: " +
           short_list(present_pmu_names()) + "), or raw specs like uncore_imc/event=0x04,umask=0x0f/";
  }
  if (owners.size() == 1 || std::all_of(owners.begin(), owners.end(), [](const PmuDescription* p) { return p->uncore; })) {
    return pmu_absent(name, *owners.front(), root);
  }
  std::vector<std::string> owner_names;
  for (const PmuDescription* p : owners) owner_names.push_back(p->name);
  if (no_core_pmu_at_all(root)) return no_core_pmu(name, owner_names);
  return in_quotes(name) + ": event " + in_quotes(base) + " belongs to PMU " + short_list(owner_names) +
         ", none of which this CPU has; detected PMUs: " + short_list(present_pmu_names()) +
         ". Use the event group of this CPU's family (hwprof info lists it)";
}

// Which part after the event name libpfm4 did not accept.
std::string explain_bad_attribute(const std::string& name) {
  const auto sep = name.find("::");
  const auto colon = name.find(':', sep == std::string::npos ? 0 : sep + 2);
  if (colon == std::string::npos) return in_quotes(name) + ": " + pfm_strerror(PFM_ERR_ATTR);
  const std::string event = name.substr(0, colon);  // with its "pmu::" when given
  const int idx = pfm_find_event(event.c_str());
  if (idx < 0) return in_quotes(name) + ": " + pfm_strerror(PFM_ERR_ATTR);
  pfm_event_info_t info;
  std::memset(&info, 0, sizeof info);
  info.size = sizeof info;
  pfm_get_event_info(idx, PFM_OS_PERF_EVENT_EXT, &info);
  std::vector<std::string> attributes;
  for (int a = 0; a < info.nattrs; ++a) {
    pfm_event_attr_info_t attr;
    std::memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    if (pfm_get_event_attr_info(idx, a, PFM_OS_PERF_EVENT_EXT, &attr) == PFM_SUCCESS && attr.name != nullptr) {
      attributes.emplace_back(attr.name);
    }
  }
  std::string_view parts = std::string_view(name).substr(colon + 1);
  while (!parts.empty()) {
    const auto next = parts.find(':');
    const std::string_view part = parts.substr(0, next);
    const std::string_view key = part.substr(0, part.find('='));
    if (std::none_of(attributes.begin(), attributes.end(), [&](const std::string& a) { return iequals(a, key); })) {
      return in_quotes(name) + ": event " + in_quotes(event) + " has no unit mask or modifier " + in_quotes(key) +
             did_you_mean(key, std::vector<std::string_view>(attributes.begin(), attributes.end())) + "; it has " + short_list(attributes);
    }
    parts = next == std::string_view::npos ? std::string_view() : parts.substr(next + 1);
  }
  return in_quotes(name) + ": " + pfm_strerror(PFM_ERR_ATTR) + " (libpfm4)";
}

// The sysfs name of the PMU whose type is `type` ("uncore_imc_0"), or "" when none has it.
std::string sysfs_pmu_with_type(const std::filesystem::path& root, std::uint32_t type) {
  for (const std::string& name : list_names(root)) {
    const auto text = read_line(root / name / "type");
    const auto number = text ? parse_number(*text) : std::nullopt;
    if (number && *number == type) return name;
  }
  return {};
}

}  // namespace

Result<ResolvedEvent> resolve_with_libpfm(const std::string& name, const std::filesystem::path& root) {
  Pfm& lib = pfm();
  if (lib.status != PFM_SUCCESS) {
    return Error{in_quotes(name) + ": libpfm4 did not initialize (" + pfm_strerror(lib.status) +
                 "), so only the kernel's generic events and raw specs resolve"};
  }
  const std::lock_guard<std::mutex> lock(lib.mutex);
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  char* full_name = nullptr;
  pfm_perf_encode_arg_t arg;
  std::memset(&arg, 0, sizeof arg);
  arg.attr = &attr;
  arg.fstr = &full_name;
  arg.size = sizeof arg;
  const int status = pfm_get_os_event_encoding(name.c_str(), PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
  if (status != PFM_SUCCESS) {
    if (status == PFM_ERR_NOTFOUND) return Error{explain_not_found(name, root)};
    if (status == PFM_ERR_ATTR) return Error{explain_bad_attribute(name)};
    return Error{in_quotes(name) + ": libpfm4 cannot encode it: " + pfm_strerror(status)};
  }
  ResolvedEvent r;
  r.name = name;
  // libpfm4 spells out every modifier ("...:SCALAR_DOUBLE:e=0:i=0:u=1:k=0"); the unit masks are
  // the parts without '='.
  std::string_view spelled = full_name != nullptr ? full_name : name.c_str();
  if (const auto sep = spelled.find("::"); sep != std::string_view::npos) {
    r.canonical = std::string(spelled.substr(0, sep + 2));
    spelled.remove_prefix(sep + 2);
  }
  for (bool first = true; !spelled.empty(); first = false) {
    const auto colon = spelled.find(':');
    const std::string_view part = spelled.substr(0, colon);
    if (part.find('=') == std::string_view::npos) r.canonical += (first ? "" : ":") + std::string(part);
    spelled = colon == std::string_view::npos ? std::string_view() : spelled.substr(colon + 1);
  }
  std::free(full_name);
  pfm_event_info_t info;
  std::memset(&info, 0, sizeof info);
  info.size = sizeof info;
  pfm_pmu_info_t pmu;
  std::memset(&pmu, 0, sizeof pmu);
  pmu.size = sizeof pmu;
  if (pfm_get_event_info(arg.idx, PFM_OS_NONE, &info) == PFM_SUCCESS && pfm_get_pmu_info(info.pmu, &pmu) == PFM_SUCCESS) {
    r.pmu = pmu.name != nullptr ? pmu.name : "";
    r.uncore = pmu.type == PFM_PMU_TYPE_UNCORE;
  }
  r.type = attr.type;
  r.config = attr.config;
  r.config1 = attr.config1;
  r.config2 = attr.config2;
  r.exclude_kernel = attr.exclude_kernel != 0;
  r.software = attr.type == PERF_TYPE_SOFTWARE;
  if (r.uncore) {
    const std::string kernel = sysfs_pmu_with_type(root, attr.type);
    if (!kernel.empty()) r.pmu = kernel;
    r.instances.push_back({r.pmu, attr.type});
    r.exclude_kernel = false;
  }
  return r;
}

}  // namespace hwprof::counters::resolver

namespace hwprof::counters {

// The counters stage's API in event_resolver.hpp, on this file's libpfm4 pieces.
bool event_of_another_cpu(const std::string& name) {
  if (name.empty() || name.find('/') != std::string::npos || resolver::resolve_generic(name)) return false;
  resolver::Pfm& lib = resolver::pfm();
  if (lib.status != PFM_SUCCESS) return false;
  const std::lock_guard<std::mutex> lock(lib.mutex);
  const resolver::EventNameParts parts = resolver::split_event_name(name);
  const std::string& pmu_name = parts.pmu;
  const std::string& base = parts.base;
  bool elsewhere = false;
  for (const resolver::PmuDescription& p : resolver::all_pmus()) {
    if (!pmu_name.empty()) {
      if (p.name == pmu_name) return !p.present;
      continue;
    }
    const auto events = resolver::event_names(p);
    if (std::any_of(events.begin(), events.end(), [&](const std::string& e) { return resolver::iequals(e, base); })) {
      if (p.present) return false;  // this CPU has it: the problem is elsewhere (a bad unit mask)
      elsewhere = true;
    }
  }
  // An uncore PMU libpfm4 drops when forced to a core PMU: its name still says where it lives.
  return elsewhere || (!pmu_name.empty() && !resolver::kernel_pmu_guess(pmu_name).empty());
}

std::vector<std::string> detected_pmus() {
  resolver::Pfm& lib = resolver::pfm();
  if (lib.status != PFM_SUCCESS) return {};
  const std::lock_guard<std::mutex> lock(lib.mutex);
  return resolver::present_pmu_names();
}

}  // namespace hwprof::counters
