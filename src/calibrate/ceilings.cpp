// Where a profile's ceilings come from: the report named, else this machine's stored one,
// else (when the caller allows it) a quick calibration made now and stored when it is sound.

#include <filesystem>

#include "hwprof/engine/machine.hpp"
#include "machine/stored_ceilings.hpp"

namespace hwprof {
namespace {

// A quick calibration made now: used for this run in any case, stored for the next one only
// when no other process disturbed it and it is plausible.
Result<Ceilings> quick_calibration(const CeilingsOptions& options, const std::string& stored) {
  const auto notice = [&](const std::string& line) {
    if (options.notice) options.notice(line);
  };
  notice("no calibration of this machine " + (stored.empty() ? std::string("(no machine store: HOME and XDG_DATA_HOME are unset)") : "at " + stored) +
         ": running a quick one first (hwprof calibrate --quick)");
  CalibrationOptions calibration;
  calibration.quick = true;
  if (options.threads > 0) calibration.threads = {options.threads};
  calibration.progress = options.progress;
  auto machine = calibrate(calibration);
  if (!machine) return machine.error();
  const bool contended = machine->contention.contended;
  if (contended || !implausible_fields(*machine).empty()) {
    notice(std::string("the quick calibration was ") + (contended ? "disturbed by other processes" : "implausible") +
           ": it serves this profile only and is not stored; run `hwprof calibrate` on a quiet machine");
    return Ceilings{std::move(*machine), contended ? "(a quick calibration made now under contention, not stored)"
                                                   : "(a quick calibration made now, implausible, not stored)"};
  }
  std::string path;
  if (!store_machine(*machine, false, &path)) {
    notice("stored it at " + path + "; run `hwprof calibrate` for the full calibration");
    return Ceilings{std::move(*machine), path};
  }
  return Ceilings{std::move(*machine), "(quick calibration, not stored)"};
}

}  // namespace

Result<Ceilings> find_ceilings(const CeilingsOptions& options) {
  if (!options.file.empty() || !options.quick_if_missing) return machine::find_stored_ceilings(options.file);
  const std::string host = this_host_name();
  const MachineCpu here = describe_this_cpu();
  const std::string stored = machine_store_path(host, here);
  std::error_code ec;
  if (std::filesystem::exists(stored, ec)) return machine::ceilings_from_store(stored, host, here);
  // Another hwprof may be calibrating right now: wait for it, and use what it stores. Without
  // a machine store there is no lock to take, and the quick calibration says why.
  auto lock = CalibrationLock::acquire(options.notice);
  if (std::filesystem::exists(stored, ec)) {
    if (auto found = machine::ceilings_from_store(stored, host, here)) return found;
  }
  return quick_calibration(options, stored);
}

}  // namespace hwprof
