// Version-1 profiles (docs/profile.md, "Schema history"): two files written by hwprof before
// profiles had a kind (tests/fixtures/profiles/v1/) are read, migrated to a kind, and render
// byte for byte as the hwprof that wrote them rendered them (rendered/ there); the JSON is the
// file itself, written again as version 2. Version 2 written, read back and written again is
// identical for every kind.
#include <filesystem>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hwprof/engine/profile.hpp"
#include "hwprof/engine/report.hpp"
#include "synthetic_profile.hpp"
#include "text_support.hpp"

namespace hwprof {
namespace {

using nlohmann::ordered_json;
using ::testing::HasSubstr;

const std::filesystem::path kV1 = std::filesystem::path(HWPROF_FIXTURES_DIR) / "profiles" / "v1";

Profile load_v1(const std::string& name) {
  auto p = load_profile((kV1 / (name + ".json")).string());
  EXPECT_TRUE(p.ok()) << p.error().message;
  return p.ok() ? *p : Profile{};
}

// The version-1 text as version 2 writes it: the schema's number, and the kind after it.
std::string as_version_2(std::string v1_text, std::string_view kind) {
  const std::string old_line = "  \"schema\": 1,\n";
  const std::size_t at = v1_text.find(old_line);
  EXPECT_EQ(at, v1_text.find('\n') + 1) << "the schema is the first field";
  if (at == std::string::npos) return v1_text;
  return v1_text.replace(at, old_line.size(), "  \"schema\": 2,\n  \"kind\": \"" + std::string(kind) + "\",\n");
}

TEST(ProfileSchemaV1, AModelProfileMigratesToKindModel) {
  const Profile p = load_v1("lenet5");
  EXPECT_EQ(p.schema, 1) << "the version it was read from";
  EXPECT_EQ(p.kind, ProfileKind::model);
  EXPECT_EQ(p.phase, RunPhase::inference);
  EXPECT_EQ(profile_phase_name(p), "forward");
  EXPECT_EQ(p.model, "lenet5");
  EXPECT_EQ(p.batch, 1);
  ASSERT_EQ(p.layers.size(), 12u);
  for (const LayerProfile& l : p.layers) EXPECT_EQ(l.phase, LayerPhase::forward) << l.name;
  EXPECT_EQ(p.layers[0].name, "conv1");
  EXPECT_EQ(p.total.op, "model");
  EXPECT_GT(p.total.time_ms.n, 0u);
  EXPECT_TRUE(p.machine.ceilings.has_value());
  EXPECT_TRUE(p.region_threads.empty());
  EXPECT_TRUE(p.call_paths.empty());
}

// A profile written before counters carried their kind gets what hwprof then took each for
// (docs/profile.md, "Older profiles"); a kind hwprof does not know is refused by name.
TEST(ProfileSchemaV1, CountersWithoutAKindGetWhatTheyWereTakenFor) {
  const Profile p = load_v1("lenet5");
  ASSERT_EQ(p.events.size(), 3u);
  EXPECT_EQ(p.events[0].kind, EventKind::task_clock);
  EXPECT_EQ(p.events[1].kind, EventKind::core_cycles);
  EXPECT_EQ(p.events[2].kind, EventKind::other);
  ASSERT_EQ(p.layers[0].counters.size(), 3u);
  EXPECT_EQ(p.layers[0].counters[0].kind, EventKind::task_clock);
  EXPECT_EQ(p.layers[0].counters[1].kind, EventKind::core_cycles);
  std::string text = profile_to_json(p);
  EXPECT_NE(text.find("\"kind\": \"core-cycles\""), std::string::npos);
  const auto again = profile_from_json(text, "again.json");
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->layers[0].counters[0].kind, EventKind::task_clock);
  const std::size_t at = text.find("\"kind\": \"core-cycles\"");
  text.replace(at, std::string("\"kind\": \"core-cycles\"").size(), "\"kind\": \"warp-drive\"");
  const auto refused = profile_from_json(text, "bad.json");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("unknown value \"warp-drive\""), std::string::npos) << refused.error().message;
}

TEST(ProfileSchemaV1, ARegionsProfileMigratesToKindRegions) {
  const Profile p = load_v1("regions-rank0");
  EXPECT_EQ(p.schema, 1);
  EXPECT_EQ(p.kind, ProfileKind::regions);
  EXPECT_EQ(profile_phase_name(p), "regions");
  ASSERT_EQ(p.layers.size(), 7u);
  for (const LayerProfile& l : p.layers) {
    EXPECT_EQ(l.phase, LayerPhase::region) << l.name;
    EXPECT_EQ(l.op, "region") << l.name;
  }
  EXPECT_EQ(p.layers[0].name, "train_step");
  EXPECT_EQ(p.rank, 0);
  EXPECT_EQ(p.rank_count, 3);
  EXPECT_FALSE(p.region_threads.empty());
  EXPECT_FALSE(p.call_paths.empty());
  EXPECT_EQ(p.trace.size(), 35u);
  // Its rows' calls and times, which version 1 did not write: over the run, from the per-thread
  // rows and the shares of the outermost regions' time.
  EXPECT_EQ(p.time_basis, TimeBasis::run);
  EXPECT_EQ(p.layers[0].calls, 100u);
  EXPECT_NEAR(p.layers[0].total_ms, p.total.time_ms.median, 1e-9) << "train_step is the outermost region";
  EXPECT_NEAR(p.layers[1].total_ms, 22.996, 1e-3) << "fc1, as its call path says";
  EXPECT_EQ(p.layers[1].basis_ms, p.layers[1].total_ms);
}

// A written profile without the fields version 2 gained after these files were written
// (docs/profile.md, "Older profiles"): a program's time basis and steps, a row's impossible
// flag, and a program's rows' calls and times (a version-1 regions profile's are read over the
// run, from its per-thread rows and shares), with its derived rates, now over its mean call.
std::string without_later_fields(const std::string& json_text) {
  ordered_json j = ordered_json::parse(json_text);
  for (const char* key : {"time_basis", "steps", "step_time_ms"}) j.erase(key);
  const bool program = j["kind"] != "model";
  const auto strip = [&](ordered_json& row) {
    for (const char* key : {"impossible", "calls", "total_ms", "basis_ms"}) row.erase(key);
    if (program) {
      row.erase("gflops_per_s");
      row.erase("gbytes_per_s");
    }
  };
  strip(j["total"]);
  for (ordered_json& row : j["layers"]) strip(row);
  // Each counter's and event's kind: written since counters carry one.
  for (ordered_json* row : {&j["total"]}) {
    for (auto& [name, counter] : (*row)["counters"].items()) counter.erase("kind");
  }
  for (ordered_json& row : j["layers"]) {
    for (auto& [name, counter] : row["counters"].items()) counter.erase("kind");
  }
  for (ordered_json& event : j["events"]) event.erase("kind");
  return j.dump(2);
}

class V1Rendering : public ::testing::TestWithParam<const char*> {};

// Each output as `hwprof report` wrote it from this file before version 2 (the fixture
// folder's README.md says how rendered/ was made).
TEST_P(V1Rendering, IsWhatTheHwprofThatWroteItRendered) {
  const std::string name = GetParam();
  const Profile p = load_v1(name);
  const auto before = [&](const std::string& suffix) {
    const std::string text = test::read_file((kV1 / "rendered" / (name + suffix)).string());
    EXPECT_FALSE(text.empty()) << name << suffix;
    return text;
  };
  EXPECT_EQ(profile_table(p, {.top = 0}), before(".table.txt"));
  EXPECT_EQ(profile_csv(p), before(".csv"));
  EXPECT_EQ(html_report(p), before(".html"));
  EXPECT_EQ(roofline_svg(p), before(".svg"));
  EXPECT_EQ(chrome_trace(p), before(".trace.json"));
  // The JSON is the file itself (the old hwprof wrote it again unchanged), as version 2, with
  // the fields added since.
  const std::string v1_text = test::read_file((kV1 / (name + ".json")).string());
  EXPECT_EQ(without_later_fields(profile_to_json(p)), without_later_fields(as_version_2(v1_text, profile_kind_name(p.kind))));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, V1Rendering, ::testing::Values("lenet5", "regions-rank0"),
                         [](const ::testing::TestParamInfo<const char*>& param_info) {
                           return std::string(param_info.param) == "lenet5" ? std::string("Model") : std::string("Regions");
                         });

// A version-1 file of each phase, made from version 2 by the two changes version 2 made (its
// training profile's total has phase "train", which the layers never have): read as the same
// profile, it renders the same.
TEST(ProfileSchemaV1, EachPhaseMigratesToTheProfileItWasWrittenFrom) {
  for (const bool train : {false, true}) {
    for (const ProfileKind kind : {ProfileKind::model, ProfileKind::regions}) {
      Profile p = test::synthetic_profile({.train = train});
      p.kind = kind;
      if (kind == ProfileKind::regions && train) continue;  // a regions profile has no training step
      SCOPED_TRACE(testing::Message() << profile_phase_name(p));
      ordered_json j = ordered_json::parse(profile_to_json(p));
      j["schema"] = 1;
      j.erase("kind");
      auto v1 = profile_from_json(j.dump(2), "v1.json");
      ASSERT_TRUE(v1.ok()) << v1.error().message;
      auto v2 = profile_from_json(profile_to_json(p), "v2.json");
      ASSERT_TRUE(v2.ok()) << v2.error().message;
      EXPECT_EQ(v1->kind, kind);
      EXPECT_EQ(v1->phase, p.phase);
      EXPECT_EQ(profile_to_json(*v1), profile_to_json(*v2));
      EXPECT_EQ(profile_table(*v1, {.top = 0}), profile_table(*v2, {.top = 0}));
      EXPECT_EQ(profile_csv(*v1), profile_csv(*v2));
      EXPECT_EQ(html_report(*v1), html_report(*v2));
    }
  }
}

// What version 1 did not check stays unchecked there: a total whose phase is not the
// profile's (a Profile made by hand wrote ""), and a layer with phase "" (read as forward).
TEST(ProfileSchemaV1, AHandMadeProfilesEmptyPhasesStillRead) {
  ordered_json j = ordered_json::parse(profile_to_json(test::synthetic_profile({.train = true})));
  j["schema"] = 1;
  j.erase("kind");
  j["total"]["phase"] = "";
  j["layers"][0]["phase"] = "";
  auto p = profile_from_json(j.dump(2), "old.json");
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->phase, RunPhase::train);
  EXPECT_EQ(p->layers[0].phase, LayerPhase::forward);
  // Version 2 checks both.
  j["schema"] = 2;
  j["kind"] = "model";
  auto total = profile_from_json(j.dump(2), "new.json");
  ASSERT_FALSE(total.ok());
  EXPECT_THAT(total.error().message, HasSubstr("/total/phase: \"\"; the total's phase is the profile's, \"train\""));
  j["total"]["phase"] = "train";
  auto layer = profile_from_json(j.dump(2), "new.json");
  ASSERT_FALSE(layer.ok());
  EXPECT_THAT(layer.error().message,
              HasSubstr("/layers/0/phase: unknown value \"\"; expected forward, backward, optimizer, region, recompute or setup"));
}

TEST(ProfileSchemaV1, AMigratedFileIsWrittenAsVersion2AndReadsBackTheSame) {
  for (const char* name : {"lenet5", "regions-rank0"}) {
    SCOPED_TRACE(name);
    const Profile p = load_v1(name);
    const std::string v2 = profile_to_json(p);
    const ordered_json j = ordered_json::parse(v2);
    EXPECT_EQ(j["schema"], 2);
    EXPECT_EQ(j["kind"], std::string(profile_kind_name(p.kind)));
    auto back = profile_from_json(v2, "v2.json");
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(back->schema, 2);
    EXPECT_EQ(back->kind, p.kind);
    EXPECT_EQ(profile_to_json(*back), v2);
  }
}

// Every kind, the reserved one too, and both run phases: written, read back and written
// again, identical.
TEST(ProfileSchemaV2, WrittenReadBackAndWrittenAgainIsIdentical) {
  for (const ProfileKind kind : {ProfileKind::model, ProfileKind::regions, ProfileKind::merged, ProfileKind::torch}) {
    for (const bool train : {false, true}) {
      Profile p = test::synthetic_profile({.train = train});
      p.kind = kind;
      SCOPED_TRACE(testing::Message() << profile_kind_name(kind) << " " << profile_phase_name(p));
      const std::string first = profile_to_json(p);
      const ordered_json j = ordered_json::parse(first);
      EXPECT_EQ(j["schema"], kProfileSchema);
      EXPECT_EQ(j["kind"], std::string(profile_kind_name(kind)));
      EXPECT_EQ(j["phase"], std::string(profile_phase_name(p)));
      EXPECT_EQ(j["total"]["phase"], j["phase"]) << "the total's phase is the profile's";
      auto back = profile_from_json(first, "p.json");
      ASSERT_TRUE(back.ok()) << back.error().message;
      EXPECT_EQ(back->kind, kind);
      // A regions or torch profile has no training step: its run phase is not written, and
      // reads back as inference.
      EXPECT_EQ(back->phase, is_program_run(kind) ? RunPhase::inference : p.phase);
      EXPECT_EQ(profile_to_json(*back), first);
    }
  }
}

}  // namespace
}  // namespace hwprof
