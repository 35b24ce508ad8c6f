#include "cli/bench_command.hpp"

#include <iostream>
#include <new>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/arguments.hpp"
#include "cli/data_lookup.hpp"
#include "cli/output.hpp"
#include "common/stages.hpp"
#include "hwprof/engine/cost.hpp"
#include "hwprof/engine/executor.hpp"
#include "hwprof/engine/graph.hpp"
#include "hwprof/engine/profiler.hpp"
#include "hwprof/engine/tensor.hpp"

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

std::string megabytes(std::int64_t bytes) {
  return fmt::format("{:.2f} MB", static_cast<double>(bytes) / 1e6);
}

struct Report {
  std::string model;
  std::string source;
  Shape input_shape;
  DType input_dtype = DType::f32;
  std::int64_t analytic_activation_bytes = 0;
  BlasInfo blas;
  LatencyStats m;  // the library's measure_latency
};

double memory_ratio(const Report& r) {
  return r.analytic_activation_bytes > 0 ? static_cast<double>(r.m.peak_activation_bytes) / static_cast<double>(r.analytic_activation_bytes) : 0.0;
}

std::string report_json(const Report& r, const BenchCommandOptions& o) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["model"] = r.model;
  j["source"] = r.source;
  j["batch"] = r.m.batch;
  j["threads"] = r.m.threads;
  j["phase"] = run_phase_name(r.m.phase);
  j["input"] = {{"shape", r.input_shape}, {"dtype", dtype_name(r.input_dtype)}};
  j["blas"] = {{"config", r.blas.config}, {"core", r.blas.core}, {"core_source", r.blas.core_source}};
  if (!r.blas.advice.empty()) j["blas"]["advice"] = r.blas.advice;
  if (o.train) j["optimizer"] = o.optimizer;
  j["seed"] = o.seed;
  j["warmup"] = r.m.warmup_runs;
  const Summary& l = r.m.ms;
  j["latency_ms"] = {{"median", l.median}, {"mean", l.mean}, {"min", l.min}, {"max", l.max}, {"p95", l.p95}, {"n", l.n}};
  j["latency_source"] = "measured: wall time (steady_clock) of each iteration after the warm-up";
  j["samples_per_s"] = r.m.samples_per_s;
  if (o.train) j["loss"] = r.m.loss;
  const char* analytic_field = o.train ? "training_activation_bytes" : "inference_activation_bytes";
  j["memory"] = {{"parameter_bytes", r.m.parameter_bytes},
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
  const Summary& l = r.m.ms;
  std::string out = fmt::format("hwprof bench: {} ({}), batch {}, {}, {} thread(s)\n", r.model, r.source, r.m.batch,
                                o.train ? "training step (" + o.optimizer + ")" : std::string("forward (evaluation mode)"), r.m.threads);
  out += fmt::format("input {} {}, synthetic (seed {}); {} warm-up + {} measured iteration(s)\n", format_shape(r.input_shape),
                     dtype_name(r.input_dtype), o.seed, r.m.warmup_runs, l.n);
  out += fmt::format("BLAS: OpenBLAS core {} ({})\n\n", r.blas.core, r.blas.core_source);
  out += "latency, ms (measured wall time per iteration)\n";
  out += fmt::format("  {:>10} {:>10} {:>10} {:>10} {:>10}\n", "median", "mean", "min", "max", "p95");
  out += fmt::format("  {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f}\n", l.median, l.mean, l.min, l.max, l.p95);
  out += fmt::format("throughput: {:.2f} samples/s (batch / median latency)\n", r.m.samples_per_s);
  if (o.train) out += fmt::format("loss after the last step: {:.6g}\n", r.m.loss);
  out += fmt::format("\nmemory (decimal MB)\n  parameters                {:>12}\n", megabytes(r.m.parameter_bytes));
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

  ProfileOptions po;
  po.batch = options.batch;
  po.train = options.train;
  po.optimizer.kind = optimizer;
  po.threads = options.threads;
  po.seed = options.seed;
  po.warmup = options.warmup;
  po.iterations = options.iterations;
  Result<LatencyStats> measured = Error{};
  try {
    measured = measure_latency(*graph, po);
  } catch (const std::bad_alloc&) {
    measured = Error{"out of memory for the synthetic input of batch " + std::to_string(options.batch) + "; try a smaller batch"};
  }
  if (!measured) return fail(measured.error());

  Report r;
  r.model = graph->name;
  r.source = graph->source.file();
  r.input_shape = graph->input.shape;
  r.input_dtype = graph->input.dtype;
  r.m = *measured;
  r.analytic_activation_bytes = options.train ? cost->memory.training_activation_bytes : cost->memory.inference_activation_bytes;
  r.blas = blas_info();
  if (!r.blas.advice.empty()) std::cerr << "hwprof bench: note: " << r.blas.advice << "\n";
  return emit(options.format == "json" ? report_json(r, options) : report_table(r, options), options.output);
}

}  // namespace hwprof::cli
