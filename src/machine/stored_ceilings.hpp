// Ceilings that are already on disk: a named machine report, else this machine's stored one.
// No calibration is run here, so the report module (which links no calibration kernel, no
// OpenBLAS and no OpenMP; docs/design.md, "The libraries and the module") can use it;
// find_ceilings (ceilings.cpp) adds the quick calibration on top.
#pragma once

#include <string>

#include "common/stages.hpp"
#include "hwprof/engine/machine.hpp"

namespace hwprof::machine {

// `file` when not empty (refused when it was measured on another CPU), else the stored report
// of this host and CPU; the error says what is missing and how to make it.
Result<Ceilings> find_stored_ceilings(const std::string& file);

// The stored report of `host` and `here`, found at `stored`.
Result<Ceilings> ceilings_from_store(const std::string& stored, const std::string& host, const MachineCpu& here);

}  // namespace hwprof::machine
