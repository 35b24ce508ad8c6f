#include "common/suggest.hpp"

#include <algorithm>
#include <cctype>

namespace hwprof::common {

// Optimal string alignment distance (Levenshtein plus adjacent transpositions), case-blind.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  const std::size_t n = a.size();
  const std::size_t m = b.size();
  std::vector<std::size_t> prev2(m + 1), prev(m + 1), cur(m + 1);
  for (std::size_t j = 0; j <= m; ++j) prev[j] = j;
  auto lower = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
  for (std::size_t i = 1; i <= n; ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1])) {
        cur[j] = std::min(cur[j], prev2[j - 2] + 1);
      }
    }
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return prev[m];
}

std::optional<std::string> nearest(std::string_view word, const std::vector<std::string_view>& candidates) {
  // Near enough: at most a third of the word's length, and never more than 3 edits.
  const std::size_t limit = std::min<std::size_t>(3, std::max<std::size_t>(1, word.size() / 3));
  std::optional<std::string> best;
  std::size_t best_distance = limit + 1;
  std::size_t best_length_gap = 0;
  for (std::string_view candidate : candidates) {
    if (candidate.size() > word.size() + limit || word.size() > candidate.size() + limit) continue;
    const std::size_t d = edit_distance(word, candidate);
    const std::size_t gap = candidate.size() > word.size() ? candidate.size() - word.size() : word.size() - candidate.size();
    // Ties go to the candidate of the closer length: "relu7" suggests "relu6", not "relu".
    if (d < best_distance || (d == best_distance && best && gap < best_length_gap)) {
      best_distance = d;
      best_length_gap = gap;
      best = std::string(candidate);
    }
  }
  return best;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string_view>& candidates) {
  auto best = nearest(word, candidates);
  return best ? " (did you mean '" + *best + "'?)" : std::string();
}

std::string join(const std::vector<std::string_view>& items, std::string_view separator) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += separator;
    out += items[i];
  }
  return out;
}

}  // namespace hwprof::common
