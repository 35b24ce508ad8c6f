// An optimizer's name and its parsing (hwprof/engine/optimizer.hpp): with the ops, apart from the
// cost model, since the reports name the optimizer a profile was made with and the report
// module links no cost model.
#include <optional>
#include <string_view>

#include "hwprof/engine/optimizer.hpp"

namespace hwprof {

std::string_view optimizer_name(OptimizerKind optimizer) noexcept {
  switch (optimizer) {
    case OptimizerKind::sgd:
      return "sgd";
    case OptimizerKind::momentum:
      return "momentum";
    case OptimizerKind::adam:
      return "adam";
  }
  return "?";
}

std::optional<OptimizerKind> parse_optimizer(std::string_view name) noexcept {
  if (name == "sgd") return OptimizerKind::sgd;
  if (name == "momentum") return OptimizerKind::momentum;
  if (name == "adam") return OptimizerKind::adam;
  return std::nullopt;
}

}  // namespace hwprof
