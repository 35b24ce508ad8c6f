// A profile's sampling (docs/sampling.md, "Outputs") in the files people already use: a CSV of
// each layer's top functions, and the HTML report's section with the flame graph and its layer
// selector. The Chrome trace's sample instants are written by trace.cpp.
#pragma once

#include <string>
#include <string_view>

#include "common/stages.hpp"
#include "hwprof/engine/profile.hpp"

namespace hwprof::report {

// layer,layer_samples,enough,function,module,samples,share,share_low,share_high: one row per
// (layer, listed function) and one "[other functions]" row per layer; fields quoted as RFC 4180
// says. Only the header without sampling.
std::string sampling_csv(const Profile& p);

// The report's "Where inside the layers" section: the stacks as data-* attributes, a <select> of
// the layers with samples and each layer's top-functions table (hidden but the chosen one).
// Empty without sampling.
std::string sampling_html_section(const Profile& p);

// The section's script: draws the flame graph of the chosen layer (all layers at first) as SVG
// from the data-* attributes; plain DOM, no library, nothing parsed as HTML.
std::string_view sampling_html_script();

}  // namespace hwprof::report
