#include "calibrate/memory_sweep.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include <fmt/format.h>
#include <unistd.h>

#include "common/memory_budget.hpp"
#include "common/stages.hpp"
#include "machine/cache_topology.hpp"

namespace hwprof::calibration {
namespace {

// Reported cache ends above this are not made denser in the plan: points there are costly,
// and a reported size there (a VM's "508 MiB L3") is often no knee at all.
constexpr std::int64_t kDenseUpTo = std::int64_t{256} << 20;
constexpr std::int64_t kMinLast = std::int64_t{256} << 20;
constexpr std::int64_t kFallbackL1PerWorker = 32 << 10;
// The plan ends this far past the largest reported cache: DRAM needs kTailPoints points above
// it, and half-octave steps put three there by 2.83×.
constexpr double kPastLargest = 2.9;
// Quick calibration's DRAM points, as multiples of the largest reported cache.
constexpr double kQuickTail[] = {1.1, 1.25, 1.41};
// A cache level's other kernels run at this many of its points, spread over it.
constexpr std::size_t kLevelPoints = 3;

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

int kernel_order(const BandwidthSample& s) {
  return static_cast<int>(s.kernel);
}

// New samples replace those of the same size and kernel; sizes ascending, kernels in order.
void merge_samples(std::vector<BandwidthSample>& into, const std::vector<BandwidthSample>& more) {
  for (const BandwidthSample& m : more) {
    auto same =
        std::find_if(into.begin(), into.end(), [&](const BandwidthSample& s) { return s.working_set == m.working_set && s.kernel == m.kernel; });
    if (same != into.end()) {
      *same = m;
    } else {
      into.push_back(m);
    }
  }
  std::stable_sort(into.begin(), into.end(), [](const BandwidthSample& a, const BandwidthSample& b) {
    return a.working_set < b.working_set || (a.working_set == b.working_set && kernel_order(a) < kernel_order(b));
  });
}

Curve triad_curve(const std::vector<BandwidthSample>& samples) {
  Curve curve;
  for (const BandwidthSample& s : samples) {
    if (s.kernel == StreamKernel::triad) curve.emplace_back(s.working_set, s.best_gbps);
  }
  return curve;
}

// `kernels` at `sizes` on the sweep's workers (a new team when they do not fit its arrays);
// quick: fewer, shorter repetitions.
std::vector<BandwidthSample> measure(std::unique_ptr<StreamWorkers>& workers, const std::vector<int>& cpus, const std::vector<std::int64_t>& sizes,
                                     const std::vector<StreamKernel>& kernels, bool nontemporal, bool quick, std::string* why) {
  if (sizes.empty()) return {};
  BandwidthOptions o;
  o.cpus = cpus;
  o.working_sets = sizes;
  o.kernels = kernels;
  o.nontemporal = nontemporal;
  if (quick) o.repetitions = 3;
  if (!workers || !workers->holds(o)) {
    workers.reset();  // its arrays go before the larger ones come
    workers = std::make_unique<StreamWorkers>(o);
  }
  return workers->measure(o, why);
}

std::int64_t largest_of(const std::vector<std::int64_t>& sizes) {
  return sizes.empty() ? 0 : *std::max_element(sizes.begin(), sizes.end());
}

// Up to `most` of a level's sizes, spread over its inside: its first and last points border
// the transitions, where a kernel with another access pattern can still see the level before
// or after (a 16-thread copy at an L3's first point ran at 2.6x its triad).
std::vector<std::int64_t> spread_over(std::vector<std::int64_t> sizes, std::size_t most) {
  if (sizes.size() >= most + 2) sizes = std::vector<std::int64_t>(sizes.begin() + 1, sizes.end() - 1);
  if (sizes.size() <= most) return sizes;
  std::vector<std::int64_t> picked;
  for (std::size_t k = 0; k < most; ++k) picked.push_back(sizes[k * (sizes.size() - 1) / (most - 1)]);
  return picked;
}

// Seconds a triad sweep over `sizes` takes, roughly: six passes (warm-up and five
// repetitions) at `gbps`, and first-touching the largest arrays at 1 GB/s (a guest whose
// host has not backed the memory yet pays that much).
double triad_seconds(const std::vector<std::int64_t>& sizes, double gbps) {
  double bytes = 0.0;
  for (std::int64_t s : sizes) bytes += static_cast<double>(s);
  return 6.0 * bytes / (gbps * 1e9) + static_cast<double>(largest_of(sizes)) / 1e9;
}

}  // namespace

std::int64_t default_sweep_memory_limit() {
  if (const auto available = common::proc_kib_field("/proc/meminfo", "MemAvailable:"); available && *available > 0) {
    return *available / 2;
  }
  const double physical = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGESIZE));
  return physical > 0 ? static_cast<std::int64_t>(physical / 2) : std::int64_t{1} << 30;
}

std::vector<std::int64_t> planned_sizes(const LevelEvidence& evidence, int threads, bool quick, std::int64_t memory_limit) {
  const std::int64_t workers = std::max(threads, 1);
  const std::int64_t l1 = !evidence.reported.empty() && evidence.reported.front() > 0 ? evidence.reported.front() : kFallbackL1PerWorker * workers;
  const std::int64_t largest = std::max(evidence.largest_reported, largest_of(evidence.reported));
  const std::int64_t limit = memory_limit > 0 ? memory_limit : std::numeric_limits<std::int64_t>::max();
  std::vector<std::int64_t> dense;
  for (std::int64_t c : evidence.reported) {
    if (c > 0 && c <= kDenseUpTo) dense.push_back(c);
  }
  if (!quick) {
    const std::int64_t last = std::max(kMinLast, static_cast<std::int64_t>(kPastLargest * static_cast<double>(largest)));
    return sweep_sizes(l1 / 8, std::min(last, limit), 2, dense, threads);
  }
  // Quick: the same grid up to the largest reported cache, then DRAM's points in quarter
  // octaves just above it (arrays of half the size full calibration first-touches).
  std::vector<std::int64_t> sizes = sweep_sizes(l1 / 8, std::min(std::max(kMinLast, largest), limit), 2, dense, threads);
  if (largest >= kMinLast) {
    for (const double above : kQuickTail) {
      const std::int64_t size =
          std::min(limit, sweep_sizes(static_cast<std::int64_t>(above * static_cast<double>(largest)), 0, 1, {}, threads).front());
      if (size > sizes.back()) sizes.push_back(size);
    }
  }
  return sizes;
}

namespace {

// One sweep's state: its options, the team of workers it keeps while their arrays suffice,
// the sizes measured so far.
struct Sweep {
  const MemorySweepOptions& options;
  int threads;
  std::int64_t memory_limit;
  std::vector<std::int64_t> sizes;
  std::unique_ptr<StreamWorkers> workers;
  std::string why;  // the last measurement's problem
  void say(const std::string& line) const {
    if (options.say) options.say(line);
  }
  std::vector<BandwidthSample> measure_at(const std::vector<std::int64_t>& at, const std::vector<StreamKernel>& kernels, bool nontemporal,
                                          bool quick) {
    return measure(workers, options.cpus, at, kernels, nontemporal, quick, &why);
  }
};

// On past the plan until DRAM's flat tail shows, within memory and time: at most an octave at
// a time.
void extend_to_dram(Sweep& sweep, MemorySweep& out) {
  const auto extend_start = Clock::now();
  for (int round = 0; round < 3 && out.levels.extend_to > 0; ++round) {
    const std::int64_t last = sweep.sizes.back();
    const std::int64_t target = std::min({out.levels.extend_to, 2 * last, sweep.memory_limit});
    if (target < last + last / 4) {
      out.notes.push_back(
          fmt::format("the sweep stopped at {}: a larger working set would need more than the {} of memory "
                      "it may use (half of what is available)",
                      binary_size(last), binary_size(sweep.memory_limit)));
      return;
    }
    std::vector<std::int64_t> more;
    for (std::int64_t s : sweep_sizes(last, target, 2, {}, sweep.threads)) {
      if (s > last) more.push_back(s);
    }
    const double gbps = std::max(1.0, triad_curve(out.samples).back().second);
    if (more.empty() || since(extend_start) + triad_seconds(more, gbps) > sweep.options.extend_seconds) {
      out.notes.push_back(fmt::format("the sweep stopped at {}: going further would take longer than its {:.1f} s budget", binary_size(last),
                                      sweep.options.extend_seconds));
      return;
    }
    sweep.say(fmt::format("calibrating {} thread(s): no flat DRAM tail yet; sweeping on to {}", sweep.threads, binary_size(more.back())));
    std::vector<BandwidthSample> extra = sweep.measure_at(more, {StreamKernel::triad}, false, sweep.options.quick);
    if (extra.empty()) {
      out.notes.push_back("the sweep could not go on past " + binary_size(last) + ": " + sweep.why);
      return;
    }
    merge_samples(out.samples, extra);
    sweep.sizes.insert(sweep.sizes.end(), more.begin(), more.end());
    out.levels = detect_levels(triad_curve(out.samples), sweep.options.evidence);
  }
}

// Points in which another process took a worker's CPU: once more.
void remeasure_disturbed(Sweep& sweep, MemorySweep& out) {
  std::vector<std::int64_t> disturbed;
  for (const BandwidthSample& s : out.samples) {
    if (s.shared > 0) disturbed.push_back(s.working_set);
  }
  if (disturbed.empty()) return;
  sweep.say(fmt::format("calibrating {} thread(s): measuring {} disturbed point(s) again", sweep.threads, disturbed.size()));
  merge_samples(out.samples, sweep.measure_at(disturbed, {StreamKernel::triad}, false, sweep.options.quick));
  out.remeasured = static_cast<int>(disturbed.size());
  out.still_disturbed =
      static_cast<int>(std::count_if(out.samples.begin(), out.samples.end(), [](const BandwidthSample& s) { return s.shared > 0; }));
  out.levels = detect_levels(triad_curve(out.samples), sweep.options.evidence);
}

// The other kernels at the levels' points: copy, scale and add at a few points of each cache
// and at DRAM's, streaming stores at DRAM's largest (quick: copy at DRAM's only).
void measure_other_kernels(Sweep& sweep, MemorySweep& out) {
  const bool quick = sweep.options.quick;
  std::vector<std::int64_t> cache_points;
  const DetectedLevel* dram = nullptr;
  for (const DetectedLevel& level : out.levels.levels) {
    if (level.level == "dram") {
      dram = &level;
    } else if (!quick) {
      for (std::int64_t s : spread_over(level.sizes, kLevelPoints)) cache_points.push_back(s);
    }
  }
  std::sort(cache_points.begin(), cache_points.end());
  cache_points.erase(std::unique(cache_points.begin(), cache_points.end()), cache_points.end());
  const std::vector<StreamKernel> others = {StreamKernel::copy, StreamKernel::scale, StreamKernel::add};
  merge_samples(out.samples, sweep.measure_at(cache_points, others, false, quick));
  if (dram != nullptr) {
    // At the DRAM points the triad arrays already hold (a copy's two arrays need 1.5× a
    // triad's per working set): first-touching larger ones would cost more than the points.
    std::vector<std::int64_t> fit;
    for (std::int64_t size : dram->sizes) {
      BandwidthOptions copy;
      copy.cpus = sweep.options.cpus;
      copy.working_sets = {size};
      copy.kernels = {StreamKernel::copy};
      if (sweep.workers && sweep.workers->holds(copy)) fit.push_back(size);
    }
    if (fit.empty()) fit.push_back(dram->sizes.front());
    const std::vector<StreamKernel> dram_kernels = quick ? std::vector<StreamKernel>{StreamKernel::copy} : others;
    merge_samples(out.samples, sweep.measure_at(fit, dram_kernels, false, quick));
  }
  if (!quick) {
    const std::int64_t nt_size = dram != nullptr && !dram->sizes.empty() ? dram->sizes.back() : out.samples.back().working_set;
    out.nontemporal = sweep.measure_at({nt_size}, {StreamKernel::copy, StreamKernel::triad}, true, false);
  }
}

}  // namespace

MemorySweep sweep_memory(const MemorySweepOptions& options) {
  MemorySweep out;
  const int threads = static_cast<int>(options.cpus.size());
  const std::int64_t memory_limit = options.memory_limit > 0 ? options.memory_limit : default_sweep_memory_limit();
  Sweep sweep{options, threads, memory_limit, planned_sizes(options.evidence, threads, options.quick, memory_limit), nullptr, {}};
  sweep.say(fmt::format("calibrating {} thread(s): memory bandwidth over {} working-set sizes up to {}", threads, sweep.sizes.size(),
                        binary_size(sweep.sizes.back())));
  // The sweep itself is triad: it alone decides the levels; the other kernels run at the
  // levels' points afterwards.
  out.samples = sweep.measure_at(sweep.sizes, {StreamKernel::triad}, false, options.quick);
  if (out.samples.empty()) {
    out.error = sweep.why.empty() ? "the bandwidth sweep measured nothing" : sweep.why;
    return out;
  }
  out.levels = detect_levels(triad_curve(out.samples), options.evidence);
  extend_to_dram(sweep, out);
  remeasure_disturbed(sweep, out);
  measure_other_kernels(sweep, out);
  return out;
}

}  // namespace hwprof::calibration
