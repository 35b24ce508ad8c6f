// detect_cpu() on given CPUID answers, so identities of processors we don't have can be tested.
#pragma once

#include "common/cpuid.hpp"
#include "common/stages.hpp"
#include "hwprof/cpu.hpp"

namespace hwprof::counters {

CpuIdentity identity_from_cpuid(const CpuidFn& cpuid);

}  // namespace hwprof::counters
