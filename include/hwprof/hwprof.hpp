// hwprof: what each layer of a neural network should cost, and what it did cost on this
// machine. One include for the whole public C++ API except <hwprof/regions.hpp> (and its C
// half, regions.h): a program includes that itself where it marks regions, since it registers
// the report module before main (docs/regions.md).
#pragma once

#include "hwprof/atomic_file.hpp"
#include "hwprof/compute_roof.hpp"
#include "hwprof/cost.hpp"
#include "hwprof/counters.hpp"
#include "hwprof/cpu.hpp"
#include "hwprof/event_group.hpp"
#include "hwprof/executor.hpp"
#include "hwprof/export.hpp"
#include "hwprof/graph.hpp"
#include "hwprof/machine.hpp"
#include "hwprof/optimizer.hpp"
#include "hwprof/profile.hpp"
#include "hwprof/profiler.hpp"
#include "hwprof/report.hpp"
#include "hwprof/result.hpp"
#include "hwprof/roofline.hpp"
#include "hwprof/session.hpp"
#include "hwprof/source_text.hpp"
#include "hwprof/statistics.hpp"
#include "hwprof/tensor.hpp"
#include "hwprof/version.hpp"
