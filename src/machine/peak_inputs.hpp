// The inputs of the theoretical peak besides the ISA (peak.cpp in src/calibrate/ makes the
// peak of them): the frequency and where it came from, the number of physical cores, and the
// names of the transcendental ceilings a calibration measures. What a stored calibration is
// read and checked with, so apart from the measurements (src/calibrate/compute.hpp).
#pragma once

#include <string>
#include "common/stages.hpp"

namespace hwprof::machine {

// The CPU's nominal (or maximum) frequency in GHz and where it came from ("cpuinfo_max_freq",
// "brand string", "/proc/cpuinfo cpu MHz"); 0 with source "unknown" when nothing says.
double nominal_ghz(std::string* source);

// nominal_ghz() from given inputs, so tests need no particular machine: a sysfs cpufreq
// directory (cpuinfo_max_freq in kHz), a /proc/cpuinfo path and a CPUID brand string. Under
// a hypervisor "cpu MHz" is usually the TSC rate, not the turbo clock.
double nominal_ghz_from(const std::string& cpufreq_dir, const std::string& proc_cpuinfo, const std::string& brand, std::string* source);

// Physical cores among the online CPUs (topology.hpp's cpus_one_per_core, counted).
int physical_cores();
int physical_cores_from(const std::string& sysfs_cpu_dir);

// The transcendental kernels' ceilings in a calibration, by name (src/calibrate/compute.hpp,
// measure_transcendentals).
inline constexpr const char* kTranscendentalCeilings[] = {"tanh_sp", "exp_sp", "erf_sp"};

}  // namespace hwprof::machine
