#include "torch/call_labels.hpp"

#include <fmt/format.h>
#include "common/stages.hpp"

namespace hwprof::pytorch {

std::string shapes_of(const AtenCall& call) {
  std::string out;
  for (std::size_t i = 0; i < call.arg_count; ++i) {
    const AtenArg& a = call.args[i];
    if (a.kind != AtenArgKind::tensor && a.kind != AtenArgKind::tensors) continue;
    out += out.empty() ? "" : ", ";
    if (a.kind == AtenArgKind::tensors) out += std::to_string(a.count) + " tensors: ";
    for (std::size_t d = 0; d < a.rank; ++d) out += (d > 0 ? "x" : "") + std::to_string(a.dims[d]);
    if (a.rank == 0) out += "()";
  }
  return out;
}

std::string scalars_of(const AtenCall& call) {
  std::string out;
  for (std::size_t i = 0; i < call.arg_count; ++i) {
    const AtenArg& a = call.args[i];
    std::string item;
    switch (a.kind) {
      case AtenArgKind::integer:
        item = std::to_string(a.integer);
        break;
      case AtenArgKind::boolean:
        item = a.integer != 0 ? "True" : "False";
        break;
      case AtenArgKind::real:
        item = fmt::format("{:g}", a.real);
        break;
      case AtenArgKind::ints:
        item = "(";
        for (std::size_t d = 0; d < a.rank; ++d) item += (d > 0 ? ", " : "") + std::to_string(a.dims[d]);
        item += ")";
        break;
      default:
        continue;
    }
    out += (out.empty() ? "" : ", ") + item;
  }
  return "{" + out + "}";
}

std::string VariantLabels::label(const AtenCall& call, const AtenCost* cost) {
  std::string shapes = shapes_of(call);
  if (shapes.empty()) shapes = "no tensor";
  const std::pair<double, double> mine = cost != nullptr ? std::pair{cost->flops, cost->bytes} : std::pair{-1.0, -1.0};
  const std::lock_guard<std::mutex> lock(mutex_);
  std::string key = std::string(call.op) + "|" + shapes;
  const auto it = cost_of_.find(key);
  if (it == cost_of_.end()) {
    if (cost_of_.size() < kMaxCosts) cost_of_.emplace(std::move(key), mine);
    return shapes;
  }
  return it->second == mine ? shapes : shapes + " " + scalars_of(call);
}

}  // namespace hwprof::pytorch
