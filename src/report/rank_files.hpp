// The ranks' profiles of one run, read from disk for `hwprof merge`.
#pragma once

#include <string>
#include <vector>

#include "analyze/merge.hpp"
#include "common/stages.hpp"
#include "hwprof/result.hpp"

namespace hwprof::report {

// Every rank profile under `paths`: a folder holding rank-NNNNN/profile.json folders (as
// HWPROF_OUTPUT writes them), a rank folder itself, or a profile.json. Errors: nothing found; a
// rank entry or profile that cannot be read (a FIFO, a device, a link loop, a directory where
// profile.json should be, no permission, a profile that does not load), each with its reason;
// then the set itself when it is not one run (rank_set_problem).
Result<RankProfiles> load_rank_profiles(const std::vector<std::string>& paths);

}  // namespace hwprof::report
