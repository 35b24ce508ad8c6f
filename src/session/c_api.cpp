// The C API of <hwprof/regions.h>: the default session, regions by name.
#include <string>

#include "hwprof/regions.h"
#include "hwprof/regions.hpp"

namespace {
thread_local std::string last_error;
}  // namespace

extern "C" {

void hwprof_begin(const char* name) {
  if (name == nullptr) return;
  hwprof::Session::State* state = hwprof::detail::default_state();
  if (state == nullptr) return;
  hwprof::Session::enter(state, hwprof::Session::named_region(state, name));
}

void hwprof_end(const char* name) {
  if (name == nullptr) return;
  hwprof::Session::State* state = hwprof::detail::default_state();
  if (state == nullptr) return;
  hwprof::Session::leave(state, hwprof::Session::named_region(state, name));
}

void hwprof_set_work(const char* name, double flops, double bytes) {
  if (name == nullptr) return;
  hwprof::Session::State* state = hwprof::detail::default_state();
  if (state == nullptr) return;
  hwprof::Session::set_work(state, hwprof::Session::named_region(state, name), flops, bytes);
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

const char* hwprof_last_error(void) { return last_error.c_str(); }

int hwprof_enabled(void) { return hwprof::regions_enabled() ? 1 : 0; }

}  // extern "C"
