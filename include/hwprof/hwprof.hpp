// hwprof: what each layer of a neural network should cost, and (later issues) what it did
// cost on this machine. One include for the whole public API.
#pragma once

#include "hwprof/cost.hpp"
#include "hwprof/graph.hpp"
#include "hwprof/report.hpp"
#include "hwprof/result.hpp"
#include "hwprof/version.hpp"
