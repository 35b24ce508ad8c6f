// hwprof: what each layer of a neural network should cost, and what it did cost on this
// machine. One include for the whole public C++ API except <hwprof/regions.hpp> (and its C
// half, regions.h): a program includes that itself where it marks regions, since it registers
// the report module before main (docs/regions.md).
#pragma once

#include "hwprof/atomic_file.hpp"
#include "hwprof/compute_roof.hpp"
#include "hwprof/counters.hpp"
#include "hwprof/cpu.hpp"
#include "hwprof/engine/cost.hpp"
#include "hwprof/engine/executor.hpp"
#include "hwprof/engine/graph.hpp"
#include "hwprof/engine/machine.hpp"
#include "hwprof/engine/optimizer.hpp"
#include "hwprof/engine/profile.hpp"
#include "hwprof/engine/profiler.hpp"
#include "hwprof/engine/report.hpp"
#include "hwprof/engine/roofline.hpp"
#include "hwprof/engine/tensor.hpp"
#include "hwprof/event_group.hpp"
#include "hwprof/export.hpp"
#include "hwprof/result.hpp"
#include "hwprof/session.hpp"
#include "hwprof/source_text.hpp"
#include "hwprof/statistics.hpp"
#include "hwprof/version.hpp"
