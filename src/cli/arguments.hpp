// Command-line values that several subcommands parse the same way.
#pragma once

#include <string>

#include "hwprof/graph.hpp"
#include "hwprof/result.hpp"

namespace CLI {
class Validator;
}

namespace hwprof::cli {

// A per-sample shape written "3,224,224", "3x224x224" or "[3, 224, 224]".
Result<Shape> parse_shape_argument(const std::string& text);
// A MODEL argument (a spec file or a built-in model's name) loaded, with --input-shape's
// per-sample shape when one is given (empty: the spec's).
Result<Graph> load_model_argument(const std::string& model, const std::string& input_shape);

// An integer from 1 to 10^18, checked as text: CLI11 2.1 saturates out-of-range integers
// silently, so the check runs before it converts.
CLI::Validator positive_integer();

}  // namespace hwprof::cli
