#include "counters/counter_math.hpp"
#include "common/stages.hpp"

namespace hwprof::counters {

CounterReading scale_counter(std::uint64_t raw, std::uint64_t enabled, std::uint64_t running) noexcept {
  CounterReading r;
  r.raw = raw;
  if (running == 0 || enabled == 0) {
    r.status = CounterStatus::not_counted;
    r.running_fraction = 0.0;
    return r;
  }
  if (running >= enabled) {
    r.status = CounterStatus::ok;
    r.value = static_cast<double>(raw);
    r.running_fraction = 1.0;
    return r;
  }
  r.status = CounterStatus::multiplexed;
  r.running_fraction = static_cast<double>(running) / static_cast<double>(enabled);
  r.value = static_cast<double>(raw) * (static_cast<double>(enabled) / static_cast<double>(running));
  return r;
}

bool parse_group_read(const std::uint64_t* words, std::size_t word_count, const std::uint64_t* ids, std::size_t id_count, std::uint64_t* values,
                      GroupTimes* times) noexcept {
  if (word_count < 3) return false;
  const std::uint64_t nr = words[0];
  if (nr != id_count || word_count < group_read_words(id_count)) return false;
  times->enabled = words[1];
  times->running = words[2];
  for (std::size_t k = 0; k < id_count; ++k) {
    bool found = false;
    // Groups are small (a PMU has a handful of counters): a linear search beats a map.
    for (std::size_t e = 0; e < nr; ++e) {
      if (words[3 + 2 * e + 1] == ids[k]) {
        values[k] = words[3 + 2 * e];
        found = true;
        break;
      }
    }
    if (!found) return false;
  }
  return true;
}

bool add_thread_counts(const long long* counts, std::size_t n, long long* sums) noexcept {
  for (std::size_t k = 0; k < n; ++k) {
    if (__builtin_add_overflow(sums[k], counts[k], &sums[k])) return false;
  }
  return true;
}

bool close_interval(const long long* start, const long long* stop, std::size_t n, long long* totals) noexcept {
  for (std::size_t k = 0; k < n; ++k) {
    long long interval = 0;
    if (__builtin_sub_overflow(stop[k], start[k], &interval) || __builtin_add_overflow(totals[k], interval, &totals[k])) return false;
  }
  return true;
}

bool count_so_far(long long closed, long long start, long long now, bool running, std::uint64_t* value) noexcept {
  long long total = closed;
  long long open = 0;
  if (running && (__builtin_sub_overflow(now, start, &open) || __builtin_add_overflow(total, open, &total))) return false;
  if (total < 0) return false;
  *value = static_cast<std::uint64_t>(total);
  return true;
}

}  // namespace hwprof::counters
