// Every HTML page hwprof writes (the profile's report, `compare --html`, `merge --html`) is one
// self-contained file made of the same skeleton and the same stylesheet: nothing is fetched.
#pragma once

#include <string>
#include <string_view>
#include "common/stages.hpp"

namespace hwprof::report {

// The page up to and including <body>: the title (escaped here), the stylesheet inline.
// `body_class` "plain" right-aligns table numbers (the comparison's and the merge's tables).
std::string html_page_open(std::string_view title, std::string_view body_class = {});
// The page's end, with `script` inline before it when there is one.
std::string html_page_close(std::string_view script = {});

}  // namespace hwprof::report
