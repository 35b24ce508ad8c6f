// A profile's sampling (hwprof profile --sample; docs/sampling.md) as the reports show it: the
// table's section of where inside each layer the time went, its JSON object, and its stacks for
// the flame graph, folded-stacks and speedscope files.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/stages.hpp"
#include "hwprof/engine/profile.hpp"
#include "report/flamegraph.hpp"

namespace hwprof::report {

// "Where inside the layers the time went": the layers with the most samples (at most `rows`),
// each with its leading functions, share and 95 % interval; the row outside every layer; the
// losses and the measured cost of sampling. Empty without sampling.
std::string sampling_section(const Profile& p, std::size_t rows);

nlohmann::ordered_json sampling_json(const SamplingProfile& s);

// The profile's distinct stacks, as the flame graph and the folded/speedscope writers take them.
std::vector<SampledStack> sampled_stacks(const SamplingProfile& s);

}  // namespace hwprof::report
