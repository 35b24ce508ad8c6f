#include "calibrate/contention.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>
#include "common/stages.hpp"

namespace hwprof::calibration {
namespace {

double seconds_of(const timeval& tv) {
  return static_cast<double>(tv.tv_sec) + 1e-6 * static_cast<double>(tv.tv_usec);
}

std::string read_small_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string text;
  char buffer[4096];
  while (in && text.size() < (1u << 20)) {
    in.read(buffer, sizeof buffer);
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
  }
  return text;
}

long clock_ticks() {
  const long hz = ::sysconf(_SC_CLK_TCK);
  return hz > 0 ? hz : 100;
}

}  // namespace

std::optional<ProcStat> parse_proc_stat(std::string_view text) {
  ProcStat stat;
  bool found = false;
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string key;
    fields >> key;
    if (key == "cpu") {
      // user nice system idle iowait irq softirq steal [guest guest_nice: already in user/nice]
      std::uint64_t v[8] = {};
      int n = 0;
      while (n < 8 && fields >> v[n]) ++n;
      if (n < 4) return std::nullopt;
      stat.all.busy = v[0] + v[1] + v[2] + v[5] + v[6];
      stat.all.idle = v[3] + v[4];
      stat.all.steal = v[7];
      stat.all.interrupts = v[5] + v[6];
      found = true;
    } else if (key == "procs_running") {
      int running = -1;
      if (fields >> running) stat.procs_running = running;
    }
  }
  if (!found) return std::nullopt;
  return stat;
}

std::optional<ProcessTicks> parse_process_stat(std::string_view line) {
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so it ends at the last ')'.
  const auto open = line.find('(');
  const auto close = line.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return std::nullopt;
  ProcessTicks p;
  try {
    p.pid = std::stoi(std::string(line.substr(0, open)));
  } catch (...) {
    return std::nullopt;
  }
  p.name = std::string(line.substr(open + 1, close - open - 1));
  std::istringstream fields{std::string(line.substr(close + 1))};
  // Fields 3.. of proc(5): state, ppid, pgrp, session, tty_nr, tpgid, flags, minflt, cminflt,
  // majflt, cmajflt, utime (14), stime (15).
  std::string word;
  std::uint64_t utime = 0, stime = 0;
  for (int field = 3; field <= 15; ++field) {
    if (!(fields >> word)) return std::nullopt;
    try {
      if (field == 14) utime = std::stoull(word);
      if (field == 15) stime = std::stoull(word);
    } catch (...) {
      return std::nullopt;
    }
  }
  p.ticks = utime + stime;
  return p;
}

Load load_between(const LoadSnapshot& before, const LoadSnapshot& after, long ticks_per_second) {
  Load load;
  load.seconds = after.wall_seconds - before.wall_seconds;
  const CpuTicks& a = before.stat.all;
  const CpuTicks& b = after.stat.all;
  if (load.seconds <= 0.0 || b.total() < a.total() || b.busy < a.busy || b.total() == 0 || ticks_per_second <= 0) return load;
  load.known = true;
  const double busy = static_cast<double>(b.busy - a.busy) / static_cast<double>(ticks_per_second);
  const double own = std::max(0.0, after.own_cpu_seconds - before.own_cpu_seconds);
  load.others_cpus = std::max(0.0, busy - own) / load.seconds;
  const std::uint64_t total = b.total() - a.total();
  load.steal_fraction = total > 0 ? static_cast<double>(b.steal - a.steal) / static_cast<double>(total) : 0.0;
  return load;
}

std::vector<Neighbour> busiest(const std::vector<ProcessTicks>& before, const std::vector<ProcessTicks>& after, double seconds, long ticks_per_second,
                               int own_pid, std::size_t most) {
  std::map<int, const ProcessTicks*> earlier;
  for (const ProcessTicks& p : before) earlier[p.pid] = &p;
  std::vector<Neighbour> out;
  if (seconds <= 0.0 || ticks_per_second <= 0) return out;
  for (const ProcessTicks& p : after) {
    if (p.pid == own_pid) continue;
    auto it = earlier.find(p.pid);
    const std::uint64_t start = it == earlier.end() ? 0 : it->second->ticks;  // new: all its time is since
    if (p.ticks <= start) continue;
    out.push_back({p.pid, p.name, static_cast<double>(p.ticks - start) / static_cast<double>(ticks_per_second) / seconds});
  }
  std::sort(out.begin(), out.end(), [](const Neighbour& a, const Neighbour& b) { return a.cpus > b.cpus; });
  if (out.size() > most) out.resize(most);
  return out;
}

bool contended(const Load& load, int logical_cpus) noexcept {
  const int cpus = logical_cpus > 0 ? logical_cpus : static_cast<int>(std::thread::hardware_concurrency());
  const double others = std::max(kOthersCpusContended, kOthersShareContended * cpus);
  return load.known && (load.others_cpus >= others || load.steal_fraction >= kStealContended);
}

std::string describe(const Load& load) {
  if (!load.known) return "the load could not be read (/proc/stat)";
  return fmt::format("other processes used {:.2f} CPUs and the hypervisor stole {:.1f}% of the time over {:.1f} s", load.others_cpus,
                     100.0 * load.steal_fraction, load.seconds);
}

LoadSnapshot snapshot_load() {
  LoadSnapshot s;
  s.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  if (auto stat = parse_proc_stat(read_small_file("/proc/stat"))) s.stat = *stat;
  rusage usage{};
  if (::getrusage(RUSAGE_SELF, &usage) == 0) s.own_cpu_seconds = seconds_of(usage.ru_utime) + seconds_of(usage.ru_stime);
  return s;
}

std::vector<ProcessTicks> scan_processes() {
  std::vector<ProcessTicks> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string line = read_small_file(entry.path().string() + "/stat");
    if (auto p = parse_process_stat(line)) out.push_back(std::move(*p));
  }
  return out;
}

void LoadWatch::begin() {
  start_ = snapshot_load();
}

Load LoadWatch::end() const {
  return load_between(start_, snapshot_load(), clock_ticks());
}

std::string LoadCheck::words() const {
  std::string out = describe(load);
  std::string who;
  for (const Neighbour& n : neighbours) {
    if (n.cpus < 0.05) continue;
    who += fmt::format("{}{} (pid {}) {:.2f}", who.empty() ? "" : ", ", n.name, n.pid, n.cpus);
  }
  return who.empty() ? out : out + "; busiest: " + who;
}

LoadCheck check_load(double seconds) {
  LoadCheck check;
  const std::vector<ProcessTicks> before = scan_processes();
  const LoadSnapshot start = snapshot_load();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  const LoadSnapshot stop = snapshot_load();
  check.load = load_between(start, stop, clock_ticks());
  check.neighbours = busiest(before, scan_processes(), check.load.seconds, clock_ticks(), static_cast<int>(::getpid()), 5);
  return check;
}

}  // namespace hwprof::calibration
