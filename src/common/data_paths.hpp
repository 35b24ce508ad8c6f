// Where hwprof's installed data (counter groups, models) and the report module are, for a
// library that may have been installed anywhere: beside the library itself (dladdr), beside
// the program (bin/../share), in the source tree, and at the prefix it was configured for.
#pragma once

#include <string>
#include <vector>

namespace hwprof::detail {

// Folders that may hold `kind` ("counters", "models"), in the order to look: the colon-separated
// folders of `environment` first (when set), then the installed and source locations.
std::vector<std::string> data_directories(const char* environment, const std::string& kind);

// The file this code was loaded from: the shared library, or the program it is linked into.
std::string this_binary_path();

}  // namespace hwprof::detail
