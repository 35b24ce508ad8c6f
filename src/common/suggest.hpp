// "Did you mean ...?": the nearest candidate by edit distance, when one is near enough.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hwprof::common {

std::size_t edit_distance(std::string_view a, std::string_view b);
std::optional<std::string> nearest(std::string_view word, const std::vector<std::string_view>& candidates);
// " (did you mean 'x'?)" or "".
std::string did_you_mean(std::string_view word, const std::vector<std::string_view>& candidates);
// "a, b, c"
std::string join(const std::vector<std::string_view>& items, std::string_view separator = ", ");

}  // namespace hwprof::common
