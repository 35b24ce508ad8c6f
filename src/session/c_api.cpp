// The C API of <hwprof/regions.h>: the default session, regions by name.
#include <string>

#include "hwprof/regions.h"
#include "hwprof/regions.hpp"
#include "session/default_output.hpp"

namespace {
thread_local std::string last_error;

// The default session's state and the id of the region called `name`; state nullptr when
// there is nothing to measure (no name, or regions disabled).
struct Named {
  hwprof::Session::State* state = nullptr;
  int id = -1;
};
Named named(const char* name) noexcept {
  hwprof::Session::State* state = name != nullptr ? hwprof::detail::default_state() : nullptr;
  return state != nullptr ? Named{state, hwprof::Session::named_region(state, name)} : Named{};
}
}  // namespace

extern "C" {

void hwprof_begin(const char* name) {
  if (const Named r = named(name); r.state != nullptr) hwprof::Session::enter(r.state, r.id);
}

void hwprof_end(const char* name) {
  if (const Named r = named(name); r.state != nullptr) hwprof::Session::leave(r.state, r.id);
}

void hwprof_set_work(const char* name, double flops, double bytes) {
  if (const Named r = named(name); r.state != nullptr) hwprof::Session::set_work(r.state, r.id, flops, bytes);
}

int hwprof_write(const char* dir) {
  try {
    last_error.clear();
    if (dir == nullptr || *dir == '\0') {
      last_error = "hwprof_write: no folder given";
      return -1;
    }
    if (const auto error = hwprof::write_session_report(hwprof::default_session(), dir)) {
      last_error = error->message;
      return -1;
    }
    return 0;
  } catch (const std::exception& e) {
    last_error = e.what();
    return -1;
  }
}

int hwprof_write_output(void) {
  return hwprof::session::write_default_output();
}

const char* hwprof_last_error(void) {
  return last_error.c_str();
}

int hwprof_enabled(void) {
  return hwprof::regions_enabled() ? 1 : 0;
}

void hwprof_reset(void) {
  if (hwprof::regions_enabled()) hwprof::default_session().reset();
}

}  // extern "C"
