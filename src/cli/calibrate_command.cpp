#include "cli/calibrate_command.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include "cli/arguments.hpp"
#include "cli/output.hpp"
#include "common/stages.hpp"
#include "hwprof/engine/executor.hpp"
#include "hwprof/engine/machine.hpp"
#include "hwprof/engine/report.hpp"
#include "machine/cache_topology.hpp"

namespace hwprof::cli {
namespace {

std::string ceiling_row(const std::string& label, const Ceiling& c, const char* unit, const std::string& note) {
  std::string remarks = note;
  if (!c.note.empty()) remarks += (remarks.empty() ? "" : "; ") + c.note;
  // Three significant digits at least: a transcendental kernel's rate is a few G evaluations/s.
  const auto value = [](double v) { return v >= 100 ? fmt::format("{:.1f}", v) : fmt::format("{:.3g}", v); };
  return fmt::format("  {:<28}{:>10} {:<8}{:>10}{:>9.1f}%   {}\n", label, value(c.best), unit, value(c.median), c.spread * 100, remarks);
}

// Where a level ends and who says so: "ends at 41.2 MiB (sweep; cpuid says 508 MiB)".
std::string level_end(const BandwidthLevel& level) {
  std::string out;
  if (level.capacity_bytes > 0) {
    out = "ends at " + machine::binary_size(level.capacity_bytes) + " (" + level.capacity_source;
    if (level.reported_bytes > 0 && level.capacity_source == "sweep") out += ", reported " + machine::binary_size(level.reported_bytes);
    out += ")";
  } else if (!level.capacity_source.empty() || !level.note.empty()) {
    out = "end unknown";
  }
  return out;
}

std::string cache_sources(const MachineCpu& cpu) {
  std::string out = "Caches, as each source describes them (the sweep's knees decide where levels end):\n";
  for (const CacheSource& s : cpu.cache_sources) {
    std::string levels;
    for (const CacheInfo& c : s.levels) {
      levels += fmt::format("{}L{} {}{}", levels.empty() ? "" : ", ", c.level, machine::binary_size(c.size_bytes),
                            c.shared_by > 1 ? fmt::format(" per {} CPUs", c.shared_by) : "");
    }
    out += fmt::format("  {:<8} {}\n", s.source, levels.empty() ? "nothing: " + s.absent : levels + " (" + s.how + ")");
  }
  for (const std::string& n : cpu.cache_notes) out += "  note: " + n + "\n";
  return out;
}

std::string summary(const Machine& m, const std::string& stored) {
  double seconds = 0;
  for (const auto& r : m.runs) seconds += r.seconds;
  std::string out = fmt::format("Calibrated {} ({} cores, {} logical CPUs{}) in {:.1f} s{}\n", m.cpu.brand, m.cpu.cores, m.cpu.logical_cpus,
                                m.cpu.hypervisor ? ", virtual machine" : "", seconds, m.quick ? " (quick)" : "");
  if (m.contention.contended) {
    out += "CONTENDED: other processes disturbed this calibration; its ceilings are too low:\n";
    for (const std::string& e : m.contention.evidence) out += "  - " + e + "\n";
  }
  if (!stored.empty()) out += "Report: " + stored + "\n";
  out += cache_sources(m.cpu);
  out += "Bandwidth in decimal GB/s, STREAM's convention (write-allocate traffic not counted).\n";
  for (const CalibrationRun& run : m.runs) {
    std::string cpus;
    for (int c : run.cpus) cpus += (cpus.empty() ? "" : ",") + std::to_string(c);
    out += fmt::format("\n{} thread(s), pinned to CPU {}        {:>10} {:<8}{:>10}{:>10}\n", run.threads, cpus, "best", "", "median", "spread");
    std::vector<std::string> level_notes;
    for (const char* level : {"l1", "l2", "l3", "dram"}) {
      auto it = run.bandwidth.find(level);
      if (it == run.bandwidth.end()) continue;
      std::string name = level;
      std::transform(name.begin(), name.end(), name.begin(), [](char c) { return static_cast<char>(std::toupper(c)); });
      std::string range = fmt::format("measured at {}-{}", machine::binary_size(it->second.from_bytes), machine::binary_size(it->second.to_bytes));
      if (const std::string end = level_end(it->second); !end.empty()) range += ", " + end;
      if (!it->second.plateau) range += " (no flat plateau: less certain)";
      if (!it->second.note.empty()) level_notes.push_back(name + ": " + it->second.note);
      for (const char* kernel : {"triad", "copy", "triad_nt", "copy_nt"}) {
        auto k = it->second.kernels.find(kernel);
        if (k == it->second.kernels.end()) continue;
        out += ceiling_row(name + " " + kernel, k->second, "GB/s", std::string(kernel) == "triad" ? range : "");
      }
    }
    if (!run.bandwidth.count("dram")) level_notes.push_back("DRAM: not measured (see the notes)");
    for (const char* name : {"fma_sp", "fma_dp", "gemm_sp", "gemm_dp"}) {
      auto it = run.compute.find(name);
      if (it == run.compute.end()) continue;
      const std::string note = it->second.size > 0 ? "n = " + std::to_string(it->second.size) : it->second.variant;
      out += ceiling_row(std::string(name).substr(0, 4) == "fma_" ? std::string("FMA peak ") + (name[4] == 's' ? "SP" : "DP")
                                                                  : std::string("GEMM ") + (name[5] == 's' ? "SP" : "DP"),
                         it->second, "GFLOP/s", note);
    }
    for (const char* name : {"tanh_sp", "exp_sp", "erf_sp"}) {
      auto it = run.compute.find(name);
      if (it == run.compute.end()) continue;
      out += ceiling_row(std::string(name).substr(0, std::string(name).find('_')) + " kernel", it->second, "Geval/s", "in L1");
    }
    for (const std::string& n : level_notes) out += "  note: " + n + "\n";
    for (const std::string& n : run.notes) out += "  note: " + n + "\n";
  }
  const TheoreticalPeaks& t = m.theoretical;
  out += fmt::format("\nTheoretical peak ({} cores × {:.2f} GHz × {}/{} SP/DP FLOPs per cycle, {}): {:.1f} SP / {:.1f} DP GFLOP/s\n", t.cores, t.ghz,
                     t.sp_flops_per_cycle, t.dp_flops_per_cycle, t.isa, t.sp_gflops, t.dp_gflops);
  out += "  " + t.assumptions + "\n";
  return out;
}

}  // namespace

std::shared_ptr<CalibrateCommandOptions> setup_calibrate(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<CalibrateCommandOptions>();
  CLI::App* sub = app.add_subcommand("calibrate", "Measure this machine's bandwidth and compute ceilings");
  sub->description(
      "Measures the roofline's ceilings on this machine: STREAM copy/scale/add/triad over a working-set sweep\n"
      "(plateaus per memory level: L1, L2, L3, DRAM, plus non-temporal stores for DRAM), FMA peak (AVX-512,\n"
      "AVX2+FMA or SSE2, chosen at run time) and OpenBLAS SGEMM/DGEMM, once per thread count, with workers\n"
      "pinned one per core; theoretical peaks are printed beside them for context. The report is stored per\n"
      "machine (host + CPU) under $XDG_DATA_HOME/hwprof/machines (default ~/.local/share), where `hwprof\n"
      "profile` finds it; a report from another CPU is never used. A ceilings chart (SVG) is written beside it.");
  sub->add_option("-t,--threads", options->threads, "Thread counts, comma-separated (default: 1 and the number of cores)")
      ->delimiter(',')
      ->check(CLI::Range(1, 4096));
  sub->add_flag("--quick", options->quick, "A quicker, rougher calibration (about 5 s)");
  sub->add_option("--precision", options->precision, "Precisions to measure: sp, dp or both")
      ->delimiter(',')
      ->check(CLI::IsMember({"sp", "dp"}))
      ->capture_default_str();
  sub->add_option("-o,--output", options->output, "Write the JSON report to FILE instead of the machine store")->check(file_name());
  sub->add_option("--svg", options->svg, "Write the ceilings chart to FILE (default: beside the report, .svg)")->check(file_name());
  sub->add_option("-f,--format", options->format, "What to print: a table, or the JSON report")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  sub->add_flag("--allow-contended", options->allow_contended,
                "Keep a calibration that other processes disturbed (it is marked contended, and profiles placed under it "
                "say so); without it such a calibration is not written and hwprof exits with status 1");
  sub->callback([options, &exit_code]() { exit_code = run_calibrate(*options); });
  return options;
}

int run_calibrate(const CalibrateCommandOptions& options) {
  CalibrationOptions calibration;
  calibration.threads = options.threads;
  calibration.quick = options.quick;
  calibration.single_precision = std::find(options.precision.begin(), options.precision.end(), "sp") != options.precision.end();
  calibration.double_precision = std::find(options.precision.begin(), options.precision.end(), "dp") != options.precision.end();
  if (::isatty(2)) calibration.progress = [](const std::string& line) { std::cerr << "hwprof: " << line << "\n"; };
  // Where the report goes is checked before a minute of measuring, not after.
  if (!options.output.empty()) {
    if (auto error = check_output_path(options.output)) return fail(*error);
  } else if (machine_store_dir().empty()) {
    return fail(no_machine_store_error());
  }
  if (!options.svg.empty()) {
    if (auto error = check_output_path(options.svg)) return fail(*error);
  }
  if (const BlasInfo blas = blas_info(); !blas.advice.empty()) std::cerr << "hwprof calibrate: note: " << blas.advice << "\n";
  // One calibration at a time on a machine: two would measure each other.
  auto lock = CalibrationLock::acquire([](const std::string& line) { std::cerr << "hwprof calibrate: " << line << "\n"; });
  if (!lock) std::cerr << "hwprof calibrate: note: " << lock.error().message << "; calibrating without the lock\n";
  auto machine = calibrate(calibration);
  if (!machine) return fail(machine.error());
  // Contention first: it is what a user can act on, and it often explains an implausible run.
  if (machine->contention.contended && !options.allow_contended) {
    std::cout << summary(*machine, "");
    return fail(
        Error{"other processes disturbed this calibration (see CONTENDED above), so its ceilings describe a busy "
              "machine: nothing was written. Run it again when the machine is quiet, or pass --allow-contended to "
              "keep it marked as contended"});
  }
  if (const std::vector<std::string> problems = implausible_fields(*machine); !problems.empty()) {
    std::cout << summary(*machine, "");
    std::string all;
    for (const std::string& p : problems) all += "\n  - " + p;
    return fail(Error{"the calibration stayed implausible after measuring it again; nothing was written:" + all +
                      (machine->contention.contended ? "\nOther processes disturbed it too (see CONTENDED above)" : "") +
                      "\nRun it again on a quiet machine; if it persists, report it with `hwprof calibrate -f json`'s output"});
  }

  std::string path = options.output;
  if (path.empty()) {
    path = machine_store_path(machine->host, machine->cpu);
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    if (ec) return fail(Error{std::filesystem::path(path).parent_path().string() + ": cannot create the machine store (" + ec.message() + ")"});
  }
  const std::string json = machine_to_json(*machine);
  if (auto error = write_file_atomically(path, json)) return fail(*error);
  std::string svg_path = options.svg;
  if (svg_path.empty()) svg_path = std::filesystem::path(path).replace_extension(".svg").string();
  const int threads = machine->runs.back().threads;
  if (auto error = write_file_atomically(svg_path, ceilings_svg(*machine, threads, calibration.single_precision))) return fail(*error);
  if (options.format == "json") return emit(json, "");
  return emit(summary(*machine, path) + "Chart: " + svg_path + "\n", "");
}

}  // namespace hwprof::cli
