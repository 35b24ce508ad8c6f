// Links against the installed hwprof and counts LeNet-5 from the installed model data.
#include <cstdio>

#include <hwprof/hwprof.hpp>

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : HWPROF_MODEL;
  auto graph = hwprof::load_model(path);
  if (!graph) {
    std::fprintf(stderr, "%s\n", graph.error().message.c_str());
    return 1;
  }
  auto params = hwprof::count_parameters(*graph);
  auto flops = hwprof::count_flops(*graph);
  if (!params || !flops) return 1;
  std::printf("hwprof %s: %s has %lld params, %lld FLOPs per sample\n", hwprof::kVersion, graph->name.c_str(),
              static_cast<long long>(*params), static_cast<long long>(*flops));
  return *params == 61706 ? 0 : 2;
}
