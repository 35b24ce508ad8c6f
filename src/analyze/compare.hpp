// Two profiles side by side (`hwprof compare A B`): per layer the change in median time with a
// significance test on the kept per-call times, the change in efficiency and bound, and a
// verdict; the layers only one profile has; and what differs between the runs themselves.
//
// The test: Mann–Whitney U on the two layers' samples (hwprof::mann_whitney_u), two-sided.
// With tens of layers tested at once, some would pass at 5% by chance alone, so the layers'
// p-values are adjusted with Holm's step-down method (Holm 1979), which bounds the chance of
// any false "slower" or "faster" among them by alpha. The model total is one test of its own.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/stages.hpp"
#include "hwprof/engine/profile.hpp"

namespace hwprof::analysis {

// inconsistent: a layer's kept per-call times disagree with its own statistics (all zeros
// against a median of 5 ms): no test is run on them.
enum class Verdict { faster, slower, same, too_few_samples, untested, inconsistent };
std::string_view verdict_name(Verdict v);  // "faster", "slower", "no significant change", ...

struct LayerChange {
  std::string name;  // as the tables show it: "conv1", "conv1 (backward)"
  std::string op;
  std::size_t samples_a = 0;
  std::size_t samples_b = 0;
  double median_a_ms = 0.0;
  double median_b_ms = 0.0;
  double change = 0.0;               // median_b / median_a − 1 (−0.2: 20% faster)
  std::optional<double> p_value;     // the test's own; absent when untested
  std::optional<double> p_adjusted;  // Holm-adjusted across the layers (the total: its own)
  Verdict verdict = Verdict::untested;
  std::string note;                    // why untested / too few samples
  std::optional<double> efficiency_a;  // roofline efficiency, where placed
  std::optional<double> efficiency_b;
  std::string bound_a;
  std::string bound_b;
  // The roofline points (FLOP/byte, GFLOP/s) of each run, where the layer has them.
  std::optional<double> intensity_a;
  std::optional<double> gflops_a;
  std::optional<double> intensity_b;
  std::optional<double> gflops_b;
};

struct ProfileComparison {
  std::string a_label;  // the files' names, or the models'
  std::string b_label;
  double alpha = 0.05;
  LayerChange total;
  std::vector<LayerChange> layers;  // the layers both have, in B's order
  std::vector<std::string> only_in_a;
  std::vector<std::string> only_in_b;
  std::vector<std::string> differences;  // model, batch, phase, threads, machine, backend, ...
};

ProfileComparison compare_profiles(const Profile& a, const Profile& b, double alpha = 0.05);

// Holm's step-down adjustment of m p-values, in their own order.
std::vector<double> holm_adjust(const std::vector<double>& p);

// The layers (and the total) significantly slower by more than `percent`.
std::vector<const LayerChange*> regressions(const ProfileComparison& c, double percent);

}  // namespace hwprof::analysis
