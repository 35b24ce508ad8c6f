// The PAPI backend (PAPI 7, Debian libpapi-dev): presets (PAPI_TOT_CYC) and native names
// (perf::TASK-CLOCK), multiplexing, and every thread of the process.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/stages.hpp"
#include "hwprof/counters.hpp"

namespace hwprof::counters {

std::unique_ptr<CounterSet> open_papi(const CounterOptions& options);
// "7.0.0.0", or "" when PAPI cannot initialise (the reason in `why`).
std::string papi_version(std::string* why = nullptr);

struct PapiComponent {
  std::string name;  // "perf_event", "perf_event_uncore", ...
  bool enabled = false;
  std::string reason;  // PAPI's disabled_reason
};
std::vector<PapiComponent> papi_components();

}  // namespace hwprof::counters
