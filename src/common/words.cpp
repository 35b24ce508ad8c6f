#include "common/words.hpp"

namespace hwprof::common {

namespace {
constexpr std::string_view kBlanks = " \t\r";
}  // namespace

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(kBlanks);
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(kBlanks);
  return s.substr(first, last - first + 1);
}

std::string_view trim_right(std::string_view s) {
  const auto last = s.find_last_not_of(kBlanks);
  return last == std::string_view::npos ? std::string_view() : s.substr(0, last + 1);
}

std::vector<std::string_view> split_words(std::string_view s, std::string_view separators) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && separators.find(s[i]) != std::string_view::npos) ++i;
    const std::size_t start = i;
    while (i < s.size() && separators.find(s[i]) == std::string_view::npos) ++i;
    if (i > start) words.push_back(s.substr(start, i - start));
  }
  return words;
}

}  // namespace hwprof::common
