// Sampled call stacks in the formats people already read them in (docs/sampling.md,
// "Outputs"): folded stacks (one line per distinct stack, "root;...;leaf count", the format
// Brendan Gregg's flamegraph.pl and inferno read), speedscope's sampled-profile JSON, and a
// flame graph as SVG (a frame as wide as its share of the samples, its callers below it).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>
#include "common/stages.hpp"

namespace hwprof::report {

// One distinct stack and how many samples had it. Frames are indices into a names table,
// outermost (root) first: a region's name, then the functions from the outermost caller to the
// leaf where the sample landed.
struct SampledStack {
  std::vector<int> frames;
  std::uint64_t samples = 0;
};

// "a;b;c 12\n" per stack with samples, in the order given. A ';' or a line break in a name
// would split it: each becomes '_' (and an empty name "[unknown]").
std::string folded_stacks(const std::vector<std::string>& names, const std::vector<SampledStack>& stacks);

// speedscope's file format (https://www.speedscope.app/file-format-schema.json): one "sampled"
// profile named `title`, the names as shared frames, each stack a sample weighted by its count.
std::string speedscope_json(std::string_view title, const std::vector<std::string>& names, const std::vector<SampledStack>& stacks);

// A flame graph of `width` pixels: the root frames along the bottom, each frame's callees
// above it, widths in proportion to samples, a tooltip (<title>) with the name, the samples
// and the share; frames narrower than a pixel are merged into their parent's width. Colours are
// a warm palette chosen by the name's hash, so a function keeps its colour from one graph to
// the next. `standalone`: the namespace a file needs (false inside HTML).
std::string flamegraph_svg(std::string_view title, const std::vector<std::string>& names, const std::vector<SampledStack>& stacks, double width,
                           bool standalone);

}  // namespace hwprof::report
