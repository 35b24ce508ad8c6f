#include "cli/bench_command.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <new>
#include <numeric>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/arguments.hpp"
#include "cli/data_lookup.hpp"
#include "cli/output.hpp"
#include "hwprof/cost.hpp"
#include "hwprof/executor.hpp"
#include "hwprof/graph.hpp"
#include "hwprof/tensor.hpp"

namespace hwprof::cli {
namespace {

constexpr const char* kBenchDescription = R"(Whole-model latency and throughput on hwprof's own kernels (OpenBLAS GEMMs, OpenMP
loops): a forward pass in evaluation mode, or with --train a training step (forward in
training mode, mean cross-entropy of the output's last axis against synthetic labels,
backward, optimizer). Inputs are synthetic and seeded: images N(0, 1), token ids uniform
over the vocabulary each embedding accepts. Parameters are an ONNX file's own weights; a
JSON spec's are initialised in PyTorch's default schemes, seeded.

Latencies are measured wall time of each iteration after the warm-up; throughput is the
batch divided by the median latency. Peak activation memory is measured by the tensor
allocator (every tensor counted, kernel workspaces included; parameters, buffers, gradients
and optimizer state excluded) and shown beside the analytic estimate of 'hwprof summary'.
Memory is in decimal MB.

MODEL is an .onnx file, a spec (.json) or the name of a built-in model (see models/).)";

struct Latency {
  double median = 0, mean = 0, min = 0, max = 0, p95 = 0;
  std::size_t n = 0;
};

// Percentiles by linear interpolation between order statistics (numpy's default).
double percentile(const std::vector<double>& sorted, double p) {
  const double h = (static_cast<double>(sorted.size()) - 1.0) * p / 100.0;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

Latency summarize_ms(std::vector<double> ms) {
  Latency l;
  std::sort(ms.begin(), ms.end());
  l.n = ms.size();
  l.median = percentile(ms, 50.0);
  l.p95 = percentile(ms, 95.0);
  l.mean = std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(ms.size());
  l.min = ms.front();
  l.max = ms.back();
  return l;
}

struct Measurement {
  Latency latency;
  std::int64_t peak_activation_bytes = 0;  // measured
  double last_loss = 0.0;                  // training
};

// Runs warm-up and measured iterations; each iteration's peak is taken over the bytes live
// before it (parameters, buffers, gradients, optimizer state, the input), and the input is
// added back since the analytic liveness counts it as an activation.
Result<Measurement> measure(Executor& executor, const BenchCommandOptions& o) {
  const Tensor input = executor.make_input(o.seed);
  const Tensor labels = o.train ? executor.make_labels(o.seed) : Tensor();
  Measurement m;
  auto once = [&]() -> Result<bool> {
    if (o.train) {
      auto loss = executor.train_step(input, labels);
      if (!loss) return loss.error();
      m.last_loss = *loss;
    } else {
      auto output = executor.forward(input);
      if (!output) return output.error();
    }
    return true;
  };
  for (int i = 0; i < o.warmup; ++i) {
    if (auto ok = once(); !ok) return ok.error();
  }
  std::vector<double> ms;
  ms.reserve(static_cast<std::size_t>(o.iterations));
  for (int i = 0; i < o.iterations; ++i) {
    const std::int64_t before = allocation_stats().current_bytes;
    reset_peak_allocation();
    const auto start = std::chrono::steady_clock::now();
    auto ok = once();
    const auto stop = std::chrono::steady_clock::now();
    if (!ok) return ok.error();
    ms.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
    m.peak_activation_bytes = std::max(m.peak_activation_bytes, allocation_stats().peak_bytes - before + input.bytes());
  }
  m.latency = summarize_ms(std::move(ms));
  return m;
}

std::string megabytes(std::int64_t bytes) {
  return fmt::format("{:.2f} MB", static_cast<double>(bytes) / 1e6);
}

struct Report {
  std::string model;
  std::string source;
  std::int64_t batch = 1;
  int threads = 1;
  std::string phase;
  Shape input_shape;
  DType input_dtype = DType::f32;
  std::int64_t parameter_bytes = 0;
  std::int64_t analytic_activation_bytes = 0;
  BlasInfo blas;
  Measurement m;
};

double samples_per_s(const Report& r) {
  return r.m.latency.median > 0 ? static_cast<double>(r.batch) / (r.m.latency.median / 1e3) : 0.0;
}
double memory_ratio(const Report& r) {
  return r.analytic_activation_bytes > 0 ? static_cast<double>(r.m.peak_activation_bytes) / static_cast<double>(r.analytic_activation_bytes) : 0.0;
}

std::string report_json(const Report& r, const BenchCommandOptions& o) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["model"] = r.model;
  j["source"] = r.source;
  j["batch"] = r.batch;
  j["threads"] = r.threads;
  j["phase"] = r.phase;
  j["input"] = {{"shape", r.input_shape}, {"dtype", dtype_name(r.input_dtype)}};
  j["blas"] = {{"config", r.blas.config}, {"core", r.blas.core}, {"core_source", r.blas.core_source}};
  if (!r.blas.advice.empty()) j["blas"]["advice"] = r.blas.advice;
  if (o.train) j["optimizer"] = o.optimizer;
  j["seed"] = o.seed;
  j["warmup"] = o.warmup;
  const Latency& l = r.m.latency;
  j["latency_ms"] = {{"median", l.median}, {"mean", l.mean}, {"min", l.min}, {"max", l.max}, {"p95", l.p95}, {"n", l.n}};
  j["latency_source"] = "measured: wall time (steady_clock) of each iteration after the warm-up";
  j["samples_per_s"] = samples_per_s(r);
  if (o.train) j["loss"] = r.m.last_loss;
  const char* analytic_field = o.train ? "training_activation_bytes" : "inference_activation_bytes";
  j["memory"] = {{"parameter_bytes", r.parameter_bytes},
                 {"peak_activation_bytes",
                  {{"value", r.m.peak_activation_bytes},
                   {"source", "measured"},
                   {"note",
                    "tracking allocator: peak bytes above those live before an iteration (parameters, buffers, gradients, "
                    "optimizer state), plus the input; kernel workspaces included"}}},
                 {"analytic_activation_bytes",
                  {{"value", r.analytic_activation_bytes}, {"source", "analytic"}, {"note", std::string("hwprof summary's ") + analytic_field}}},
                 {"measured_over_analytic", memory_ratio(r)}};
  return j.dump(2) + "\n";
}

std::string report_table(const Report& r, const BenchCommandOptions& o) {
  const Latency& l = r.m.latency;
  std::string out = fmt::format("hwprof bench: {} ({}), batch {}, {}, {} thread(s)\n", r.model, r.source, r.batch,
                                o.train ? "training step (" + o.optimizer + ")" : std::string("forward (evaluation mode)"), r.threads);
  out += fmt::format("input {} {}, synthetic (seed {}); {} warm-up + {} measured iteration(s)\n", format_shape(r.input_shape),
                     dtype_name(r.input_dtype), o.seed, o.warmup, l.n);
  out += fmt::format("BLAS: OpenBLAS core {} ({})\n\n", r.blas.core, r.blas.core_source);
  out += "latency, ms (measured wall time per iteration)\n";
  out += fmt::format("  {:>10} {:>10} {:>10} {:>10} {:>10}\n", "median", "mean", "min", "max", "p95");
  out += fmt::format("  {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f}\n", l.median, l.mean, l.min, l.max, l.p95);
  out += fmt::format("throughput: {:.2f} samples/s (batch / median latency)\n", samples_per_s(r));
  if (o.train) out += fmt::format("loss after the last step: {:.6g}\n", r.m.last_loss);
  out += fmt::format("\nmemory (decimal MB)\n  parameters                {:>12}\n", megabytes(r.parameter_bytes));
  out += fmt::format(
      "  peak activations          {:>12}  measured: tracking allocator, parameters and optimizer state "
      "excluded, kernel workspaces included\n",
      megabytes(r.m.peak_activation_bytes));
  out += fmt::format("  analytic activations      {:>12}  analytic: hwprof summary's {}\n", megabytes(r.analytic_activation_bytes),
                     o.train ? "training activations" : "inference activations");
  out += fmt::format("  measured / analytic       {:>12.2f}\n", memory_ratio(r));
  return out;
}

}  // namespace

std::shared_ptr<BenchCommandOptions> setup_bench(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<BenchCommandOptions>();
  CLI::App* sub = app.add_subcommand("bench", "Whole-model latency and throughput on hwprof's kernels (measured)");
  sub->description(kBenchDescription);
  add_model_argument(*sub, options->model);
  sub->add_option("-b,--batch", options->batch, "Batch size")->check(positive_integer())->capture_default_str();
  sub->add_flag("--train", options->train, "Time a training step instead of an inference forward pass");
  sub->add_option("-t,--threads", options->threads, "Kernel threads (OpenMP and OpenBLAS); 0: one per online CPU")
      ->check(CLI::Range(0, 4096))
      ->capture_default_str();
  sub->add_option("--warmup", options->warmup, "Untimed iterations first")->check(CLI::Range(0, 1'000'000))->capture_default_str();
  sub->add_option("-n,--iterations", options->iterations, "Timed iterations")->check(CLI::Range(1, 1'000'000))->capture_default_str();
  sub->add_option("--input-shape", options->input_shape, "Per-sample input shape instead of the spec's, e.g. 3,160,160 or 256")->check(shape_text());
  sub->add_option("--optimizer", options->optimizer, "Optimizer of the training step (torch.optim semantics; SGD with momentum 0.9)")
      ->check(CLI::IsMember({"sgd", "adam"}))
      ->capture_default_str();
  sub->add_option("--seed", options->seed, "Seed of the parameters, inputs and labels")->check(unsigned_integer())->capture_default_str();
  sub->add_option("-f,--format", options->format, "Output format")->check(CLI::IsMember({"table", "json"}))->capture_default_str();
  sub->add_option("-o,--output", options->output, "Write the report to FILE (atomically) instead of standard output")->check(file_name());
  sub->callback([options, &exit_code]() { exit_code = run_bench(*options); });
  return options;
}

int run_bench(const BenchCommandOptions& options) {
  auto graph = load_model_argument(options.model, options.input_shape);
  if (!graph) return fail(graph.error());
  const OptimizerKind optimizer = optimizer_argument(options.optimizer);
  auto cost = analyze(*graph, {options.batch, optimizer});
  if (!cost) return fail(cost.error());

  ExecutorOptions eo;
  eo.batch = options.batch;
  eo.threads = options.threads;
  eo.seed = options.seed;
  eo.training = options.train;
  eo.optimizer.kind = optimizer;
  auto executor = Executor::build(*graph, eo);
  if (!executor) return fail(executor.error());
  Result<Measurement> measured = Error{};
  try {
    measured = measure(*executor, options);
  } catch (const std::bad_alloc&) {
    measured = Error{"out of memory for the synthetic input of batch " + std::to_string(options.batch) + "; try a smaller batch"};
  }
  if (!measured) return fail(measured.error());

  Report r;
  r.model = graph->name;
  r.source = graph->source.file();
  r.batch = options.batch;
  r.threads = executor->threads();
  r.phase = options.train ? "train" : "forward";
  r.input_shape = graph->input.shape;
  r.input_dtype = graph->input.dtype;
  r.parameter_bytes = executor->parameter_bytes();
  r.analytic_activation_bytes = options.train ? cost->memory.training_activation_bytes : cost->memory.inference_activation_bytes;
  r.m = *measured;
  r.blas = blas_info();
  if (!r.blas.advice.empty()) std::cerr << "hwprof bench: note: " << r.blas.advice << "\n";
  return emit(options.format == "json" ? report_json(r, options) : report_table(r, options), options.output);
}

}  // namespace hwprof::cli
