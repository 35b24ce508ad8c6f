// Writes the fuzzing seeds that no shipped file provides: calibrations and profiles. They are
// made by the writers that the readers pair with, from the report tests' fixtures, so they
// follow the formats as these change. Each is read back before it is written: a seed that its
// own reader refuses would teach the fuzzer nothing about what the reader accepts.
//
//   hwprof_fuzz_seeds DIR   writes DIR/calibration/*.json and DIR/profile/*.json
#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "hwprof/engine/machine.hpp"
#include "hwprof/engine/profile.hpp"
#include "made_up_calibration.hpp"
#include "synthetic_profile.hpp"

namespace hwprof::fuzz {
namespace {

struct Seed {
  std::string file;  // under DIR
  std::string text;
};

Machine two_run_calibration() {
  const Profile p = test::synthetic_profile();
  Machine m;
  m.created = "2026-11-20T10:00:00Z";
  m.host = "testhost";
  m.hwprof_version = "0.1.0";
  m.quick = true;
  m.cpu = p.machine.cpu;
  m.theoretical = p.machine.theoretical;
  m.runs = {test::synthetic_run(1), test::synthetic_run(2)};
  m.contention = {false, 0.4, 1.5, {"calibrate: 0.4 CPUs busy elsewhere (cron)", "steal 1.5%"}};
  return m;
}

// The synthetic profile cut down to a few layers of different kinds (a GEMM layer with a FLOP
// check, one with no FLOPs, the one with a hostile name; in every phase) and the start of its
// trace: seeds of a few KiB, since every execution of the fuzzer reads the whole input.
Profile small_profile(const test::SyntheticOptions& options) {
  Profile p = test::synthetic_profile(options);
  std::erase_if(p.layers, [](const LayerProfile& l) { return l.index != 0 && l.index != 5 && l.index != 7; });
  p.trace.resize(std::min<std::size_t>(p.trace.size(), 6));
  return p;
}

// A regions profile (kind regions): per-thread region rows and the merged call tree.
Profile regions_profile() {
  test::SyntheticOptions options;
  options.train = false;
  options.samples = 6;
  Profile p = small_profile(options);
  p.kind = ProfileKind::regions;
  p.model = "train_loop";
  p.region_threads = {{0, "main", "train_step", 100, 52.5, 1.25}, {0, "main", "fc1", 100, 20.0, 20.0}, {1, "worker-1", "fc1", 50, 9.75, 9.75}};
  p.call_paths = {{"train_step", 0, 100, 52.5, 1.25, std::nullopt}, {"train_step/fc1", 1, 150, 29.75, 29.75, std::nullopt}};
  return p;
}

std::vector<Seed> calibration_seeds() {
  return {{"calibration/made_up.json", machine_to_json(test::made_up_calibration(test::synthetic_profile().machine.cpu))},
          {"calibration/two_runs.json", machine_to_json(two_run_calibration())}};
}

std::vector<Seed> profile_seeds() {
  test::SyntheticOptions forward;
  forward.train = false;
  forward.calibrated = false;
  forward.samples = 3;
  test::SyntheticOptions train;
  train.samples = 6;
  return {{"profile/forward_uncalibrated.json", profile_to_json(small_profile(forward))},
          {"profile/train.json", profile_to_json(small_profile(train))},
          {"profile/regions.json", profile_to_json(regions_profile())}};
}

// An empty string when `seed` reads back, else why not.
template <class Reader>
std::string refusal(const Seed& seed, Reader read) {
  auto back = read(seed.text, seed.file);
  return back.ok() ? std::string() : back.error().message;
}

int write_seeds(const std::filesystem::path& dir) {
  std::vector<std::pair<Seed, std::string>> checked;
  for (const Seed& s : calibration_seeds()) checked.emplace_back(s, refusal(s, machine_from_json));
  for (const Seed& s : profile_seeds()) checked.emplace_back(s, refusal(s, profile_from_json));
  int failures = 0;
  for (const auto& [seed, problem] : checked) {
    if (!problem.empty()) {
      std::fprintf(stderr, "hwprof_fuzz_seeds: its own reader refuses the seed: %s\n", problem.c_str());
      ++failures;
      continue;
    }
    const std::filesystem::path path = dir / seed.file;
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << seed.text;
    out.close();
    if (ec || !out) {
      std::fprintf(stderr, "hwprof_fuzz_seeds: cannot write %s\n", path.c_str());
      ++failures;
    }
  }
  if (failures == 0) std::printf("hwprof_fuzz_seeds: %zu seeds in %s\n", checked.size(), dir.c_str());
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace hwprof::fuzz

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR (writes DIR/calibration/*.json and DIR/profile/*.json)\n", argc > 0 ? argv[0] : "hwprof_fuzz_seeds");
    return 2;
  }
  return hwprof::fuzz::write_seeds(argv[1]);
}
