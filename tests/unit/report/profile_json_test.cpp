// The profile's JSON: the fields docs/profile.md, "`profile.json`" documents, a lossless round trip, unavailable
// counters as null with their reason, and every malformed file refused with file:line:col,
// the JSON pointer and the problem.
#include <cctype>
#include <filesystem>
#include <fstream>
#include <functional>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hwprof/engine/profile.hpp"
#include "synthetic_profile.hpp"

namespace hwprof {
namespace {

using nlohmann::ordered_json;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// "FILE:LINE:COLUMN: " at the start of a message. (No <regex>: GCC 12 warns falsely inside it
// in sanitized optimised builds.)
bool starts_with_place(const std::string& message, const std::string& file) {
  if (message.rfind(file + ":", 0) != 0) return false;
  std::size_t i = file.size() + 1;
  for (int field = 0; field < 2; ++field) {
    const std::size_t digits = i;
    while (i < message.size() && std::isdigit(static_cast<unsigned char>(message[i]))) ++i;
    if (i == digits || i >= message.size() || message[i] != ':') return false;
    ++i;
  }
  return i < message.size() && message[i] == ' ';
}

TEST(ProfileJson, RoundTripIsLossless) {
  for (bool train : {true, false}) {
    for (bool calibrated : {true, false}) {
      for (std::size_t samples : {std::size_t{20}, std::size_t{4}}) {
        SCOPED_TRACE(testing::Message() << "train " << train << " calibrated " << calibrated << " samples " << samples);
        const Profile p = test::synthetic_profile({train, calibrated, samples});
        const std::string first = profile_to_json(p);
        auto back = profile_from_json(first, "p.json");
        ASSERT_TRUE(back.ok()) << back.error().message;
        EXPECT_EQ(profile_to_json(*back), first);
      }
    }
  }
}

TEST(ProfileJson, ReadsBackWhatItWrote) {
  const Profile p = test::synthetic_profile();
  auto back = profile_from_json(profile_to_json(p), "p.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->layers.size(), p.layers.size());
  ASSERT_FALSE(p.layers[0].samples_ms.empty());
  EXPECT_EQ(back->layers[0].samples_ms, p.layers[0].samples_ms) << "the per-call times hwprof compare tests";
  EXPECT_EQ(back->model, p.model);
  EXPECT_EQ(back->machine.cpu.brand, p.machine.cpu.brand);
  EXPECT_EQ(back->counter_iterations, 3);
  EXPECT_EQ(back->machine.blas_core, "SkylakeX");
  EXPECT_EQ(back->machine.blas_core_source, p.machine.blas_core_source);
  // A profile from before the BLAS kernels were named still reads, without them; a malformed
  // "blas" is refused with its place.
  auto j = nlohmann::ordered_json::parse(profile_to_json(p));
  j["machine"].erase("blas");
  j.erase("counter_iterations");
  // ... and one from before working-set memory roofs reads as placed under DRAM.
  for (auto& layer : j["layers"]) {
    if (layer["roofline"].is_null()) continue;
    layer["roofline"].erase("memory_gbytes_per_s");
    layer["roofline"].erase("memory_level");
    layer["roofline"].erase("memory_roof");
  }
  auto older = profile_from_json(j.dump(), "old.json");
  ASSERT_TRUE(older.ok()) << older.error().message;
  EXPECT_TRUE(older->machine.blas_core.empty());
  EXPECT_EQ(older->counter_iterations, 0);
  for (const LayerProfile& l : older->layers) {
    if (!l.roofline) continue;
    EXPECT_EQ(l.roofline->memory_level, "dram");
    EXPECT_DOUBLE_EQ(l.roofline->memory_gbytes_per_s, l.roofline->dram_gbytes_per_s);
  }
  j["machine"]["blas"] = {{"core", 3}};
  auto bad = profile_from_json(j.dump(), "bad.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("/machine/blas"), std::string::npos) << bad.error().message;
  ASSERT_TRUE(back->machine.ceilings.has_value());
  EXPECT_DOUBLE_EQ(back->machine.ceilings->bandwidth.at("dram").kernels.at("triad").best, 15.0);
  for (std::size_t i = 0; i < p.layers.size(); ++i) {
    const LayerProfile& a = p.layers[i];
    const LayerProfile& b = back->layers[i];
    EXPECT_EQ(b.name, a.name);
    EXPECT_EQ(b.phase, a.phase);
    EXPECT_EQ(b.flops, a.flops);
    EXPECT_EQ(b.time_ms.n, a.time_ms.n);
    EXPECT_DOUBLE_EQ(b.time_ms.median, a.time_ms.median);
    EXPECT_DOUBLE_EQ(b.time_ms.median_ci_high, a.time_ms.median_ci_high);
    ASSERT_EQ(b.roofline.has_value(), a.roofline.has_value());
    if (a.roofline) {
      EXPECT_DOUBLE_EQ(b.roofline->efficiency, a.roofline->efficiency);
      EXPECT_EQ(b.roofline->bound, a.roofline->bound);
      EXPECT_EQ(b.roofline->levels.size(), a.roofline->levels.size());
    }
    ASSERT_EQ(b.counters.size(), a.counters.size());
    for (std::size_t k = 0; k < a.counters.size(); ++k) {
      EXPECT_EQ(b.counters[k].name, a.counters[k].name);  // order kept
      EXPECT_EQ(b.counters[k].value.has_value(), a.counters[k].value.has_value());
      EXPECT_EQ(b.counters[k].status, a.counters[k].status);
    }
  }
  EXPECT_EQ(back->trace.size(), p.trace.size());
  EXPECT_EQ(back->memory.page_faults, p.memory.page_faults);
}

// --sample's rows survive the round trip (hwprof report shows them again); a share outside its
// interval or more samples than the profile has is refused at its place.
TEST(ProfileJson, SamplingRowsReadBackAndNonsenseIsRefused) {
  Profile p = test::synthetic_profile();
  SamplingProfile s;
  s.spec = "cpu-clock@1000";
  s.rate = "1000 Hz";
  s.samples = 40;
  s.overhead = -0.02;  // faster than without: noise, and said as measured
  s.overhead_noise = 0.05;
  s.sampled_passes = 2;
  s.unsampled_passes = 3;
  s.warnings = {"2 samples were lost"};
  s.layers = {SampledLayer{"conv1", 0, 40, 10, true, {{"sgemm_kernel_HASWELL", "libopenblas.so.0", 30, 0.75, 0.6, 0.86}}, 10, {}, false}};
  s.layers[0].parts = {{"GEMM kernel", 30, 0.75, 0.6, 0.86}, {"im2col", 10, 0.25, 0.14, 0.4}};
  p.sampling = s;
  const std::string text = profile_to_json(p);
  auto back = profile_from_json(text, "p.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_TRUE(back->sampling.has_value());
  EXPECT_EQ(back->sampling->samples, 40u);
  EXPECT_DOUBLE_EQ(back->sampling->overhead, -0.02);
  ASSERT_EQ(back->sampling->layers.size(), 1u);
  EXPECT_EQ(back->sampling->layers[0].top[0].function, "sgemm_kernel_HASWELL");
  EXPECT_EQ(back->sampling->warnings, s.warnings);
  ASSERT_EQ(back->sampling->layers[0].parts.size(), 2u);
  EXPECT_EQ(back->sampling->layers[0].parts[1].part, "im2col");
  EXPECT_EQ(profile_to_json(*back), text);
  ordered_json j = ordered_json::parse(text);
  j["sampling"]["layers"][0]["top"][0]["low"] = 0.9;  // above the share
  auto bad = profile_from_json(j.dump(), "bad.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("/sampling/layers/0/top/0: share 0.75 with interval [0.9, 0.86]"));
  j = ordered_json::parse(text);
  j["sampling"]["layers"][0]["samples"] = 41;
  EXPECT_FALSE(profile_from_json(j.dump(), "bad.json").ok());
  // Parts holding more samples than their row: refused at the place.
  j = ordered_json::parse(text);
  j["sampling"]["layers"][0]["parts"][1]["samples"] = 11;
  bad = profile_from_json(j.dump(), "bad.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("/sampling/layers/0/parts/1/samples"));
  // A profile written before parts were kept reads back without them.
  j = ordered_json::parse(text);
  j["sampling"]["layers"][0].erase("parts");
  auto old = profile_from_json(j.dump(), "old.json");
  ASSERT_TRUE(old.ok()) << old.error().message;
  EXPECT_TRUE(old->sampling->layers[0].parts.empty());
}

// The stacks and the trace's instants survive the round trip (report.html's flame graph and
// trace.json's samples are drawn again from profile.json); a frame out of range, a time that is
// not a finite non-negative number and a malformed line are refused at their place; a file
// without them (written before them) reads as before.
TEST(ProfileJson, SamplingStacksAndInstantsReadBackAndNonsenseIsRefused) {
  Profile p = test::synthetic_profile();
  SamplingProfile s;
  s.spec = "cpu-clock@1000";
  s.rate = "1000 Hz";
  s.samples = 40;
  s.overhead = 0.01;
  s.layers = {SampledLayer{"conv1", 0, 40, 10, true, {{"sgemm_kernel_HASWELL", "libopenblas.so.0", 30, 0.75, 0.6, 0.86}}, 10, {}, false}};
  s.layers.push_back(SampledLayer{"(outside every layer)", -1, 0, 0, false, {}, 0, {}, true});
  s.frame_names = {"conv1", "std::vector<int, std::allocator<int> >::push_back(int const&)", "sgemm_kernel_HASWELL"};
  s.frame_modules = {"", "hwprof", "libopenblas.so.0"};
  s.stacks = {{{0, 1}, 10}, {{0, 2}, 30}};
  s.instants = {{12.5, 0, 0, 2}, {1000.125, 3, 0, 1}};
  s.instants_left_out = 7;
  p.sampling = s;
  const std::string text = profile_to_json(p);
  auto back = profile_from_json(text, "p.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  const SamplingProfile& b = *back->sampling;
  EXPECT_EQ(b.frame_names, s.frame_names);
  EXPECT_EQ(b.frame_modules, s.frame_modules);
  // The outside row says so in the file (and only it): read back by that mark.
  ASSERT_EQ(b.layers.size(), 2u);
  EXPECT_FALSE(b.layers[0].outside);
  EXPECT_TRUE(b.layers[1].outside);
  EXPECT_EQ(text.find("\"outside\": true"), text.rfind("\"outside\": true"));
  ASSERT_EQ(b.stacks.size(), 2u);
  EXPECT_EQ(b.stacks[1].frames, (std::vector<int>{0, 2}));
  EXPECT_EQ(b.stacks[1].samples, 30u);
  ASSERT_EQ(b.instants.size(), 2u);
  EXPECT_DOUBLE_EQ(b.instants[1].time_us, 1000.125);
  EXPECT_EQ(b.instants[1].thread, 3);
  EXPECT_EQ(b.instants[1].frame, 1);
  EXPECT_EQ(b.instants_left_out, 7u);
  EXPECT_EQ(profile_to_json(*back), text);
  const auto refused = [&](const char* key, std::size_t i, const std::string& line, const std::string& message) {
    ordered_json j = ordered_json::parse(text);
    j["sampling"][key][i] = line;
    auto bad = profile_from_json(j.dump(), "bad.json");
    ASSERT_FALSE(bad.ok()) << line;
    EXPECT_THAT(bad.error().message, HasSubstr("bad.json"));
    EXPECT_THAT(bad.error().message, HasSubstr(message)) << line;
  };
  refused("stacks", 0, "0;3 10", "/sampling/stacks/0: the frame \"3\" is not an index below 3");
  refused("stacks", 0, "0;-1 10", "/sampling/stacks/0: the frame \"-1\"");
  refused("stacks", 0, "0;1", "expected 2 fields");
  refused("stacks", 1, "0;2 31", "/sampling/stacks: holds 41 samples; the profile has 40");
  refused("instants", 0, "-1.5 0 0 2", "/sampling/instants/0: the time \"-1.5\" is not a finite, non-negative number");
  refused("instants", 0, "nan 0 0 2", "the time \"nan\"");
  refused("instants", 1, "1.0 0 0 9", "/sampling/instants/1: the frame \"9\" is not an index below 3");
  refused("instants", 1, "1.0 0 x 1", "the row \"x\"");
  ordered_json j = ordered_json::parse(text);
  j["sampling"]["frame_modules"] = {"only one"};
  EXPECT_FALSE(profile_from_json(j.dump(), "bad.json").ok());
  // Written before the stacks were kept: read as before, without them.
  j = ordered_json::parse(text);
  for (const char* key : {"frame_names", "frame_modules", "stacks", "instants", "instants_left_out"}) j["sampling"].erase(key);
  auto old = profile_from_json(j.dump(), "old.json");
  ASSERT_TRUE(old.ok()) << old.error().message;
  EXPECT_TRUE(old->sampling->stacks.empty());
  EXPECT_TRUE(old->sampling->instants.empty());
}

// A regions program's sampling (HWPROF_SAMPLE): its windows and the samples past a full
// timeline read back; a file written before them (no such keys) still reads.
TEST(ProfileJson, RegionsSamplingReadsBackAndOlderFilesStillRead) {
  Profile p = test::synthetic_profile();
  SamplingProfile s;
  s.spec = "cpu-clock@1000";
  s.rate = "1000 Hz";
  s.samples = 40;
  s.timeline_full = 12;
  s.timeline_calls = 2000000;
  s.cost_from = "windows";
  s.overhead = std::nan("");
  s.overhead_reason = "no region had 5 calls wholly inside sampled windows";
  s.sampled_passes = 4;
  s.unsampled_passes = 3;
  p.sampling = s;
  const std::string text = profile_to_json(p);
  auto back = profile_from_json(text, "p.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->sampling->timeline_full, 12u);
  EXPECT_EQ(back->sampling->timeline_calls, 2000000u);
  EXPECT_EQ(back->sampling->cost_from, "windows");
  EXPECT_EQ(back->sampling->overhead_reason, s.overhead_reason);
  EXPECT_EQ(profile_to_json(*back), text);
  ordered_json j = ordered_json::parse(text);
  for (const char* key : {"cost_from", "overhead_reason", "timeline_full", "timeline_calls"}) j["sampling"].erase(key);
  auto old = profile_from_json(j.dump(), "old.json");
  ASSERT_TRUE(old.ok()) << old.error().message;
  EXPECT_EQ(old->sampling->cost_from, "passes");
  EXPECT_EQ(old->sampling->timeline_full, 0u);
  j = ordered_json::parse(text);
  j["sampling"]["timeline_full"] = 41;
  EXPECT_FALSE(profile_from_json(j.dump(), "bad.json").ok());
  j = ordered_json::parse(text);
  j["sampling"]["cost_from"] = "laps";
  auto bad = profile_from_json(j.dump(), "bad.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("/sampling/cost_from"));
}

TEST(ProfileJson, HasTheDocumentedFields) {
  const ordered_json j = ordered_json::parse(profile_to_json(test::synthetic_profile()));
  for (const char* key : {"schema", "kind", "machine", "model", "batch", "phase", "total", "layers"}) EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["schema"], kProfileSchema);
  EXPECT_EQ(j["kind"], "model");
  for (const auto& layer : j["layers"]) {
    for (const char* key : {"name", "op", "params", "macs", "flops", "bytes", "time_ms", "gflops_per_s", "gbytes_per_s", "intensity",
                            "attainable_gflops_per_s", "efficiency", "bound", "counters"}) {
      EXPECT_TRUE(layer.contains(key)) << layer["name"] << " lacks " << key;
    }
    EXPECT_TRUE(layer["bytes"].contains("value"));
    EXPECT_TRUE(layer["bytes"].contains("source"));
    for (const char* key : {"median", "mean", "min", "max", "p95", "p99", "n"}) EXPECT_TRUE(layer["time_ms"].contains(key)) << key;
  }
  const auto& conv = j["layers"][0];
  EXPECT_EQ(conv["name"], "conv1");
  EXPECT_EQ(conv["bound"], "compute");
  EXPECT_NEAR(conv["gflops_per_s"].get<double>(), 160e6 / 2e-3 * 1e-9, 1e-9);
  EXPECT_NEAR(conv["intensity"].get<double>(), 160e6 / 5.5e6, 1e-9);
}

TEST(ProfileJson, AnUnavailableCounterIsNullWithItsReasonNeverZero) {
  const ordered_json j = ordered_json::parse(profile_to_json(test::synthetic_profile()));
  for (const auto& layer : j["layers"]) {
    const auto& llc = layer["counters"]["LLC-load-misses"];
    EXPECT_TRUE(llc["value"].is_null());
    EXPECT_EQ(llc["status"], "unsupported");
    EXPECT_THAT(llc["reason"].get<std::string>(), HasSubstr("no hardware PMU"));
    EXPECT_TRUE(layer["counters"]["cycles"]["value"].is_number());
    EXPECT_EQ(layer["counters"]["instructions"]["status"], "multiplexed");
    EXPECT_TRUE(layer["metrics"]["DRAM GB/s"]["value"].is_null());
  }
}

TEST(ProfileJson, WithoutCalibrationTheRooflineFieldsAreNull) {
  const ordered_json j = ordered_json::parse(profile_to_json(test::synthetic_profile({.train = false, .calibrated = false})));
  EXPECT_TRUE(j["machine"]["ceilings"].is_null());
  for (const auto& layer : j["layers"]) {
    EXPECT_TRUE(layer["roofline"].is_null());
    EXPECT_TRUE(layer["bound"].is_null());
    EXPECT_TRUE(layer["efficiency"].is_null());
    EXPECT_FALSE(layer["roofline_error"].get<std::string>().empty());
    EXPECT_EQ(layer["bytes"]["source"], "analytic");
  }
  // Achieved rates still come from the analytic FLOPs and the measured time.
  EXPECT_TRUE(j["layers"][0]["gflops_per_s"].is_number());
  EXPECT_TRUE(j["layers"][5]["intensity"].is_null());  // flatten moves nothing
}

// ---- malformed files -------------------------------------------------------------------

struct Broken {
  std::string name;
  std::function<void(ordered_json&)> mutate;
  std::string pointer;  // where the message must point ("" : no pointer check)
  std::string problem;  // a substring of the message
};

void PrintTo(const Broken& b, std::ostream* os) {
  *os << b.name;
}

class MalformedProfile : public ::testing::TestWithParam<Broken> {};

// The line:column where `pointer`'s value starts in `text`, found independently of the
// reader: the pointer's last key is searched for after its parents' keys.
TEST_P(MalformedProfile, IsRefusedWithThePlace) {
  ordered_json j = ordered_json::parse(profile_to_json(test::synthetic_profile()));
  GetParam().mutate(j);
  const std::string text = j.dump(2);
  auto p = profile_from_json(text, "bad.json");
  ASSERT_FALSE(p.ok()) << "accepted a profile with " << GetParam().name;
  const std::string& message = p.error().message;
  EXPECT_THAT(message, HasSubstr(GetParam().problem));
  EXPECT_TRUE(starts_with_place(message, "bad.json")) << message;
  if (!GetParam().pointer.empty()) {
    EXPECT_THAT(message, HasSubstr(": " + GetParam().pointer + ": ")) << message;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, MalformedProfile,
    ::testing::Values(
        Broken{"RootIsAList", [](auto& j) { j = ordered_json::array(); }, "", "a profile is a JSON object"},
        Broken{"NewerSchema", [](auto& j) { j["schema"] = kProfileSchema + 1; }, "/schema", "newer hwprof"},
        Broken{"OlderSchema", [](auto& j) { j["schema"] = 0; }, "/schema", "expected an integer >= 1"},
        Broken{"MissingLayers", [](auto& j) { j.erase("layers"); }, "", "missing \"layers\""},
        Broken{"LayersNotAList", [](auto& j) { j["layers"] = 3; }, "/layers", "expected a list of layers"},
        Broken{"StringForMedian", [](auto& j) { j["layers"][2]["time_ms"]["median"] = "fast"; }, "/layers/2/time_ms/median",
               "expected a number, got string"},
        Broken{"NegativeFlops", [](auto& j) { j["layers"][1]["flops"] = -5; }, "/layers/1/flops", "expected an integer >= 0"},
        Broken{"MedianOutsideRange", [](auto& j) { j["layers"][0]["time_ms"]["median"] = 1e6; }, "/layers/0/time_ms/median", "outside [min, max]"},
        Broken{"UnknownStatus", [](auto& j) { j["layers"][3]["counters"]["cycles"]["status"] = "fine"; }, "/layers/3/counters/cycles/status",
               "unknown value \"fine\""},
        Broken{"ZeroForAnUnsupportedCounter", [](auto& j) { j["layers"][0]["counters"]["LLC-load-misses"]["value"] = 0; },
               "/layers/0/counters/LLC-load-misses/value", "an unavailable counter has \"value\": null"},
        Broken{"NullForACountedCounter", [](auto& j) { j["layers"][0]["counters"]["cycles"]["value"] = nullptr; }, "/layers/0/counters/cycles/value",
               "null, but the status says the counter was read"},
        Broken{"MetricWithSlashInItsName", [](auto& j) { j["layers"][4]["metrics"]["DRAM GB/s"]["unit"] = 7; }, "/layers/4/metrics/DRAM GB~1s/unit",
               "expected a string"},
        Broken{"UnknownBound", [](auto& j) { j["layers"][0]["bound"] = "slow"; }, "/layers/0/bound", "unknown value \"slow\""},
        Broken{"BoundWithoutRoofline", [](auto& j) { j["layers"][0]["roofline"] = nullptr; }, "/layers/0/bound", "without a roofline placement"},
        Broken{"EfficiencyMissingWithRoofline", [](auto& j) { j["layers"][0]["efficiency"] = nullptr; }, "/layers/0/efficiency",
               "null, but the layer has a roofline placement"},
        Broken{"UnknownBytesOrigin", [](auto& j) { j["layers"][0]["bytes"]["origin"] = "guess"; }, "/layers/0/bytes/origin",
               "expected dram-counters, llc-misses or analytic-minimum"},
        Broken{"NegativeDimension", [](auto& j) { j["layers"][0]["output_shape"][1] = -2; }, "/layers/0/output_shape/1",
               "non-negative integer dimension"},
        Broken{"NegativeShare", [](auto& j) { j["layers"][0]["time_share"] = -0.5; }, "/layers/0/time_share", "non-negative finite number"},
        Broken{"UnknownPhase", [](auto& j) { j["phase"] = "inference"; }, "/phase", "unknown phase \"inference\"; expected forward or train"},
        Broken{"UnknownPhaseOfVersion1",
               [](auto& j) {
                 j["schema"] = 1;
                 j["phase"] = "inference";
               },
               "/phase", "unknown phase \"inference\"; expected forward, train or regions"},
        Broken{"MissingKind", [](auto& j) { j.erase("kind"); }, "", "missing \"kind\""},
        Broken{"UnknownKind", [](auto& j) { j["kind"] = "tensorflow"; }, "/kind",
               "unknown value \"tensorflow\"; expected model, regions, merged or torch"},
        Broken{"RegionsKindWithAModelPhase", [](auto& j) { j["kind"] = "regions"; }, "/phase", "a regions profile's phase is \"regions\""},
        Broken{"ModelKindWithTheRegionsPhase", [](auto& j) { j["phase"] = "regions"; }, "/phase", "expected forward or train (a model profile)"},
        Broken{"TotalPhaseNotTheProfiles", [](auto& j) { j["total"]["phase"] = "regions"; }, "/total/phase", "the total's phase is the profile's"},
        Broken{"UnknownLayerPhase", [](auto& j) { j["layers"][3]["phase"] = "update"; }, "/layers/3/phase",
               "expected forward, backward, optimizer, region, recompute or setup"},
        Broken{"BadTraceCategory", [](auto& j) { j["trace"][1]["category"] = "kernel"; }, "/trace/1/category", "expected phase or layer"},
        Broken{"NegativeTraceDuration", [](auto& j) { j["trace"][0]["duration_us"] = -1.0; }, "/trace/0/duration_us", "non-negative finite number"},
        Broken{"MachineCpuWithoutModel", [](auto& j) { j["machine"]["cpu"].erase("model"); }, "/machine/cpu", "missing \"model\""},
        Broken{"CeilingsWithoutTriad", [](auto& j) { j["machine"]["ceilings"]["bandwidth"]["l2"].erase("triad_gbps"); },
               "/machine/ceilings/bandwidth/l2", "missing \"triad_gbps\""},
        Broken{"PageFaultsText", [](auto& j) { j["memory"]["measured"]["page_faults"] = "many"; }, "/memory/measured/page_faults",
               "expected an integer"},
        Broken{"NegativeSample", [](auto& j) { j["layers"][1]["samples_ms"][2] = -1.0; }, "/layers/1/samples_ms/2",
               "finite, non-negative time in ms"},
        Broken{"SamplesNotAList", [](auto& j) { j["layers"][1]["samples_ms"] = 4.0; }, "/layers/1/samples_ms", "expected a list of times"},
        Broken{"UnknownOptimizer", [](auto& j) { j["memory"]["analytic"]["optimizer"] = "lion"; }, "/memory/analytic/optimizer",
               "unknown optimizer"}),
    [](const ::testing::TestParamInfo<Broken>& param_info) { return param_info.param.name; });

TEST(MalformedProfile, NamesTheExactLineAndColumn) {
  ordered_json j = ordered_json::parse(profile_to_json(test::synthetic_profile()));
  j["layers"][2]["time_ms"]["median"] = "fast";
  const std::string text = j.dump(2);
  // The only "fast" value in the file: its line and column, counted here by hand.
  const std::size_t at = text.find("\"fast\"");
  ASSERT_NE(at, std::string::npos);
  const std::size_t line = static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n')) + 1;
  const std::size_t column = at - text.rfind('\n', at);
  auto p = profile_from_json(text, "bad.json");
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.error().message, StartsWith("bad.json:" + std::to_string(line) + ":" + std::to_string(column) + ": /layers/2/time_ms/median:"));
}

TEST(MalformedProfile, TruncatedOrEmptyFilesSaySo) {
  const std::string text = profile_to_json(test::synthetic_profile());
  auto truncated = profile_from_json(text.substr(0, text.size() / 2), "cut.json");
  ASSERT_FALSE(truncated.ok());
  EXPECT_TRUE(starts_with_place(truncated.error().message, "cut.json")) << truncated.error().message;
  EXPECT_THAT(truncated.error().message, HasSubstr(": not a valid profile (corrupt or truncated JSON"));
  auto empty = profile_from_json("  \n", "empty.json");
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.error().message, HasSubstr("empty.json: the profile is empty"));
  auto garbage = profile_from_json("{\n  \"schema\": 1,\n  oops\n}", "g.json");
  ASSERT_FALSE(garbage.ok());
  EXPECT_THAT(garbage.error().message, StartsWith("g.json:3:3: not a valid profile"));
}

TEST(ProfileJson, AnEmptyProfileRoundTrips) {
  // What a library user's hand-made or a failed run's Profile may look like: no machine, no
  // layers, no trace. It still writes and reads back.
  const Profile empty;
  const std::string text = profile_to_json(empty);
  EXPECT_TRUE(ordered_json::parse(text)["machine"]["cpu"].is_null());
  auto back = profile_from_json(text, "empty.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(profile_to_json(*back), text);
}

TEST(ProfileJson, InvalidUtf8IsReplacedNotThrown) {
  Profile p = test::synthetic_profile();
  p.layers[0].name =
      "conv\xff\xfe"
      "1";
  p.machine.host = "host\xc3";
  std::string text;
  ASSERT_NO_THROW(text = profile_to_json(p));
  auto back = profile_from_json(text, "u.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->layers[0].name,
            "conv\xef\xbf\xbd\xef\xbf\xbd"
            "1");  // U+FFFD twice
}

TEST(LoadProfile, ReadsAFileAndNamesAMissingOne) {
  const auto dir = std::filesystem::temp_directory_path() / ("hwprof-profile-json-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = (dir / "p.json").string();
  std::ofstream(path) << profile_to_json(test::synthetic_profile());
  auto p = load_profile(path);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->layers.size(), test::synthetic_profile().layers.size());
  auto missing = load_profile((dir / "none.json").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("none.json: cannot open the profile"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hwprof
