// The names of a profile's kind and phases (src/placement/profile_kind.cpp): each value's name
// parses back to it, an unknown name to nothing, and the phase a profile writes follows its kind.
#include <string_view>

#include <gtest/gtest.h>

#include "hwprof/engine/profile.hpp"

namespace hwprof {
namespace {

TEST(ProfileKind, EveryNameParsesBackToItsValue) {
  for (const ProfileKind k : {ProfileKind::model, ProfileKind::regions, ProfileKind::merged, ProfileKind::torch}) {
    EXPECT_EQ(parse_profile_kind(profile_kind_name(k)), k) << profile_kind_name(k);
  }
  for (const RunPhase r : {RunPhase::inference, RunPhase::train}) EXPECT_EQ(parse_run_phase(run_phase_name(r)), r) << run_phase_name(r);
  for (const LayerPhase l : {LayerPhase::forward, LayerPhase::backward, LayerPhase::optimizer, LayerPhase::region}) {
    EXPECT_EQ(parse_layer_phase(layer_phase_name(l)), l) << layer_phase_name(l);
  }
}

TEST(ProfileKind, NamesAreTheOnesProfileJsonHasAlwaysWritten) {
  EXPECT_EQ(profile_kind_name(ProfileKind::model), "model");
  EXPECT_EQ(profile_kind_name(ProfileKind::regions), "regions");
  EXPECT_EQ(run_phase_name(RunPhase::inference), "forward");
  EXPECT_EQ(run_phase_name(RunPhase::train), "train");
  EXPECT_EQ(layer_phase_name(LayerPhase::region), "region");
  for (const std::string_view unknown : {"", "inference", "Forward", "regions ", "hwprof-merge"}) {
    EXPECT_FALSE(parse_profile_kind(unknown)) << unknown;
    EXPECT_FALSE(parse_run_phase(unknown)) << unknown;
    EXPECT_FALSE(parse_layer_phase(unknown)) << unknown;
  }
}

TEST(ProfileKind, AProfileWritesRegionsOrItsRunPhase) {
  Profile p;
  EXPECT_EQ(p.kind, ProfileKind::model);
  EXPECT_EQ(profile_phase_name(p), "forward");
  p.phase = RunPhase::train;
  EXPECT_EQ(profile_phase_name(p), "train");
  p.kind = ProfileKind::merged;
  EXPECT_EQ(profile_phase_name(p), "train");
  EXPECT_FALSE(is_program_run(p.kind));
  // A program's own run, its regions or a PyTorch program's ops: no run phase of its own.
  for (const ProfileKind k : {ProfileKind::regions, ProfileKind::torch}) {
    p.kind = k;
    EXPECT_EQ(profile_phase_name(p), "regions") << profile_kind_name(k);
    EXPECT_TRUE(is_program_run(k));
  }
  EXPECT_FALSE(is_program_run(ProfileKind::model));
}

}  // namespace
}  // namespace hwprof
