// Every file a profile is rendered to, written into one folder (`hwprof profile -o DIR`).
#include <filesystem>
#include <functional>
#include <string>
#include <system_error>
#include <vector>

#include "hwprof/report.hpp"
#include "report/report_parts.hpp"

namespace hwprof {

std::optional<Error> write_profile_outputs(const Profile& profile, const std::string& dir, std::vector<std::string>* written) {
  namespace fs = std::filesystem;
  if (dir.empty()) return Error{"the output folder is empty"};
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Error{dir + ": cannot create the output folder (" + ec.message() + ")"};
  if (!fs::is_directory(dir, ec)) return Error{dir + ": not a folder"};
  // Each file is either the new one or untouched. profile.json and trace.json, which hold
  // every span, are written as they are made; the others are small and made first.
  const auto whole = [](std::string (*render)(const Profile&)) {
    return [render](const Profile& p, const detail::TextSink& sink) { sink(render(p)); };
  };
  const auto profile_json = [](const Profile& p, const detail::TextSink& sink) { detail::profile_json_parts(p, ProfileGrouping::layer, 1, sink); };
  const std::pair<const char*, std::function<void(const Profile&, const detail::TextSink&)>> outputs[] = {
      {"profile.json", profile_json},         {"profile.csv", whole(&profile_csv)},
      {"roofline.svg", whole(&roofline_svg)}, {"trace.json", &detail::chrome_trace_parts},
      {"report.html", whole(&html_report)},
  };
  for (const auto& output : outputs) {
    const std::string path = (fs::path(dir) / output.first).string();
    const auto& render = output.second;  // (not a structured binding: clang 14 cannot capture one)
    if (auto error = detail::write_file_atomically_in_parts(path, [&](const detail::TextSink& sink) { render(profile, sink); })) return error;
    if (written != nullptr) written->push_back(path);
  }
  return std::nullopt;
}

}  // namespace hwprof
