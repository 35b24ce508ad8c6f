// A comparison of two profiles (analyze/compare.hpp) rendered: a table, JSON and an HTML page.
#pragma once

#include <cstddef>
#include <string>

#include "analyze/compare.hpp"
#include "common/stages.hpp"
#include "hwprof/engine/profile.hpp"

namespace hwprof::report {

std::string comparison_table(const ProfileComparison& c, std::size_t top = 20);
std::string comparison_json(const ProfileComparison& c);
// One self-contained page: the summary, every layer's row, and a roofline (B's ceilings) with
// each layer's point in A joined by an arrow to its point in B.
std::string comparison_html(const ProfileComparison& c, const Profile& b);

}  // namespace hwprof::report
