// HWPROF_REGION with HWPROF_DISABLE_REGIONS defined: it must compile to nothing, leaving the
// session untouched (checked by session_test.cpp, Session.TheMacroCompilesToNothingWhenDisabled).
// tests/CMakeLists.txt defines HWPROF_DISABLE_REGIONS for this file alone and keeps it out of
// unity batches, where a #define here would leak into (or miss) the files compiled with it.
#ifndef HWPROF_DISABLE_REGIONS
#error "compile this file with -DHWPROF_DISABLE_REGIONS (see tests/CMakeLists.txt)"
#endif
#include "hwprof/session.hpp"

namespace hwprof {

int run_disabled_region(Session& session) {
  HWPROF_REGION(session, "disabled");
  return 42;
}

}  // namespace hwprof
