// Links against the installed hwprof and counts LeNet-5 from the installed model data. With
// `--test-calibration FILE` it writes a calibration of this CPU with made-up ceilings for one
// thread (high enough that no region is above them), so that the package test can place
// regions without measuring the machine.
#include <cstdio>
#include <cstring>
#include <fstream>

#include <hwprof/hwprof.hpp>

namespace {
int write_test_calibration(const char* file) {
  const auto ceiling = [](double best) {
    hwprof::Ceiling c;
    c.best = best;
    c.median = best;
    c.repetitions = 3;
    return c;
  };
  hwprof::Machine m;
  m.cpu = hwprof::describe_this_cpu();
  m.host = "package-test";
  m.theoretical = {"made-up", 64, 5.0, "test", 64, 32, 20480, 10240, "a test calibration"};
  hwprof::CalibrationRun run;
  run.threads = 1;
  run.bandwidth["dram"].from_bytes = 64 << 20;
  run.bandwidth["dram"].to_bytes = 1 << 30;
  run.bandwidth["dram"].kernels["triad"] = ceiling(100);
  run.compute["fma_sp"] = ceiling(600);
  run.compute["fma_dp"] = ceiling(300);
  run.compute["gemm_sp"] = ceiling(500);
  run.compute["gemm_dp"] = ceiling(250);
  m.runs.push_back(run);
  {
    std::ofstream out(file);
    out << hwprof::machine_to_json(m);
    if (!out) return 1;
  }
  const auto loaded = hwprof::load_machine(file);
  if (!loaded) std::fprintf(stderr, "%s\n", loaded.error().message.c_str());
  return loaded ? 0 : 1;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--test-calibration") == 0) return write_test_calibration(argv[2]);
  const char* path = argc > 1 ? argv[1] : HWPROF_MODEL;
  auto graph = hwprof::load_model(path);
  if (!graph) {
    std::fprintf(stderr, "%s\n", graph.error().message.c_str());
    return 1;
  }
  auto params = hwprof::count_parameters(*graph);
  auto flops = hwprof::count_flops(*graph);
  if (!params || !flops) return 1;
  std::printf("hwprof %s: %s has %lld params, %lld FLOPs per sample\n", hwprof::kVersion, graph->name.c_str(), static_cast<long long>(*params),
              static_cast<long long>(*flops));
  return *params == 61706 ? 0 : 2;
}
