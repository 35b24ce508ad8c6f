// Words of a line of text, for the small line formats hwprof reads (event group files, CPU
// match lists): blanks trimmed, words split at separators.
#pragma once

#include <string_view>
#include <vector>

namespace hwprof::common {

// `s` without leading and trailing blanks (space, tab, carriage return).
std::string_view trim(std::string_view s);
// `s` without trailing blanks.
std::string_view trim_right(std::string_view s);
// The non-empty words of `s` between any of `separators`.
std::vector<std::string_view> split_words(std::string_view s, std::string_view separators = " \t");

}  // namespace hwprof::common
