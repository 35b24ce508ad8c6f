// The names of a profile's kind and phases, one switch each, in one place: profile.json
// writes them (docs/profile.md, "Kinds"), its reader and the reports read them back through
// the parse functions, which try every value's name.
#include <array>
#include <optional>
#include <string_view>

#include "hwprof/engine/profile.hpp"

namespace hwprof {
namespace {

// Every value of each enum, for the parse functions.
constexpr std::array kKinds = {ProfileKind::model, ProfileKind::regions, ProfileKind::merged, ProfileKind::torch};
constexpr std::array kRunPhases = {RunPhase::inference, RunPhase::train};
constexpr std::array kLayerPhases = {LayerPhase::forward, LayerPhase::backward,  LayerPhase::optimizer,
                                     LayerPhase::region,  LayerPhase::recompute, LayerPhase::setup};

template <typename T, std::size_t N>
std::optional<T> parse_name(const std::array<T, N>& values, std::string_view (*name_of)(T) noexcept, std::string_view name) noexcept {
  for (const T v : values) {
    if (name_of(v) == name) return v;
  }
  return std::nullopt;
}

}  // namespace

std::string_view profile_kind_name(ProfileKind kind) noexcept {
  switch (kind) {
    case ProfileKind::model:
      return "model";
    case ProfileKind::regions:
      return "regions";
    case ProfileKind::merged:
      return "merged";
    case ProfileKind::torch:
      return "torch";
  }
  return "?";
}

std::optional<ProfileKind> parse_profile_kind(std::string_view name) noexcept {
  return parse_name(kKinds, profile_kind_name, name);
}

std::string_view run_phase_name(RunPhase phase) noexcept {
  switch (phase) {
    case RunPhase::inference:
      return "forward";
    case RunPhase::train:
      return "train";
  }
  return "?";
}

std::optional<RunPhase> parse_run_phase(std::string_view name) noexcept {
  return parse_name(kRunPhases, run_phase_name, name);
}

std::string_view layer_phase_name(LayerPhase phase) noexcept {
  switch (phase) {
    case LayerPhase::forward:
      return "forward";
    case LayerPhase::backward:
      return "backward";
    case LayerPhase::optimizer:
      return "optimizer";
    case LayerPhase::region:
      return "region";
    case LayerPhase::recompute:
      return "recompute";
    case LayerPhase::setup:
      return "setup";
  }
  return "?";
}

std::string_view time_basis_name(TimeBasis basis) noexcept {
  switch (basis) {
    case TimeBasis::pass:
      return "pass";
    case TimeBasis::step:
      return "step";
    case TimeBasis::run:
      return "run";
  }
  return "?";
}

std::optional<TimeBasis> parse_time_basis(std::string_view name) noexcept {
  for (TimeBasis b : {TimeBasis::pass, TimeBasis::step, TimeBasis::run}) {
    if (time_basis_name(b) == name) return b;
  }
  return std::nullopt;
}

std::optional<LayerPhase> parse_layer_phase(std::string_view name) noexcept {
  return parse_name(kLayerPhases, layer_phase_name, name);
}

bool is_program_run(ProfileKind kind) noexcept {
  switch (kind) {
    case ProfileKind::regions:
    case ProfileKind::torch:
      return true;
    case ProfileKind::model:
    case ProfileKind::merged:
      return false;
  }
  return false;
}

std::string_view profile_phase_name(const Profile& profile) noexcept {
  switch (profile.kind) {
    case ProfileKind::regions:
    case ProfileKind::torch:
      return "regions";
    case ProfileKind::model:
    case ProfileKind::merged:
      return run_phase_name(profile.phase);
  }
  return "?";
}

}  // namespace hwprof
