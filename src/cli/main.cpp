// hwprof: one file per subcommand; main only wires them together.
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/calibrate_command.hpp"
#include "cli/info_command.hpp"
#include "cli/output.hpp"
#include "cli/stat_command.hpp"
#include "cli/summary_command.hpp"
#include "hwprof/version.hpp"

int main(int argc, char** argv) {
  CLI::App app{"hwprof — what each layer of a neural network should cost, and what it did cost here"};
  app.set_version_flag("-V,--version", std::string("hwprof ") + hwprof::kVersion);
  app.require_subcommand(1);
  app.footer("Run 'hwprof SUBCOMMAND --help' for the options of each subcommand.");
  int exit_code = hwprof::cli::kExitOk;
  hwprof::cli::setup_summary(app, exit_code);
  hwprof::cli::setup_calibrate(app, exit_code);
  hwprof::cli::setup_info(app, exit_code);
  hwprof::cli::setup_stat(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "hwprof: error: " << e.what() << "\nRun 'hwprof --help' for usage.\n";
    return hwprof::cli::kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "hwprof: internal error: " << e.what() << "\n";
    return hwprof::cli::kExitError;
  }
  return exit_code;
}
