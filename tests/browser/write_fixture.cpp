// Writes the synthetic profile of the report tests as profile.json, for the browser test to
// render with `hwprof report` and open in headless Chromium; with sampling (stacks under a few
// layers, samples on the first traced pass), so that the page draws its flame graph.
#include <algorithm>
#include <cstdio>
#include <string>

#include "hwprof/engine/report.hpp"
#include "synthetic_profile.hpp"

namespace {

// Three functions under each of the first forward layers, in shares that differ per layer.
hwprof::SamplingProfile fixture_sampling(const hwprof::Profile& p) {
  hwprof::SamplingProfile s;
  s.spec = "cpu-clock@1000";
  s.rate = "1000 Hz";
  s.sampled_passes = 10;
  s.unsampled_passes = 10;
  s.overhead = 0.01;
  s.overhead_noise = 0.02;
  const std::vector<std::pair<std::string, std::string>> functions = {{"run", "hwprof"},
                                                                      {"im2col", "hwprof"},
                                                                      {"blas_thread_server", "libopenblas.so.0"},
                                                                      {"sgemm_kernel_HASWELL", "libopenblas.so.0"},
                                                                      {"std::vector<int, std::allocator<int> >::push_back", "hwprof"}};
  for (const auto& [name, module] : functions) {
    s.frame_names.push_back(name);
    s.frame_modules.push_back(module);
  }
  std::vector<std::string> layers;
  for (const hwprof::LayerProfile& l : p.layers) {
    if (layers.size() < 4 && std::find(layers.begin(), layers.end(), l.name) == layers.end()) layers.push_back(l.name);
  }
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const int row = static_cast<int>(s.frame_names.size());
    s.frame_names.push_back(layers[i]);
    s.frame_modules.emplace_back();
    const std::uint64_t gemm = 40 + 30 * i, unfold = 20 + 5 * i, push = 5;
    s.stacks.push_back({{row, 0, 1}, unfold});
    s.stacks.push_back({{row, 2, 3}, gemm});
    s.stacks.push_back({{row, 0, 4}, push});
    const std::uint64_t total = gemm + unfold + push;
    const auto share = [&](const std::string& name, const std::string& module, std::uint64_t n) {
      const double x = static_cast<double>(n) / static_cast<double>(total);
      return hwprof::SampledFunction{name, module, n, x, std::max(0.0, x - 0.1), std::min(1.0, x + 0.1)};
    };
    s.layers.push_back(
        {layers[i],
         static_cast<int>(i),
         total,
         gemm,
         true,
         {share("sgemm_kernel_HASWELL", "libopenblas.so.0", gemm), share("im2col", "hwprof", unfold), share(functions[4].first, "hwprof", push)},
         0,
         {{"GEMM kernel", gemm, static_cast<double>(gemm) / static_cast<double>(total), 0.0, 1.0},
          {"im2col", unfold, static_cast<double>(unfold) / static_cast<double>(total), 0.0, 1.0},
          {"other code", push, static_cast<double>(push) / static_cast<double>(total), 0.0, 1.0}}});
    s.samples += total;
    // A sample in the middle of each of the layer's spans of the first traced pass.
    for (const hwprof::TraceSpan& t : p.trace) {
      if (t.category == "layer" && t.iteration == 0 && t.name == layers[i]) s.instants.push_back({t.start_us + t.duration_us / 2, t.thread, row, 3});
    }
  }
  std::sort(s.layers.begin(), s.layers.end(), [](const auto& a, const auto& b) { return a.samples > b.samples; });
  std::sort(s.instants.begin(), s.instants.end(), [](const auto& a, const auto& b) { return a.time_us < b.time_us; });
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT.json\n", argv[0]);
    return 2;
  }
  hwprof::Profile p = hwprof::test::synthetic_profile();
  p.sampling = fixture_sampling(p);
  if (auto error = hwprof::write_file_atomically(argv[1], hwprof::profile_to_json(p))) {
    std::fprintf(stderr, "%s\n", error->message.c_str());
    return 1;
  }
  return 0;
}
