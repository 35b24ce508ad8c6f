#include "cli/arguments.hpp"

#include "cli/data_lookup.hpp"
#include "hwprof/counters.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <CLI/CLI.hpp>
#include "common/stages.hpp"

namespace hwprof::cli {

OptimizerKind optimizer_argument(const std::string& name) {
  return name == "adam" ? OptimizerKind::adam : OptimizerKind::momentum;
}
namespace {

std::string fmt_number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

}  // namespace

Result<Shape> parse_shape_argument(const std::string& text) {
  Shape shape;
  std::string digits;
  auto flush = [&]() -> bool {
    if (digits.empty()) return false;
    if (digits.size() > 18) return false;
    shape.push_back(std::stoll(digits));
    digits.clear();
    return true;
  };
  std::string body = text;
  if (!body.empty() && body.front() == '[' && body.back() == ']') body = body.substr(1, body.size() - 2);
  for (char c : body) {
    if (c >= '0' && c <= '9') {
      digits += c;
    } else if (c == ',' || c == 'x' || c == 'X') {
      if (!flush()) return Error{"--input-shape '" + text + "': expected positive sizes separated by ',' or 'x', e.g. 3,224,224"};
    } else if (c != ' ') {
      return Error{"--input-shape '" + text + "': unexpected character '" + std::string(1, c) + "'; expected e.g. 3,224,224"};
    }
  }
  if (!flush()) return Error{"--input-shape '" + text + "': expected positive sizes separated by ',' or 'x', e.g. 3,224,224"};
  return shape;
}

CLI::Validator positive_integer() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
        if (!digits) return "expected a positive integer, got '" + text + "'";
        if (text.size() > 18 || std::stoll(text) < 1) return "expected an integer from 1 to 10^18, got " + text;
        return {};
      },
      "POSITIVE");
}

void add_model_argument(CLI::App& sub, std::string& model) {
  sub.add_option("model", model, "ONNX file, model spec file or built-in model name (e.g. resnet18)")->required();
}

CLI::Validator file_name() {
  return CLI::Validator([](std::string& text) -> std::string { return text.empty() ? "expected a file name, got an empty string" : std::string(); },
                        "FILE");
}

CLI::Validator finite_range(double min, double max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        char* end = nullptr;
        errno = 0;
        const double value = std::strtod(text.c_str(), &end);
        if (text.empty() || end == text.c_str() || *end != '\0' || errno == ERANGE || !std::isfinite(value)) {
          return "expected a finite number, got '" + text + "'";
        }
        if (value < min || value > max) return "expected a number from " + fmt_number(min) + " to " + fmt_number(max) + ", got " + text;
        return {};
      },
      "NUMBER in [" + fmt_number(min) + ", " + fmt_number(max) + "]");
}

CLI::Validator unsigned_integer() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const bool digits = !text.empty() && text.size() <= 20 && text.find_first_not_of("0123456789") == std::string::npos;
        if (!digits || (text.size() == 20 && text > "18446744073709551615")) {
          return "expected an integer from 0 to 18446744073709551615, got '" + text + "'";
        }
        return {};
      },
      "UINT");
}

CLI::Validator shape_text() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        auto shape = parse_shape_argument(text);
        if (shape) return {};
        // CLI11 puts the option's name first; the message's own "--input-shape 'TEXT': " goes.
        const std::string& message = shape.error().message;
        const std::size_t colon = message.find("': ");
        return colon == std::string::npos ? message : message.substr(colon + 3);
      },
      "SHAPE");
}

Result<std::vector<std::string>> event_arguments(const std::vector<std::string>& raw) {
  std::vector<std::string> names;
  for (const std::string& list : raw) {
    for (std::string& name : split_event_list(list)) names.push_back(std::move(name));
  }
  if (!raw.empty() && names.empty()) return Error{"-e: no event named; give e.g. -e task-clock,page-faults"};
  return names;
}

Result<Graph> load_model_argument(const std::string& model, const std::string& input_shape, const LoadOptions& options) {
  auto path = resolve_model(model);
  if (!path) return path.error();
  auto graph = load_model(*path, options);
  if (!graph || input_shape.empty()) return graph;
  auto shape = parse_shape_argument(input_shape);
  if (!shape) return shape.error();
  return with_input_shape(*graph, *shape);
}

}  // namespace hwprof::cli
