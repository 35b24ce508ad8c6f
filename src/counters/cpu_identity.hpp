// detect_cpu() on given CPUID answers, so identities of processors we don't have can be tested.
#pragma once

#include "common/cpuid.hpp"
#include "hwprof/cpu.hpp"

namespace hwprof::detail {

CpuIdentity identity_from_cpuid(const CpuidFn& cpuid);

}  // namespace hwprof::detail
