// The samples of a regions program (HWPROF_SAMPLE: the regions library, the PyTorch
// observer) joined with its regions: each region a row, named as the snapshot names it, its
// `layer` the region's id (LayerProfile::index of the regions' profile); the cost of sampling
// from the sampled and unsampled windows (docs/sampling.md).
#pragma once

#include "common/stages.hpp"
#include "hwprof/engine/profile.hpp"
#include "hwprof/session.hpp"
#include "session/session_sampling.hpp"

namespace hwprof::placement {

SamplingProfile sampled_regions(const SessionSnapshot& snapshot, const SessionSamples& samples);

}  // namespace hwprof::placement
