// Writes the synthetic profile of the report tests as profile.json, for the browser test to
// render with `hwprof report` and open in headless Chromium.
#include <cstdio>
#include <string>

#include "hwprof/report.hpp"
#include "synthetic_profile.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT.json\n", argv[0]);
    return 2;
  }
  if (auto error = hwprof::write_file_atomically(argv[1], hwprof::profile_to_json(hwprof::test::synthetic_profile()))) {
    std::fprintf(stderr, "%s\n", error->message.c_str());
    return 1;
  }
  return 0;
}
