// Command-line values that several subcommands parse the same way.
#pragma once

#include <string>
#include <vector>

#include "common/stages.hpp"
#include "hwprof/engine/graph.hpp"
#include "hwprof/engine/optimizer.hpp"
#include "hwprof/result.hpp"

namespace CLI {
class App;
class Validator;
}  // namespace CLI

namespace hwprof::cli {

// A per-sample shape written "3,224,224", "3x224x224" or "[3, 224, 224]".
Result<Shape> parse_shape_argument(const std::string& text);
// A MODEL argument (a spec file or a built-in model's name) loaded, with --input-shape's
// per-sample shape when one is given (empty: the spec's).
Result<Graph> load_model_argument(const std::string& model, const std::string& input_shape, const LoadOptions& options = {});

// The MODEL positional of summary, bench, profile and run: an ONNX file, a spec or a built-in name.
void add_model_argument(CLI::App& sub, std::string& model);

// An integer from 1 to 10^18, checked as text: CLI11 2.1 saturates out-of-range integers
// silently, so the check runs before it converts.
CLI::Validator positive_integer();
// A file name given on the command line (-o, --svg, --calibration, ...): not empty. An empty
// -o would otherwise mean "standard output" without saying so.
CLI::Validator file_name();
// A finite number within [min, max] (CLI11's Range lets NaN through: every comparison is false).
CLI::Validator finite_range(double min, double max);
// An unsigned 64-bit integer written in decimal digits (CLI11 would wrap "-1" to 2^64 - 1).
CLI::Validator unsigned_integer();
// --input-shape's text (parse_shape_argument): a malformed shape is a command-line error (exit
// 2); a well-formed one the model cannot take is the model's (exit 1, naming the layer).
CLI::Validator shape_text();
// The events of every -e given, each split with split_event_list (a raw event's own commas
// stay); an error when -e was given but names no event.
Result<std::vector<std::string>> event_arguments(const std::vector<std::string>& raw);

// --optimizer of bench and profile: "adam", or "sgd", which is SGD with momentum 0.9 (what
// torch.optim users train with) and so OptimizerKind::momentum.
OptimizerKind optimizer_argument(const std::string& name);

}  // namespace hwprof::cli
