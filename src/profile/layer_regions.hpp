// The profiler's LayerObserver: every layer boundary the executor reports becomes a session
// region boundary (one region per layer and phase), and in the iterations kept for the
// timeline also a span. Allocation-free on the measured path: the id table and the span
// storage are sized when it is made.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "hwprof/engine/executor.hpp"
#include "hwprof/session.hpp"

namespace hwprof {

inline std::uint64_t steady_ns() noexcept {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

inline constexpr Phase kPhases[] = {Phase::forward, Phase::backward, Phase::optimizer};
inline constexpr std::size_t kPhaseCount = 3;

// One layer span of a recorded iteration, as the observer saw it.
struct RawSpan {
  int layer = 0;
  Phase phase = Phase::forward;
  int iteration = 0;
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
};

class LayerRegions final : public LayerObserver {
 public:
  // The longest gap between one layer's end and the next one's begin over which they share
  // one counter reading (Session::begin_after_end); the gap's counts go to the next layer.
  static constexpr std::uint64_t kSharedReadingGapNs = 5000;
  LayerRegions(Session& session, std::size_t layers, std::size_t spans_capacity)
      : session_(session), ids_(layers * kPhaseCount, -1), probe_ids_(layers * kPhaseCount, -1), starts_(layers * kPhaseCount, 0) {
    spans_.reserve(spans_capacity);
  }
  void set_id(int layer, Phase phase, int id) { ids_[slot(layer, phase)] = id; }
  int id(int layer, Phase phase) const { return ids_[slot(layer, phase)]; }
  // An empty region opened and closed right before the layer's own (src/profile/counter_truth.hpp):
  // what the readings cost at this boundary, under the conditions the layer's readings meet.
  void set_probe(int layer, Phase phase, int id) { probe_ids_[slot(layer, phase)] = id; }
  int probe(int layer, Phase phase) const { return probe_ids_[slot(layer, phase)]; }
  void record_iteration(int iteration) noexcept { recording_ = iteration; }
  void stop_recording() noexcept { recording_ = -1; }
  const std::vector<RawSpan>& spans() const noexcept { return spans_; }

  void on_begin(int layer, Phase phase) noexcept override {
    const std::size_t s = slot(layer, phase);
    if (s >= ids_.size()) return;
    if (recording_ >= 0) starts_[s] = steady_ns();
    // Layers follow one another: the previous layer's closing reading opens this one when
    // the executor came straight here (a few microseconds of freeing dead tensors at most).
    if (probe_ids_[s] >= 0) {
      session_.begin_after_end(probe_ids_[s], kSharedReadingGapNs);
      session_.end(probe_ids_[s]);
    }
    session_.begin_after_end(ids_[s], kSharedReadingGapNs);
  }
  void on_end(int layer, Phase phase) noexcept override {
    const std::size_t s = slot(layer, phase);
    if (s >= ids_.size()) return;
    session_.end(ids_[s]);
    if (recording_ >= 0 && spans_.size() < spans_.capacity()) {
      spans_.push_back({layer, phase, recording_, starts_[s], steady_ns()});
    }
  }

 private:
  static std::size_t slot(int layer, Phase phase) noexcept { return static_cast<std::size_t>(layer) * kPhaseCount + static_cast<std::size_t>(phase); }
  Session& session_;
  std::vector<int> ids_;
  std::vector<int> probe_ids_;
  std::vector<std::uint64_t> starts_;
  std::vector<RawSpan> spans_;
  int recording_ = -1;
};

}  // namespace hwprof
