#include "cli/arguments.hpp"

#include "cli/data_lookup.hpp"

#include <string>

#include <CLI/CLI.hpp>

namespace hwprof::cli {

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

Result<Graph> load_model_argument(const std::string& model, const std::string& input_shape) {
  auto path = resolve_model(model);
  if (!path) return path.error();
  auto graph = load_model(*path);
  if (!graph || input_shape.empty()) return graph;
  auto shape = parse_shape_argument(input_shape);
  if (!shape) return shape.error();
  return with_input_shape(*graph, *shape);
}

}  // namespace hwprof::cli
