// hwprof report PROFILE.json: renders a saved profile again — the table, JSON or CSV on
// standard output, and the roofline, trace and HTML page into the files asked for.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/stages.hpp"
#include "hwprof/engine/profile.hpp"

namespace CLI {
class App;
}

namespace hwprof::cli {

// How `profile` and `report` lay out the table (shared by both commands).
struct TableArguments {
  std::string sort = "win";
  int top = 15;
  bool all = false;
  bool counters = false;
  std::string by = "layer";
  int depth = 1;
};
void add_table_options(CLI::App& sub, TableArguments& table);

struct ReportCommandOptions {
  std::string profile;  // the profile.json of `hwprof profile -o DIR` (or --format json)
  std::string svg;
  std::string trace;
  std::string html;
  std::string format = "table";
  TableArguments table;
};

std::shared_ptr<ReportCommandOptions> setup_report(CLI::App& app, int& exit_code);
int run_report(const ReportCommandOptions& options);

// A profile on standard output as `--format` (table|json|csv), `--sort` and `--top` ask;
// shared by `hwprof profile` and `hwprof report`.
std::string render_profile(const Profile& profile, const std::string& format, const TableArguments& table);
// Why `format` cannot be printed for this profile (sampling-csv without sampling), if it cannot.
std::optional<Error> format_unavailable(const Profile& profile, const std::string& format);

// What a "wrote FILE (...)" line says of a rendered file: its size, and for the trace how many
// iterations it samples. Shared by `hwprof profile -o` and `hwprof report`.
std::string written_note(const Profile& profile, std::uintmax_t bytes, bool trace);

}  // namespace hwprof::cli
