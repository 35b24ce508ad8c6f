#include "counters/perf_event_backend.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <linux/perf_event.h>
#include <unistd.h>

#include "common/cpu_topology.hpp"
#include "common/stages.hpp"
#include "counters/counter_math.hpp"
#include "counters/event_resolver.hpp"
#include "counters/mmap_read.hpp"
#include "counters/system_info.hpp"

namespace hwprof::counters {
namespace {

constexpr std::uint64_t kReadFormat = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;

// Where a group is opened: a thread (pid = tid, cpu = -1), or for uncore events one CPU of
// one PMU instance (pid = -1; uncore_imc_0, uncore_imc_1, ... each have their own type).
struct Target {
  pid_t pid = -1;
  int cpu = -1;
  std::uint32_t type = 0;
  bool instance = false;  // use `type` instead of the event's own
};

struct OpenedGroup {
  Target target;
  std::vector<int> fds;            // leader first
  std::vector<std::uint64_t> ids;  // PERF_EVENT_IOC_ID of each fd, same order
};

struct Group {
  std::vector<std::size_t> members;  // indices into the set's events, leader first
  bool uncore = false;
  std::vector<OpenedGroup> opened;  // one per target
  // Calling-thread sets of hardware events: each member's mmap page, for rdpmc reads.
  std::vector<const volatile perf_event_mmap_page*> pages;
};

// One CPU per socket for uncore PMUs: the PMU's own cpumask lists them (e.g. "0,28").
std::vector<int> uncore_cpus(const std::string& devices, const std::string& pmu) {
  // A malformed cpumask gives no targets, which the caller reports.
  return parse_cpu_list(read_first_line(devices + "/" + pmu + "/cpumask"));
}

perf_event_attr make_attr(const ResolvedEvent& e, bool leader, const CounterOptions& options, const Target& target) {
  const bool uncore = target.instance;
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = uncore ? target.type : e.type;
  attr.config = e.config;
  attr.config1 = e.config1;
  attr.config2 = e.config2;
  attr.read_format = kReadFormat;
  attr.disabled = leader ? 1 : 0;                                  // siblings follow their leader
  attr.inherit = (uncore || options.calling_thread_only) ? 0 : 1;  // threads started later are counted
  // Uncore PMUs count the whole socket and reject the exclude_* bits.
  attr.exclude_kernel = (!uncore && e.exclude_kernel) ? 1 : 0;
  attr.exclude_hv = uncore ? 0 : 1;
  attr.enable_on_exec = (leader && options.enable_on_exec && !uncore) ? 1 : 0;
  return attr;
}

// Every CPU of every instance of an uncore event's PMU: counts are summed over all of them.
std::vector<Target> uncore_targets(const std::string& devices, const ResolvedEvent& e) {
  std::vector<Target> targets;
  std::vector<PmuInstance> instances = e.instances;
  if (instances.empty()) instances.push_back({e.pmu, e.type});
  for (const PmuInstance& instance : instances) {
    for (int cpu : uncore_cpus(devices, instance.name)) targets.push_back({-1, cpu, instance.type, true});
  }
  return targets;
}

class PerfEventSet final : public CounterSet {
 public:
  PerfEventSet(Syscalls& sys, const CounterOptions& options) : sys_(sys), options_(options), rdpmc_(sys.rdpmc()), rdtsc_(sys.rdtsc()) {}
  ~PerfEventSet() override { close_all(); }

  BackendKind backend() const noexcept override { return BackendKind::perf; }

  // Resolves every event, probes each alone, then opens them in groups on every thread.
  void open() {
    const std::string devices = sys_.pmu_devices();
    std::vector<ResolvedEvent> resolved(options_.events.size());
    std::vector<bool> usable(options_.events.size(), false);
    resolve_all(devices, resolved, usable);
    targets_ = thread_targets();
    probe_each(resolved, usable, hardware_pmu_exposed(devices));
    open_groups(resolved, usable);
  }

  void resolve_all(const std::string& devices, std::vector<ResolvedEvent>& resolved, std::vector<bool>& usable) {
    for (std::size_t i = 0; i < options_.events.size() && i < kMaxCounterEvents; ++i) {
      EventInfo info;
      info.name = options_.events[i];
      auto r = resolve_event(options_.events[i], devices);
      if (!r) {
        info.status = CounterStatus::unsupported;
        info.reason = r.error().message;
      } else {
        resolved[i] = *r;
        info.unit = r->unit;
        info.kind = r->kind;
        usable[i] = true;
      }
      events_.push_back(std::move(info));
    }
    for (std::size_t i = kMaxCounterEvents; i < options_.events.size(); ++i) {
      events_.push_back({options_.events[i], "", CounterStatus::unsupported,
                         "more than " + std::to_string(kMaxCounterEvents) + " events in one set; split them into several sets", EventKind::other});
    }
  }

  // Each event alone on the first target: its own status, before grouping (user space only
  // where the kernel refuses kernel-mode counting and the event allows it).
  void probe_each(std::vector<ResolvedEvent>& resolved, std::vector<bool>& usable, bool pmu) {
    for (std::size_t i = 0; i < resolved.size(); ++i) {
      if (!usable[i]) continue;
      const Target t = probe_target(resolved[i]);
      perf_event_attr attr = make_attr(resolved[i], true, options_, t);
      int fd = open_event(sys_, attr, t.pid, t.cpu, -1, PERF_FLAG_FD_CLOEXEC);
      if ((fd == -EACCES || fd == -EPERM) && resolved[i].kernel_optional) {
        resolved[i].exclude_kernel = true;
        attr = make_attr(resolved[i], true, options_, t);
        fd = open_event(sys_, attr, t.pid, t.cpu, -1, PERF_FLAG_FD_CLOEXEC);
        if (fd >= 0) {
          events_[i].reason = "counted in user space only: the kernel refused kernel-mode counting (kernel.perf_event_paranoid is " +
                              read_first_line("/proc/sys/kernel/perf_event_paranoid") +
                              "), so faults taken while the kernel writes into the program's memory are missed. Fix: "
                              "`sudo sysctl kernel.perf_event_paranoid=1` or CAP_PERFMON (scripts/enable-counters.sh)";
        }
      }
      if (fd < 0) {
        usable[i] = false;
        events_[i].status = status_from_errno(-fd);
        events_[i].reason = reason_from_errno(-fd, !resolved[i].software, resolved[i].uncore);
        if (!resolved[i].software && !pmu && (fd == -ENOENT || fd == -EOPNOTSUPP)) {
          events_[i].reason =
              "this machine exposes no hardware PMU (a virtual machine without PMU passthrough?); only "
              "software events such as task-clock and page-faults can be counted here";
        }
        continue;
      }
      sys_.close(fd);
    }
  }

  // Group: software events together, core hardware events together (split when a sibling
  // does not fit), uncore events per PMU. A thread started while we open is covered by
  // `inherit` if its creator was already opened, and missed otherwise; opening it directly
  // could count it twice. So open on the list of threads, list them again, and start over
  // until the list held still.
  void open_groups(const std::vector<ResolvedEvent>& resolved, const std::vector<bool>& usable) {
    std::vector<std::vector<std::size_t>> candidates;
    std::vector<std::string> keys;
    for (std::size_t i = 0; i < resolved.size(); ++i) {
      if (!usable[i]) continue;
      const std::string key = resolved[i].software ? "software" : resolved[i].uncore ? "uncore:" + resolved[i].pmu : "core";
      auto it = std::find(keys.begin(), keys.end(), key);
      if (it == keys.end()) {
        keys.push_back(key);
        candidates.emplace_back();
        it = keys.end() - 1;
      }
      candidates[static_cast<std::size_t>(it - keys.begin())].push_back(i);
    }
    const std::vector<EventInfo> probed = events_;
    bool stable = options_.pid != 0 || options_.calling_thread_only;
    for (int attempt = 0; attempt < kOpenAttempts; ++attempt) {
      close_all();
      groups_.clear();
      events_ = probed;
      targets_ = thread_targets();
      for (std::size_t c = 0; c < candidates.size(); ++c) form_groups(candidates[c], resolved, keys[c].rfind("uncore:", 0) == 0);
      if (stable) break;
      std::vector<pid_t> before;
      for (const Target& t : targets_) before.push_back(t.pid);
      std::vector<pid_t> after = sys_.threads();
      std::sort(before.begin(), before.end());
      std::sort(after.begin(), after.end());
      if (after.empty() || after == before) {
        stable = true;
        break;
      }
    }
    if (stable) return;
    for (Group& g : groups_) {
      if (g.uncore) continue;
      for (std::size_t m : g.members) {
        events_[m].status = CounterStatus::not_counted;
        events_[m].reason = "threads kept starting and ending while the counters opened (" + std::to_string(kOpenAttempts) +
                            " attempts); some may be missed, so the count would be wrong";
      }
      close_group(g);
    }
  }

  void start() noexcept override {
    for (Group& g : groups_) {
      for (OpenedGroup& o : g.opened) sys_.ioctl(o.fds.front(), PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
    }
  }

  void stop() noexcept override {
    for (Group& g : groups_) {
      for (OpenedGroup& o : g.opened) sys_.ioctl(o.fds.front(), PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
    }
  }

  void read(CounterSnapshot& out) noexcept override {
    // Only this set's slots: events that never opened read as invalid, the rest are written
    // below. (Clearing all kMaxCounterEvents slots costs ~10% of a read.)
    for (std::size_t e = 0; e < events_.size() && e < kMaxCounterEvents; ++e) out.valid[e] = false;
    std::array<std::uint64_t, group_read_words(kMaxCounterEvents)> words;
    std::array<std::uint64_t, kMaxCounterEvents> values;
    for (const Group& g : groups_) {
      const std::size_t n = g.members.size();
      if (!g.pages.empty() && read_in_user_space(g, out)) continue;
      bool ok = !g.opened.empty();
      std::array<std::uint64_t, kMaxCounterEvents> sum;
      for (std::size_t k = 0; k < n; ++k) sum[k] = 0;
      std::uint64_t enabled = 0;
      std::uint64_t running = 0;
      for (const OpenedGroup& o : g.opened) {
        const long got = read_exact(sys_, o.fds.front(), words.data(), group_read_words(n) * sizeof(std::uint64_t));
        GroupTimes times;
        if (got < 0 || !parse_group_read(words.data(), group_read_words(n), o.ids.data(), n, values.data(), &times)) {
          ok = false;  // one target missing would undercount the whole: report it unavailable
          break;
        }
        for (std::size_t k = 0; k < n; ++k) sum[k] += values[k];
        // Times add up over threads like the counts, as perf stat sums inherited counters.
        enabled += times.enabled;
        running += times.running;
      }
      for (std::size_t k = 0; k < n; ++k) {
        const std::size_t e = g.members[k];
        out.valid[e] = ok;
        out.value[e] = ok ? sum[k] : 0;
        out.time_enabled[e] = ok ? enabled : 0;
        out.time_running[e] = ok ? running : 0;
      }
    }
  }

 private:
  // rdpmc on every member's page; false (nothing written) when any member must be read
  // with read(2) instead.
  bool read_in_user_space(const Group& g, CounterSnapshot& out) noexcept {
    std::array<MmapCounterValue, kMaxCounterEvents> values;
    for (std::size_t k = 0; k < g.members.size(); ++k) {
      if (!read_mmap_counter(g.pages[k], rdpmc_, rdtsc_, &values[k])) return false;
    }
    for (std::size_t k = 0; k < g.members.size(); ++k) {
      const std::size_t e = g.members[k];
      out.valid[e] = true;
      out.value[e] = values[k].count;
      out.time_enabled[e] = values[0].time_enabled;  // the group is scheduled as one
      out.time_running[e] = values[0].time_running;
    }
    return true;
  }

  // Maps the pages of a calling-thread group of hardware events; leaves it without pages
  // (read(2) only) when any page cannot be mapped.
  void map_pages(Group& g, const std::vector<ResolvedEvent>& resolved) {
    if (!options_.calling_thread_only || g.uncore || g.opened.size() != 1) return;
    for (std::size_t e : g.members) {
      if (resolved[e].software) return;  // software events have no hardware counter to rdpmc
    }
    for (int fd : g.opened.front().fds) {
      const volatile perf_event_mmap_page* page = sys_.map_counter(fd);
      if (page == nullptr) {
        unmap_pages(g);
        return;
      }
      g.pages.push_back(page);
    }
  }

  void unmap_pages(Group& g) noexcept {
    for (const volatile perf_event_mmap_page* page : g.pages) sys_.unmap_counter(page);
    g.pages.clear();
  }

  std::vector<Target> thread_targets() {
    if (options_.calling_thread_only) return {{0, -1}};
    if (options_.pid != 0) return {{options_.pid, -1}};
    std::vector<Target> targets;
    for (pid_t tid : sys_.threads()) targets.push_back({tid, -1});
    if (targets.empty()) targets.push_back({0, -1});  // the calling thread, at least
    return targets;
  }

  Target probe_target(const ResolvedEvent& e) const {
    if (e.uncore) {
      const std::vector<Target> targets = uncore_targets(sys_.pmu_devices(), e);
      return targets.empty() ? Target{-1, 0, e.type, true} : targets.front();
    }
    return targets_.front();
  }

  // Opens `members` on the first target as one group, starting a new group whenever a
  // sibling does not fit, then opens the groups on every other target.
  void form_groups(const std::vector<std::size_t>& members, const std::vector<ResolvedEvent>& resolved, bool uncore) {
    std::vector<Target> targets = uncore ? uncore_targets(sys_.pmu_devices(), resolved[members.front()]) : targets_;
    if (targets.empty()) {
      for (std::size_t i : members) {
        events_[i].status = CounterStatus::unsupported;
        events_[i].reason = "the uncore PMU " + resolved[i].pmu + " lists no CPU in its sysfs cpumask";
      }
      return;
    }
    std::size_t next = 0;
    while (next < members.size()) {
      Group g;
      g.uncore = uncore;
      OpenedGroup first;
      first.target = targets.front();
      for (; next < members.size(); ++next) {
        const std::size_t e = members[next];
        perf_event_attr attr = make_attr(resolved[e], first.fds.empty(), options_, first.target);
        const int fd = open_event(sys_, attr, first.target.pid, first.target.cpu, first.fds.empty() ? -1 : first.fds.front(), PERF_FLAG_FD_CLOEXEC);
        if (fd < 0) {
          if (first.fds.empty()) {  // it opened alone a moment ago; now it does not: give up on it
            events_[e].status = status_from_errno(-fd);
            events_[e].reason = reason_from_errno(-fd, !resolved[e].software, uncore);
            continue;
          }
          break;  // does not fit beside the others: it leads the next group
        }
        std::uint64_t id = 0;
        if (sys_.ioctl(fd, PERF_EVENT_IOC_ID, reinterpret_cast<unsigned long>(&id)) != 0) {
          sys_.close(fd);
          events_[e].status = CounterStatus::unsupported;
          events_[e].reason = "the kernel gave no event id (PERF_EVENT_IOC_ID failed)";
          continue;
        }
        first.fds.push_back(fd);
        first.ids.push_back(id);
        g.members.push_back(e);
      }
      if (g.members.empty()) continue;
      g.opened.push_back(std::move(first));
      for (std::size_t t = 1; t < targets.size(); ++t) open_group_on(g, resolved, targets[t]);
      map_pages(g, resolved);
      groups_.push_back(std::move(g));
    }
  }

  // Opens an existing group's members on one more target. A thread that exited meanwhile is
  // skipped; any other failure makes the group's events unavailable, since counting some
  // threads and not others would be a wrong number.
  void open_group_on(Group& g, const std::vector<ResolvedEvent>& resolved, const Target& target) {
    OpenedGroup o;
    o.target = target;
    for (std::size_t k = 0; k < g.members.size(); ++k) {
      perf_event_attr attr = make_attr(resolved[g.members[k]], k == 0, options_, target);
      const int fd = open_event(sys_, attr, target.pid, target.cpu, k == 0 ? -1 : o.fds.front(), PERF_FLAG_FD_CLOEXEC);
      std::uint64_t id = 0;
      if (fd >= 0 && sys_.ioctl(fd, PERF_EVENT_IOC_ID, reinterpret_cast<unsigned long>(&id)) == 0) {
        o.fds.push_back(fd);
        o.ids.push_back(id);
        continue;
      }
      if (fd >= 0) sys_.close(fd);
      for (int opened : o.fds) sys_.close(opened);
      if (fd == -ESRCH) return;  // the thread ended before we got to it: nothing to count
      const int error = fd < 0 ? -fd : EIO;
      for (std::size_t m : g.members) {
        events_[m].status = CounterStatus::not_counted;
        events_[m].reason = "could not be opened on " +
                            std::string(target.pid >= 0 ? "thread " + std::to_string(target.pid) : "CPU " + std::to_string(target.cpu)) + ": " +
                            reason_from_errno(error, true, g.uncore);
      }
      close_group(g);
      return;
    }
    g.opened.push_back(std::move(o));
  }

  void close_group(Group& g) noexcept {
    unmap_pages(g);
    for (OpenedGroup& o : g.opened) {
      for (auto it = o.fds.rbegin(); it != o.fds.rend(); ++it) sys_.close(*it);
    }
    g.opened.clear();
  }

  void close_all() noexcept {
    for (Group& g : groups_) close_group(g);
  }

  Syscalls& sys_;
  CounterOptions options_;
  RdpmcFunction rdpmc_;
  RdtscFunction rdtsc_;
  std::vector<Target> targets_;
  std::vector<Group> groups_;
  static constexpr int kOpenAttempts = 8;
};

}  // namespace

CounterStatus status_from_errno(int error) noexcept {
  switch (error) {
    case EACCES:
    case EPERM:
      return CounterStatus::no_permission;
    case EMFILE:
    case ENFILE:
    case EBUSY:
    case ENOSPC:
      return CounterStatus::not_counted;
    default:
      return CounterStatus::unsupported;
  }
}

std::string reason_from_errno(int error, bool hardware, bool uncore) {
  const std::string paranoid = read_first_line("/proc/sys/kernel/perf_event_paranoid");
  switch (error) {
    case EACCES:
    case EPERM:
      return std::string(uncore ? "system-wide (uncore) counting" : "counting") + " is not permitted: " + "kernel.perf_event_paranoid is " +
             (paranoid.empty() ? "unknown" : paranoid) + (uncore ? "; uncore events need paranoid <= 0 or CAP_PERFMON" : "") +
             ". Fix: `sudo sysctl kernel.perf_event_paranoid=" + (uncore ? "0" : "1") +
             "`, or grant CAP_PERFMON (`sudo setcap cap_perfmon+ep $(which hwprof)`); scripts/enable-counters.sh does this";
    case ENOENT:
      return hardware ? "the kernel knows no such event on this CPU (ENOENT): the PMU does not have it or is not exposed"
                      : "the kernel knows no such event (ENOENT)";
    case EOPNOTSUPP:
      return "the PMU does not support this event or mode here (EOPNOTSUPP), e.g. a VM without PMU passthrough";
    case EINVAL:
      return "the kernel rejected the event's encoding (EINVAL): wrong for this CPU, or a bad modifier";
    case EMFILE:
    case ENFILE:
      return "out of file descriptors (one per event and thread): raise the limit with `ulimit -n`";
    case EBUSY:
      return "the counter is in use by someone else (EBUSY), e.g. the NMI watchdog or another profiler";
    case ENOSPC:
      return "the PMU has no free counter for it (ENOSPC)";
    case ENODEV:
      return "no such PMU device on this machine (ENODEV)";
    case E2BIG:
      return "the kernel rejected the perf_event_attr size (E2BIG): a kernel older than these headers";
    case ESRCH:
      return "no such process or thread (ESRCH)";
    default:
      return std::string("perf_event_open failed: ") + std::strerror(error);
  }
}

std::unique_ptr<CounterSet> open_perf_events(const CounterOptions& options, Syscalls& sys) {
  auto set = std::make_unique<PerfEventSet>(sys, options);
  set->open();
  return set;
}

}  // namespace hwprof::counters
