// The pieces of the machine report's JSON, for documents that embed them: a profile records
// the CPU, the theoretical peaks and the calibration run it was placed under in exactly the
// machine report's format (src/report/profile_json.cpp).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "common/json_reader.hpp"
#include "common/stages.hpp"
#include "hwprof/engine/machine.hpp"

namespace hwprof::machine {

nlohmann::ordered_json cpu_to_json(const MachineCpu& cpu);
nlohmann::ordered_json theoretical_to_json(const TheoreticalPeaks& t);
nlohmann::ordered_json run_to_json(const CalibrationRun& run);

// `at` is where the value sits in the document (a JSON pointer), for messages; they throw
// JsonReadError.
MachineCpu cpu_from_json(const JsonReader& in, const nlohmann::json& cpu, const std::string& at);
TheoreticalPeaks theoretical_from_json(const JsonReader& in, const nlohmann::json& t, const std::string& at);
CalibrationRun run_from_json(const JsonReader& in, const nlohmann::json& r, const std::string& at);

}  // namespace hwprof::machine
