// HWPROF_REGION with HWPROF_DISABLE_REGIONS defined: it must compile to nothing, leaving the
// session untouched (checked by session_test.cpp, Session.TheMacroCompilesToNothingWhenDisabled).
#define HWPROF_DISABLE_REGIONS
#include "hwprof/session.hpp"

namespace hwprof {

int run_disabled_region(Session& session) {
  HWPROF_REGION(session, "disabled");
  return 42;
}

}  // namespace hwprof
