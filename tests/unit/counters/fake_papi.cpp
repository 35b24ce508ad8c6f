#include "fake_papi.hpp"

#include <algorithm>
#include <cstring>

#include <gtest/gtest.h>
#include "common/stages.hpp"

namespace hwprof::counters {
namespace {

FakePapi* fake = nullptr;

PAPI_component_info_t component(const char* name, bool attach, int counters) {
  PAPI_component_info_t info;
  std::memset(&info, 0, sizeof info);
  std::strncpy(info.name, name, sizeof info.name - 1);
  info.attach = attach ? 1 : 0;
  info.inherit = attach ? 1 : 0;
  info.num_cntrs = counters;
  info.num_mpx_cntrs = 32;
  return info;
}

constexpr int kNative = static_cast<int>(PAPI_NATIVE_MASK);

}  // namespace

// The table's functions: each forwards to the installed fake.
struct FakePapiCalls {
  static int library_init(int version) {
    fake->called("PAPI_library_init");
    EXPECT_EQ(version, PAPI_VER_CURRENT);
    fake->initialised_ = fake->library_init_answer == PAPI_VER_CURRENT;
    return fake->library_init_answer;
  }
  static int thread_init(unsigned long (*id_function)()) {
    if (!fake->initialised_) return PAPI_ENOINIT;
    fake->called("PAPI_thread_init");
    fake->thread_id_function = id_function;
    return id_function != nullptr ? PAPI_OK : PAPI_EINVAL;
  }
  static int multiplex_init() {
    if (!fake->initialised_) return PAPI_ENOINIT;
    fake->called("PAPI_multiplex_init");
    return fake->multiplex_init_answer;
  }
  static int get_opt(int option, PAPI_option_t*) {
    if (!fake->initialised_) return PAPI_ENOINIT;
    fake->called("PAPI_get_opt");
    return option == PAPI_LIB_VERSION ? fake->lib_version : PAPI_EINVAL;
  }
  static int set_opt(int option, PAPI_option_t* value) {
    if (!fake->initialised_) return PAPI_ENOINIT;
    fake->called("PAPI_set_opt");
    if (option != PAPI_INHERIT || value == nullptr) return PAPI_EINVAL;
    FakePapi::Eventset* set = fake->find(value->inherit.eventset);
    if (set == nullptr) return PAPI_ENOEVST;
    if (set->component < 0) return PAPI_ENOCMP;
    if (fake->inherit_error != PAPI_OK) return fake->inherit_error;
    set->inherit = value->inherit.inherit;
    return PAPI_OK;
  }
  // Our own texts, so that a test can tell PAPI's words in a message; NULL for a code PAPI has
  // no text for, as PAPI_strerror does.
  static char* strerror(int code) {
    static std::map<int, std::string> texts = {{PAPI_EINVAL, "[fake EINVAL]"},   {PAPI_ESYS, "[fake ESYS]"},       {PAPI_ECMP, "[fake ECMP]"},
                                               {PAPI_ENOEVNT, "[fake ENOEVNT]"}, {PAPI_ECNFLCT, "[fake ECNFLCT]"}, {PAPI_EPERM, "[fake EPERM]"},
                                               {PAPI_ENOCMP, "[fake ENOCMP]"},   {PAPI_ENOSUPP, "[fake ENOSUPP]"}};
    const auto text = texts.find(code);
    return text == texts.end() ? nullptr : text->second.data();
  }
  static int num_components() { return fake->initialised_ ? static_cast<int>(fake->components.size()) : 0; }
  static int get_component_index(const char* name) {
    if (!fake->initialised_) return PAPI_ENOINIT;
    for (std::size_t i = 0; i < fake->components.size(); ++i) {
      if (std::strcmp(fake->components[i].name, name) == 0) return static_cast<int>(i);
    }
    return PAPI_ENOCMP;
  }
  static const PAPI_component_info_t* get_component_info(int index) {
    if (!fake->initialised_ || index < 0 || static_cast<std::size_t>(index) >= fake->components.size()) return nullptr;
    return &fake->components[static_cast<std::size_t>(index)];
  }
  static const FakePapi::Event* event_by_code(int code) {
    for (const auto& [name, event] : fake->events) {
      if (event.code == code) return &event;
    }
    return nullptr;
  }
  static int event_name_to_code(const char* name, int* code) {
    if (!fake->initialised_) return PAPI_ENOINIT;
    fake->called("PAPI_event_name_to_code");
    const auto event = fake->events.find(name);
    if (event == fake->events.end()) return PAPI_ENOEVNT;
    *code = event->second.code;
    return PAPI_OK;
  }
  static int query_event(int code) {
    if (!fake->initialised_) return PAPI_ENOINIT;
    const FakePapi::Event* event = event_by_code(code);
    return event == nullptr ? PAPI_ENOEVNT : event->query_error;
  }
  static int get_event_info(int code, PAPI_event_info_t* info) {
    const FakePapi::Event* event = event_by_code(code);
    if (!fake->initialised_ || event == nullptr) return PAPI_ENOEVNT;
    std::strncpy(info->units, event->units.c_str(), sizeof info->units - 1);
    return PAPI_OK;
  }
  static int get_event_component(int code) {
    const FakePapi::Event* event = event_by_code(code);
    return event == nullptr ? PAPI_ENOEVNT : event->component;
  }
  static int create_eventset(int* eventset) {
    if (!fake->initialised_) return PAPI_ENOINIT;
    fake->called("PAPI_create_eventset");
    if (*eventset != PAPI_NULL) return PAPI_EINVAL;  // PAPI's rule: the handle starts as PAPI_NULL
    *eventset = static_cast<int>(fake->eventsets.size());
    fake->eventsets.emplace_back();
    return PAPI_OK;
  }
  static int assign_eventset_component(int eventset, int index) {
    FakePapi::Eventset* set = fake->find(eventset);
    if (set == nullptr) return PAPI_ENOEVST;
    if (index < 0 || static_cast<std::size_t>(index) >= fake->components.size()) return PAPI_ENOCMP;
    set->component = index;
    return PAPI_OK;
  }
  static int attach(int eventset, unsigned long tid) {
    fake->called("PAPI_attach");
    FakePapi::Eventset* set = fake->find(eventset);
    if (set == nullptr) return PAPI_ENOEVST;
    if (set->component < 0) return PAPI_ENOCMP;
    if (fake->components[static_cast<std::size_t>(set->component)].attach == 0) return PAPI_ECMP;
    if (const auto error = fake->attach_errors.find(static_cast<pid_t>(tid)); error != fake->attach_errors.end()) return error->second;
    set->attached = tid;
    return PAPI_OK;
  }
  static int set_multiplex(int eventset) {
    fake->called("PAPI_set_multiplex");
    FakePapi::Eventset* set = fake->find(eventset);
    if (set == nullptr) return PAPI_ENOEVST;
    if (set->component < 0) return PAPI_ENOCMP;
    if (set->running) return PAPI_EISRUN;
    set->multiplex = true;
    return PAPI_OK;
  }
  static int add_event(int eventset, int code) {
    fake->called("PAPI_add_event");
    FakePapi::Eventset* set = fake->find(eventset);
    const FakePapi::Event* event = event_by_code(code);
    if (set == nullptr) return PAPI_ENOEVST;
    if (set->running) return PAPI_EISRUN;
    if (event == nullptr) return PAPI_ENOEVNT;
    if (set->component < 0) set->component = event->component;
    if (event->component != set->component) return PAPI_ECMP;
    if (event->add_error != PAPI_OK) return event->add_error;
    const PAPI_component_info_t& info = fake->components[static_cast<std::size_t>(set->component)];
    const auto limit = static_cast<std::size_t>(set->multiplex ? info.num_mpx_cntrs : info.num_cntrs);
    if (set->codes.size() >= limit) return PAPI_ECNFLCT;
    if (std::find(set->codes.begin(), set->codes.end(), code) != set->codes.end()) return PAPI_ECNFLCT;
    set->codes.push_back(code);
    return PAPI_OK;
  }
  static int start(int eventset) {
    fake->called("PAPI_start");
    FakePapi::Eventset* set = fake->find(eventset);
    if (set == nullptr) return PAPI_ENOEVST;
    if (set->running) return PAPI_EISRUN;
    if (set->codes.empty()) return PAPI_EINVAL;
    const pid_t tid = fake->thread_of(*set);
    if (const auto error = fake->start_errors.find(tid); error != fake->start_errors.end()) return error->second;
    set->running = true;
    ++set->starts;
    set->at_start.clear();
    for (int code : set->codes) set->at_start.push_back(fake->count(tid, code));
    return PAPI_OK;
  }
  static void values_of(FakePapi::Eventset& set, long long* values) {
    const pid_t tid = fake->thread_of(set);
    for (std::size_t k = 0; k < set.codes.size(); ++k) {
      values[k] = (fake->count(tid, set.codes[k]) - set.at_start[k]) * (set.multiplex ? fake->multiplex_scale : 1);
    }
  }
  static int read(int eventset, long long* values) {
    fake->called("PAPI_read");
    FakePapi::Eventset* set = fake->find(eventset);
    if (set == nullptr) return PAPI_ENOEVST;
    if (!set->running) return PAPI_ENOTRUN;
    const pid_t tid = fake->thread_of(*set);
    if (fake->read_error != PAPI_OK && (fake->read_error_thread == 0 || fake->read_error_thread == tid)) return fake->read_error;
    for (int code : set->codes) fake->counts_[{tid, code}] += fake->read_cost;
    values_of(*set, values);
    return PAPI_OK;
  }
  static int stop(int eventset, long long* values) {
    FakePapi::Eventset* set = fake->find(eventset);
    if (set == nullptr) return PAPI_ENOEVST;
    if (!set->running) return PAPI_ENOTRUN;
    if (values != nullptr) values_of(*set, values);
    set->running = false;
    return PAPI_OK;
  }
  static int cleanup_eventset(int eventset) {
    FakePapi::Eventset* set = fake->find(eventset);
    if (set == nullptr) return PAPI_ENOEVST;
    if (set->running) return PAPI_EISRUN;
    set->codes.clear();
    return PAPI_OK;
  }
  static int destroy_eventset(int* eventset) {
    FakePapi::Eventset* set = fake->find(*eventset);
    if (set == nullptr) return PAPI_ENOEVST;
    if (!set->codes.empty()) return PAPI_EINVAL;  // PAPI's rule: PAPI_cleanup_eventset first
    set->destroyed = true;
    *eventset = PAPI_NULL;
    return PAPI_OK;
  }
  static std::vector<pid_t> task_ids(pid_t pid) {
    const auto listings = fake->listings.find(pid);
    if (listings == fake->listings.end() || listings->second.empty()) return {};
    const std::size_t call = fake->listing_calls_[pid]++;
    return listings->second[std::min(call, listings->second.size() - 1)];
  }
  static bool task_alive(pid_t, pid_t tid) { return fake->ended.count(tid) == 0; }
  static bool hardware_pmu_exposed() { return fake->hardware_pmu; }
  static std::uint64_t monotonic_ns() noexcept { return fake->clock_ns; }

  static PapiCalls table() {
    PapiCalls calls;
    calls.library_init = library_init;
    calls.thread_init = thread_init;
    calls.multiplex_init = multiplex_init;
    calls.get_opt = get_opt;
    calls.set_opt = set_opt;
    calls.strerror = strerror;
    calls.num_components = num_components;
    calls.get_component_index = get_component_index;
    calls.get_component_info = get_component_info;
    calls.event_name_to_code = event_name_to_code;
    calls.query_event = query_event;
    calls.get_event_info = get_event_info;
    calls.get_event_component = get_event_component;
    calls.create_eventset = create_eventset;
    calls.assign_eventset_component = assign_eventset_component;
    calls.attach = attach;
    calls.set_multiplex = set_multiplex;
    calls.add_event = add_event;
    calls.start = start;
    calls.read = read;
    calls.stop = stop;
    calls.cleanup_eventset = cleanup_eventset;
    calls.destroy_eventset = destroy_eventset;
    calls.task_ids = task_ids;
    calls.task_alive = task_alive;
    calls.hardware_pmu_exposed = hardware_pmu_exposed;
    calls.monotonic_ns = monotonic_ns;
    return calls;
  }
};

FakePapi::FakePapi() : scope_(FakePapiCalls::table()) {
  EXPECT_EQ(fake, nullptr) << "one FakePapi at a time";
  fake = this;
  components = {component("perf_event", true, 2), component("perf_event_uncore", true, 4), component("powercap", false, 8)};
  events = {
      {"PAPI_TOT_CYC", {PAPI_TOT_CYC, kPerfEvent, ""}},
      {"PAPI_TOT_INS", {PAPI_TOT_INS, kPerfEvent, ""}},
      {"PAPI_FP_OPS", {PAPI_FP_OPS, kPerfEvent, "", PAPI_ENOEVNT}},
      {"perf::TASK-CLOCK", {kNative | 1, kPerfEvent, ""}},
      {"perf::PAGE-FAULTS", {kNative | 2, kPerfEvent, ""}},
      {"perf::CYCLES", {kNative | 3, kPerfEvent, ""}},
      {"perf_event_uncore::CAS_COUNT_READ", {kNative | 16, kUncore, ""}},
      {"powercap:::ENERGY_UJ:ZONE0", {kNative | 32, kPowercap, "uJ"}},
  };
}

FakePapi::~FakePapi() {
  fake = nullptr;
}

void FakePapi::called(const char* name) {
  if (calls[name]++ == 0) order.emplace_back(name);
}

FakePapi::Eventset* FakePapi::find(int handle) {
  if (!initialised_ || handle < 0 || static_cast<std::size_t>(handle) >= eventsets.size()) return nullptr;
  Eventset& set = eventsets[static_cast<std::size_t>(handle)];
  return set.destroyed ? nullptr : &set;
}

int FakePapi::live_eventsets() const {
  return static_cast<int>(std::count_if(eventsets.begin(), eventsets.end(), [](const Eventset& set) { return !set.destroyed; }));
}

std::vector<const FakePapi::Eventset*> FakePapi::running_eventsets() const {
  std::vector<const Eventset*> running;
  for (const Eventset& set : eventsets) {
    if (set.running && !set.destroyed) running.push_back(&set);
  }
  return running;
}

}  // namespace hwprof::counters
