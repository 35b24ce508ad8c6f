// Reading the ranks' profiles for `hwprof merge`: the folders HWPROF_OUTPUT writes, a rank's
// folder or a profile.json, each entry's problem named with its reason.
#include "report/rank_files.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "common/input_file.hpp"
#include "common/stages.hpp"

namespace hwprof::report {
namespace {

namespace fs = std::filesystem;

void add_profile(const fs::path& file, std::vector<RankProfile>& out, std::vector<std::string>& problems) {
  auto p = load_profile(file.string());
  if (!p) {
    problems.push_back(p.error().message);
    return;
  }
  out.push_back({file.string(), std::move(*p)});
}

// The name of a file type, for "a rank entry is a FIFO".
std::string type_name(fs::file_type t) {
  switch (t) {
    case fs::file_type::regular:
      return "regular file";
    case fs::file_type::directory:
      return "directory";
    case fs::file_type::symlink:
      return "symbolic link";
    case fs::file_type::block:
      return "block device";
    case fs::file_type::character:
      return "character device";
    case fs::file_type::fifo:
      return "FIFO";
    case fs::file_type::socket:
      return "socket";
    default:
      return "file of unknown type";
  }
}

// One rank-NNNNN entry of a run's folder. A folder without profile.json is a rank that wrote
// nothing (listed among the missing with that reason); an entry that is no folder, a folder
// that cannot be opened, or a profile.json that cannot be read is a problem with its reason,
// never a silent missing rank (read_input_file refuses directories, devices and silent FIFOs
// by name, and bounds every read).
void add_rank_entry(const fs::path& entry, RankProfiles& found, std::vector<std::string>& problems) {
  std::error_code ec;
  const fs::file_status st = fs::status(entry, ec);
  if (ec) {
    problems.push_back(fmt::format("{}: cannot be read ({})", entry.string(), ec.message()));
    return;
  }
  if (st.type() != fs::file_type::directory) {
    problems.push_back(fmt::format("{}: a rank entry should be a folder holding profile.json; this is a {}", entry.string(), type_name(st.type())));
    return;
  }
  const fs::path file = entry / "profile.json";
  const fs::file_status lst = fs::symlink_status(file, ec);
  if (ec && lst.type() != fs::file_type::not_found) {
    problems.push_back(fmt::format("{}: cannot be read ({})", file.string(), ec.message()));
    return;
  }
  if (lst.type() == fs::file_type::not_found) {
    found.empty_folders.push_back(entry.string());
    return;
  }
  add_profile(file, found.ranks, problems);
}

// One path given to `hwprof merge`: a profile, a rank's folder or a run's folder.
void add_path(const std::string& path, RankProfiles& found, std::vector<std::string>& problems) {
  std::error_code ec;
  const fs::path p(path);
  if (!fs::is_directory(p, ec)) {
    if (fs::symlink_status(p, ec).type() == fs::file_type::not_found) {
      problems.push_back(path + ": no such file or folder");
    } else {
      add_profile(p, found.ranks, problems);  // read_input_file names what it is when not a file
    }
    return;
  }
  if (fs::symlink_status(p / "profile.json", ec).type() != fs::file_type::not_found) {
    add_profile(p / "profile.json", found.ranks, problems);
    return;
  }
  std::vector<fs::path> entries;
  for (fs::directory_iterator it(p, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename().string().rfind("rank-", 0) == 0) entries.push_back(it->path());
  }
  if (ec) {
    problems.push_back(fmt::format("{}: cannot be listed ({})", path, ec.message()));
    return;
  }
  if (entries.empty()) {
    problems.push_back(path +
                       ": holds neither a profile.json nor rank-NNNNN/profile.json folders (HWPROF_OUTPUT under mpirun, srun or "
                       "torchrun writes those)");
  }
  std::sort(entries.begin(), entries.end());
  for (const fs::path& e : entries) add_rank_entry(e, found, problems);
}

// Every problem on a line of its own, at most kMaxListed of them.
std::string problem_list(const std::vector<std::string>& problems) {
  constexpr std::size_t kMaxListed = 10;
  std::string message = problems.size() == 1 ? problems.front() : fmt::format("{} rank profiles cannot be merged:", problems.size());
  if (problems.size() == 1) return message;
  for (std::size_t i = 0; i < problems.size() && i < kMaxListed; ++i) message += "\n  " + problems[i];
  if (problems.size() > kMaxListed) message += fmt::format("\n  ... and {} more", problems.size() - kMaxListed);
  return message;
}

}  // namespace

Result<RankProfiles> load_rank_profiles(const std::vector<std::string>& paths) {
  RankProfiles found;
  std::vector<std::string> problems;
  for (const std::string& path : paths) add_path(path, found, problems);
  if (!problems.empty()) return Error{problem_list(problems)};
  if (found.ranks.empty()) return Error{"no profile to merge"};
  if (auto problem = rank_set_problem(found.ranks)) return Error{*problem};
  return found;
}

}  // namespace hwprof::report
