// Where hwprof's installed data (counter groups, models) and the report module are, for a
// library that may have been installed anywhere: beside the library itself (dladdr), beside
// the program (bin/../share), in the source tree, and at the prefix it was configured for.
#pragma once

#include <string>
#include <vector>

namespace hwprof::common {

// Folders that may hold `kind` ("counters", "models"), in the order to look: the colon-separated
// folders of `environment` first (when set), then the installed and source locations.
// `installed_module`, when given, is a file in <prefix>/<libdir>/hwprof/ (the report module a
// program was built against): that prefix's data folder is looked in too, where it exists.
std::vector<std::string> data_directories(const char* environment, const std::string& kind, const std::string& installed_module = {});

// The file this code was loaded from: the shared library, or the program it is linked into.
std::string this_binary_path();

}  // namespace hwprof::common
