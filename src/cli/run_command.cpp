#include "cli/run_command.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <limits>
#include <new>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/arguments.hpp"
#include "cli/data_lookup.hpp"
#include "cli/output.hpp"
#include "common/input_file.hpp"
#include "common/npy.hpp"
#include "hwprof/executor.hpp"
#include "hwprof/graph.hpp"
#include "hwprof/tensor.hpp"

namespace hwprof::cli {
namespace {

constexpr const char* kRunDescription = R"(One forward pass (evaluation mode) of MODEL on hwprof's own kernels, on the input given
as a NumPy .npy file (float32 for images and features; int64 or int32 for token ids), and
the output written as .npy (float32): compare it with your framework's output for the same
input. An ONNX model runs with its own weights (its initializers); a JSON spec with
PyTorch's default initialisation, seeded.

The input's first axis is the batch; its other axes are the per-sample shape, which need
not be the model's (a fully convolutional model takes another image size). Without --input
a synthetic batch is used (images N(0, 1), token ids uniform; --batch, --seed).

MODEL is an .onnx file, a spec (.json) or the name of a built-in model (see models/).)";

constexpr std::size_t kMaxNpyBytes = std::size_t{4} << 30;

struct OutputStats {
  double min = 0, max = 0, mean = 0, std = 0;
  std::int64_t non_finite = 0;
  std::vector<std::int64_t> argmax;  // per sample, when the output is [batch, classes]
};

OutputStats stats_of(const Tensor& y) {
  OutputStats s;
  const std::int64_t n = y.numel();
  const float* p = y.f32();
  double sum = 0, sum2 = 0;
  s.min = std::numeric_limits<double>::infinity();
  s.max = -s.min;
  std::int64_t finite = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double v = p[i];
    if (!std::isfinite(v)) {
      ++s.non_finite;
      continue;
    }
    ++finite;
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
    sum += v;
    sum2 += v * v;
  }
  if (finite > 0) {
    s.mean = sum / static_cast<double>(finite);
    s.std = std::sqrt(std::max(0.0, sum2 / static_cast<double>(finite) - s.mean * s.mean));
  } else {
    s.min = s.max = std::nan("");
  }
  if (y.shape().size() == 2) {
    const std::int64_t rows = y.dim(0), cols = y.dim(1);
    for (std::int64_t r = 0; r < rows && r < 16; ++r) {
      s.argmax.push_back(std::max_element(p + r * cols, p + (r + 1) * cols) - (p + r * cols));
    }
  }
  return s;
}

}  // namespace

std::shared_ptr<RunCommandOptions> setup_run(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<RunCommandOptions>();
  CLI::App* sub = app.add_subcommand("run", "One forward pass on an input .npy, the output written as .npy (check against your framework)");
  sub->description(kRunDescription);
  add_model_argument(*sub, options->model);
  sub->add_option("-i,--input", options->input, "Input tensor, NumPy .npy: [batch, ...] float32, or int64/int32 token ids")->check(file_name());
  sub->add_option("-o,--output", options->output, "Write the model's output to FILE as NumPy .npy (float32, atomically)")->check(file_name());
  sub->add_option("-b,--batch", options->batch, "Batch of the synthetic input (without --input)")->check(positive_integer())->capture_default_str();
  sub->add_option("--input-shape", options->input_shape, "Per-sample shape of the synthetic input instead of the model's, e.g. 3,160,160")
      ->check(shape_text());
  sub->add_option("-t,--threads", options->threads, "Kernel threads (OpenMP and OpenBLAS); 0: one per online CPU")
      ->check(CLI::Range(0, 4096))
      ->capture_default_str();
  sub->add_option("--seed", options->seed, "Seed of the synthetic input and of parameters the model file does not give")
      ->check(unsigned_integer())
      ->capture_default_str();
  sub->add_option("-f,--format", options->format, "Format of what is printed about the output")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  sub->callback([options, &exit_code]() { exit_code = run_run(*options); });
  return options;
}

namespace {

// The input: an .npy file (which gives the batch and the per-sample shape), or none (the
// synthetic input of --batch and --input-shape). `input_shape` gets the per-sample shape.
Result<std::optional<Tensor>> given_input(const RunCommandOptions& options, std::string& input_shape) {
  input_shape = options.input_shape;
  if (options.input.empty()) return std::optional<Tensor>();
  if (!options.input_shape.empty() || options.batch != 1) {
    return Error{"--input gives the batch and the shape; --batch and --input-shape are for the synthetic input only"};
  }
  auto bytes = detail::read_input_file(options.input, ".npy input", kMaxNpyBytes);
  if (!bytes) return bytes.error();
  auto array = detail::parse_npy(*bytes, options.input);
  if (!array) return array.error();
  Result<Tensor> tensor = Error{};
  try {
    tensor = detail::npy_to_tensor(*array, options.input);
  } catch (const std::bad_alloc&) {
    return Error{options.input + ": out of memory for the input tensor"};
  }
  if (!tensor) return tensor.error();
  const Shape per_sample(tensor->shape().begin() + 1, tensor->shape().end());
  input_shape = format_shape(per_sample);
  return std::optional<Tensor>(std::move(*tensor));
}

// The model, at the input's per-sample shape, checked to take the input's type.
Result<Graph> model_for(const RunCommandOptions& options, const std::optional<Tensor>& given, const std::string& input_shape) {
  auto graph = load_model_argument(options.model, {});
  if (!graph) return graph.error();
  if (given && given->dtype() != graph->input.dtype) {
    return Error{options.input + ": the array holds " + std::string(given->dtype() == DType::f32 ? "float32 values" : "integers") + "; model '" +
                 graph->name + "' takes " +
                 std::string(graph->input.dtype == DType::f32 ? "float32 (save x.astype(np.float32))" : "token ids (int64 or int32)")};
  }
  if (input_shape.empty()) return graph;
  auto shape = parse_shape_argument(input_shape);
  if (!shape) return shape.error();
  if (*shape == graph->input.shape) return graph;
  auto reshaped = with_input_shape(*graph, *shape);
  if (!reshaped) {
    return Error{(options.input.empty() ? std::string("--input-shape") : options.input) + ": per-sample shape " + format_shape(*shape) +
                 " does not fit model '" + graph->name + "' (it takes " + format_shape(graph->input.shape) + "): " + reshaped.error().message};
  }
  return reshaped;
}

// What one forward pass gave, for the report.
struct RunResult {
  const Graph& graph;
  const Tensor& input;
  const Tensor& output;
  int threads;
  double ms;
  std::size_t given_weights;  // tensors the model file gave
};

void print_run_json(const RunCommandOptions& options, const RunResult& r) {
  const OutputStats s = stats_of(r.output);
  nlohmann::ordered_json j;
  j["model"] = r.graph.name;
  j["source"] = r.graph.source.file();
  j["input"] = {{"file", options.input.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(options.input)},
                {"shape", r.input.shape()},
                {"dtype", dtype_name(r.input.dtype())},
                {"synthetic", options.input.empty()}};
  j["weights"] = r.given_weights == 0 ? "initialised" : "model file";
  j["output"] = {{"file", options.output.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(options.output)},
                 {"shape", r.output.shape()},
                 {"min", s.min},
                 {"max", s.max},
                 {"mean", s.mean},
                 {"std", s.std},
                 {"non_finite", s.non_finite}};
  if (!s.argmax.empty()) j["output"]["argmax"] = s.argmax;
  j["threads"] = r.threads;
  j["wall_ms"] = {{"value", r.ms}, {"source", "measured: one forward pass, steady_clock, no warm-up"}};
  std::cout << j.dump(2) << "\n";
}

void print_run_table(const RunCommandOptions& options, const RunResult& r) {
  const OutputStats s = stats_of(r.output);
  const Tensor& y = r.output;
  const std::string weights_text = r.given_weights == 0 ? fmt::format("PyTorch's default initialisation (seed {})", options.seed)
                                                        : fmt::format("the model file's ({} tensors, parameters and buffers)", r.given_weights);
  std::cout << fmt::format("hwprof run: {} ({}), forward (evaluation mode), {} thread(s)\n", r.graph.name, r.graph.source.file(), r.threads);
  std::cout << fmt::format("input  {} {}, {}\n", format_shape(r.input.shape()), dtype_name(r.input.dtype()),
                           options.input.empty() ? fmt::format("synthetic (seed {})", options.seed) : options.input);
  std::cout << fmt::format("weights: {}\n", weights_text);
  std::cout << fmt::format("output {} {}{}\n", format_shape(y.shape()), dtype_name(y.dtype()),
                           options.output.empty() ? std::string(", not written (-o FILE.npy writes it)") : ", written to " + options.output);
  std::cout << fmt::format("  min {:.6g}  max {:.6g}  mean {:.6g}  std {:.6g}{}\n", s.min, s.max, s.mean, s.std,
                           s.non_finite > 0 ? fmt::format("  ({} non-finite values)", s.non_finite) : std::string());
  if (!s.argmax.empty()) {
    std::string list;
    for (std::int64_t a : s.argmax) list += (list.empty() ? "" : " ") + std::to_string(a);
    std::cout << "  argmax per sample: " << list << (y.dim(0) > 16 ? " ..." : "") << "\n";
  }
  std::cout << fmt::format("wall time {:.3f} ms (measured: one forward pass, no warm-up; 'hwprof bench' times it properly)\n", r.ms);
}

}  // namespace

int run_run(const RunCommandOptions& options) {
  std::string input_shape;
  auto given = given_input(options, input_shape);
  if (!given) return fail(given.error());
  auto graph = model_for(options, *given, input_shape);
  if (!graph) return fail(graph.error());
  ExecutorOptions eo;
  eo.batch = *given ? (*given)->dim(0) : options.batch;
  eo.threads = options.threads;
  eo.seed = options.seed;
  auto executor = Executor::build(*graph, eo);
  if (!executor) return fail(executor.error());
  const Tensor input = *given ? std::move(**given) : executor->make_input(options.seed);
  const auto start = std::chrono::steady_clock::now();
  auto output = executor->forward(input);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!output) return fail(output.error());
  const Tensor& y = *output;
  if (!options.output.empty()) {
    const std::string npy = detail::format_npy(y.dtype() == DType::f32 ? "<f4" : "<i4", y.shape(), y.f32(), static_cast<std::size_t>(y.bytes()));
    if (const int code = emit(npy, options.output); code != kExitOk) return code;
  }
  std::size_t given_weights = 0;
  for (const Node& node : graph->nodes) given_weights += node.initial_values.size();
  const RunResult result{*graph, input, y, executor->threads(), ms, given_weights};
  if (options.format == "json") {
    print_run_json(options, result);
  } else {
    print_run_table(options, result);
  }
  return kExitOk;
}

}  // namespace hwprof::cli
