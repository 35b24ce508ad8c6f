#include "cli/summary_command.hpp"

#include <cstdio>
#include <iostream>
#include <limits>

#include <CLI/CLI.hpp>

#include "cli/arguments.hpp"
#include "cli/data_lookup.hpp"
#include "cli/output.hpp"
#include "common/stages.hpp"
#include "hwprof/engine/cost.hpp"
#include "hwprof/engine/graph.hpp"
#include "hwprof/engine/report.hpp"

namespace hwprof::cli {
namespace {

constexpr const char* kSummaryDescription = R"(Analytic cost of every layer of a model: parameters, MACs, FLOPs (forward, backward,
training step), minimum bytes moved and memory at a batch size. Nothing is run or measured.

Counting convention: counts are per sample. MACs count the multiply-accumulates of conv2d,
conv3d, conv_transpose2d, conv_transpose3d, linear, matmul (a product of two activations) and attention's two matmuls (Q*K^T, A*V) plus its projections,
biases excluded: the convention of torchvision's published GFLOPS, the ResNet paper and
fvcore. Causal attention
counts the full TxT products. FLOPs = 2*MACs + the element-wise work of every other op, from
one documented table (docs/cost.md, "Counting convention"). Memory is in decimal MB.

MODEL is an .onnx file, a spec (.json) or the name of a built-in model (see models/). An ONNX
node hwprof cannot map is listed as "not counted" and the totals as lower bounds (>=).)";

}  // namespace

std::shared_ptr<SummaryCommandOptions> setup_summary(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<SummaryCommandOptions>();
  CLI::App* sub = app.add_subcommand("summary", "Analytic per-layer cost: params, MACs, FLOPs, bytes, memory");
  sub->description(kSummaryDescription);
  add_model_argument(*sub, options->model);
  sub->add_option("-b,--batch", options->batch, "Batch size for per-batch totals and memory")->check(positive_integer())->capture_default_str();
  sub->add_option("--input-shape", options->input_shape, "Per-sample input shape instead of the spec's, e.g. 3,160,160")->check(shape_text());
  sub->add_option("--optimizer", options->optimizer, "Optimizer whose state the memory block counts")
      ->check(CLI::IsMember({"sgd", "momentum", "adam"}))
      ->capture_default_str();
  sub->add_option("-f,--format", options->format, "Output format")->check(CLI::IsMember({"table", "json", "csv"}))->capture_default_str();
  sub->add_option("--depth", options->depth, "Fold layers into blocks by the first K parts of their dotted names (0: every layer)")
      ->check(CLI::Range(0, 64))
      ->capture_default_str();
  sub->add_option("-o,--output", options->output, "Write the report to FILE (atomically) instead of standard output")->check(file_name());
  sub->callback([options, &exit_code]() { exit_code = run_summary(*options); });
  return options;
}

int run_summary(const SummaryCommandOptions& options) {
  // Counting goes around ops hwprof cannot map (they are listed as not counted, the totals as
  // lower bounds); bench, profile and run refuse them.
  auto graph = load_model_argument(options.model, options.input_shape, LoadOptions{.keep_unsupported = true});
  if (!graph) return fail(graph.error());
  auto cost = analyze(*graph, {options.batch, *parse_optimizer(options.optimizer)});
  if (!cost) return fail(cost.error());

  SummaryOptions report;
  report.depth = options.depth;
  report.source_file = graph->source.file();
  std::string text;
  if (options.format == "json") {
    text = summary_json(*cost, report);
  } else if (options.format == "csv") {
    text = summary_csv(*cost, report);
  } else {
    text = summary_table(*cost, report);
  }
  return emit(text, options.output);
}

}  // namespace hwprof::cli
