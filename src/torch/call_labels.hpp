// How a call's inputs are written in a report: its shapes ("16x64x256, 1000x256, 1000"), and
// where two calls on the same shapes cost differently (a stride-1 and a stride-2 depthwise
// convolution on one input), its other inputs as well ("... {(2, 2), (1, 1), (1, 1), 144}"), so
// that no two variants of an op share a label. No libtorch: tested on made-up calls.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <unordered_map>

#include "common/stages.hpp"
#include "torch/aten_cost.hpp"

namespace hwprof::pytorch {

// "16x64x256, 1000x256, 1000"; a tensor list as "3 tensors: 32x16x64"; a 0-d tensor "()".
std::string shapes_of(const AtenCall& call);
// The call's other inputs (ints, int lists, numbers, flags): "{(2, 2), (1, 1), (1, 1), 144}".
std::string scalars_of(const AtenCall& call);

// Labels for the variants of ops: an op's shapes, with its scalars added where the same op on
// the same shapes was seen at another cost. Keeps at most kMaxCosts labels' costs; past them,
// labels are shapes only.
class VariantLabels {
 public:
  static constexpr std::size_t kMaxCosts = std::size_t{1} << 16;
  // `cost`: the call's, nullptr where it has none.
  std::string label(const AtenCall& call, const AtenCost* cost);

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, std::pair<double, double>> cost_of_;  // "op|shapes" → (flops, bytes)
};

}  // namespace hwprof::pytorch
