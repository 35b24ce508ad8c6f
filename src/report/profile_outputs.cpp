// Every file a profile is rendered to, written into one folder (`hwprof profile -o DIR`).
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "hwprof/report.hpp"

namespace hwprof {

std::optional<Error> write_profile_outputs(const Profile& profile, const std::string& dir, std::vector<std::string>* written) {
  namespace fs = std::filesystem;
  if (dir.empty()) return Error{"the output folder is empty"};
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Error{dir + ": cannot create the output folder (" + ec.message() + ")"};
  if (!fs::is_directory(dir, ec)) return Error{dir + ": not a folder"};
  // Each renderer runs before its file is written: a file is either the new one or untouched.
  const std::pair<const char*, std::string (*)(const Profile&)> outputs[] = {
      {"profile.json", &profile_to_json}, {"profile.csv", &profile_csv}, {"roofline.svg", &roofline_svg},
      {"trace.json", &chrome_trace},      {"report.html", &html_report},
  };
  for (const auto& [name, render] : outputs) {
    const std::string path = (fs::path(dir) / name).string();
    if (auto error = write_file_atomically(path, render(profile))) return error;
    if (written != nullptr) written->push_back(path);
  }
  return std::nullopt;
}

}  // namespace hwprof
