#include "cli/run_command.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <new>
#include <optional>
#include <vector>

#include <sys/stat.h>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/arguments.hpp"
#include "cli/data_lookup.hpp"
#include "cli/output.hpp"
#include "common/input_file.hpp"
#include "common/memory_budget.hpp"
#include "common/stages.hpp"
#include "hwprof/engine/executor.hpp"
#include "hwprof/engine/graph.hpp"
#include "hwprof/engine/tensor.hpp"
#include "nn/npy.hpp"

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

// A regular .npy file's header, read before the file itself, with the array checked against
// the memory this process may take: reading holds the file's bytes and a copy of its data, then
// that copy and the input tensor (a 3 GB array must not end in std::bad_alloc after a long
// read). Nothing for a pipe, which is read first (bounded by kMaxNpyBytes).
Result<std::optional<nn::NpyHeader>> peek_input(const std::string& path) {
  std::error_code ec;
  if (path.empty() || !std::filesystem::is_regular_file(path, ec)) return std::optional<nn::NpyHeader>();
  const auto file_bytes = static_cast<std::int64_t>(std::filesystem::file_size(path, ec));
  std::ifstream in(path, std::ios::binary);
  if (ec || !in) return std::optional<nn::NpyHeader>();  // the read says why
  std::string prefix(static_cast<std::size_t>(std::min<std::int64_t>(file_bytes, (1 << 16) + 16)), '\0');
  in.read(prefix.data(), static_cast<std::streamsize>(prefix.size()));
  prefix.resize(static_cast<std::size_t>(in.gcount()));
  auto header = nn::parse_npy_header(prefix, path);
  if (!header) return header.error();
  if (auto error = nn::check_npy_size(*header, file_bytes, path)) return *error;  // before its size is taken for the truth
  const auto& a = header->array;
  const std::int64_t tensor_bytes = a.type == nn::NpyArray::Type::int64 ? header->data_bytes / 2 : header->data_bytes;
  const std::int64_t needed = file_bytes + std::max(header->data_bytes, tensor_bytes);
  const common::MemoryBudget budget = common::memory_budget();
  if (budget.available < 0 || needed <= budget.available) return std::optional<nn::NpyHeader>(std::move(*header));
  const char* type = a.type == nn::NpyArray::Type::float32 ? "float32" : a.type == nn::NpyArray::Type::int32 ? "int32" : "int64";
  return Error{
      fmt::format("{}: the array {} {} holds {} bytes ({}); reading it into the input tensor needs about {} of memory, but only {} are "
                  "available ({}); nothing was read (give a smaller batch)",
                  path, format_shape(a.shape), type, header->data_bytes, common::binary_bytes(header->data_bytes), common::binary_bytes(needed),
                  common::binary_bytes(budget.available), budget.source)};
}

// The input .npy file as the engine's input tensor.
Result<Tensor> read_input(const std::string& path) {
  auto bytes = common::read_input_file(path, ".npy input", kMaxNpyBytes);
  if (!bytes) return bytes.error();
  auto array = nn::parse_npy(*bytes, path);
  if (!array) return array.error();
  *bytes = std::string();  // the array holds its own copy of the data
  try {
    return nn::npy_to_tensor(*array, path);
  } catch (const std::bad_alloc&) {
    return Error{path + ": out of memory for the input tensor"};
  }
}

// What the input is, from the tensor read or the file's header, before the model is loaded:
// its type, its batch and its per-sample shape ("" keeps the model's).
struct InputFacts {
  std::optional<DType> dtype;
  std::int64_t batch = 1;
  std::string per_sample;
};

InputFacts input_facts(const RunCommandOptions& options, const std::optional<nn::NpyHeader>& header, const std::optional<Tensor>& given) {
  InputFacts facts{std::nullopt, options.batch, options.input_shape};
  Shape shape;
  if (given) {
    facts.dtype = given->dtype();
    shape = given->shape();
  } else if (header && header->array.shape.size() >= 2 && header->array.shape[0] >= 1) {
    facts.dtype = header->array.type == nn::NpyArray::Type::float32 ? DType::f32 : DType::i32;
    shape = header->array.shape;
  }
  if (shape.empty()) return facts;
  facts.batch = shape[0];
  facts.per_sample = format_shape(Shape(shape.begin() + 1, shape.end()));
  return facts;
}

// -o naming the model or the input file, directly, through a link or by another spelling of
// its path, would replace it with the output: refused before anything is read or run. The
// files are compared by device and inode, where the output exists (else there is nothing to
// lose).
std::optional<Error> output_overwrites_a_source(const RunCommandOptions& options) {
  struct stat out {};
  if (options.output.empty() || ::stat(options.output.c_str(), &out) != 0) return std::nullopt;
  std::vector<std::pair<const char*, std::string>> sources;
  if (auto model = resolve_model(options.model)) sources.emplace_back("the model", *model);
  if (!options.input.empty()) sources.emplace_back("the input", options.input);
  for (const auto& [what, path] : sources) {
    struct stat source {};
    if (::stat(path.c_str(), &source) != 0 || source.st_dev != out.st_dev || source.st_ino != out.st_ino) continue;
    const std::string which = path == options.output ? std::string() : ", " + path + " (the same file, through a link or by another path)";
    return Error{"-o " + options.output + ": the output file is " + what + which +
                 "; writing the output there would replace it (nothing was read or written; give another -o FILE)"};
  }
  return std::nullopt;
}

// The model, at the input's per-sample shape, checked to take the input's type.

Result<Graph> model_for(const RunCommandOptions& options, std::optional<DType> given, const std::string& input_shape) {
  auto graph = load_model_argument(options.model, {});
  if (!graph) return graph.error();
  if (given && *given != graph->input.dtype) {
    return Error{options.input + ": the array holds " + std::string(*given == DType::f32 ? "float32 values" : "integers") + "; model '" +
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
  if (auto error = output_overwrites_a_source(options)) {
    static_cast<void>(fail(*error));
    return kExitUsage;
  }
  if (!options.input.empty() && (!options.input_shape.empty() || options.batch != 1)) {
    return fail(Error{"--input gives the batch and the shape; --batch and --input-shape are for the synthetic input only"});
  }
  auto header = peek_input(options.input);
  if (!header) return fail(header.error());
  std::optional<Tensor> given;
  const bool read_first = !options.input.empty() && !*header;  // a pipe: its header cannot be read alone
  if (read_first) {
    auto tensor = read_input(options.input);
    if (!tensor) return fail(tensor.error());
    given = std::move(*tensor);
  }
  const InputFacts facts = input_facts(options, *header, given);
  auto graph = model_for(options, facts.dtype, facts.per_sample);
  if (!graph) return fail(graph.error());
  ExecutorOptions eo;
  eo.batch = facts.batch;
  eo.threads = options.threads;
  eo.seed = options.seed;
  auto executor = Executor::build(*graph, eo);  // checks the model's memory at the input's batch, before the input is read
  if (!executor) return fail(executor.error());
  if (!options.input.empty() && !read_first) {
    auto tensor = read_input(options.input);
    if (!tensor) return fail(tensor.error());
    if (tensor->shape() != (*header)->array.shape) return fail(Error{options.input + ": the file changed while hwprof read it"});
    given = std::move(*tensor);
  }
  const Tensor input = given ? std::move(*given) : executor->make_input(options.seed);
  const auto start = std::chrono::steady_clock::now();
  auto output = executor->forward(input);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!output) return fail(output.error());
  const Tensor& y = *output;
  if (!options.output.empty()) {
    const std::int64_t output_bytes = y.bytes() + 128;  // the .npy file is built in memory first
    if (auto error = common::check_memory_fits(output_bytes, options.output + ": the output " + format_shape(y.shape()), "its .npy file",
                                               common::memory_budget())) {
      return fail(*error);
    }
    const std::string npy = nn::format_npy(y.dtype() == DType::f32 ? "<f4" : "<i4", y.shape(), y.f32(), static_cast<std::size_t>(y.bytes()));
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
