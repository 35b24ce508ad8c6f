#include "sampling/sample_spec.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/cpu_topology.hpp"
#include "common/printable.hpp"
#include "common/stages.hpp"
#include "counters/event_resolver.hpp"

namespace hwprof::sampling {
namespace {

constexpr const char* kSysfsDevices = "/sys/bus/event_source/devices";
constexpr const char* kSyntax = "expected EVENT[@RATE]: cpu-clock@1000 (Hz), cycles@p100000 (a period), cycles:pp@p100000 (precise)";
// perf_event_open(2) refuses a sample_period with its top bit set.
constexpr std::uint64_t kMaxPeriod = std::uint64_t{1} << 63;

// The user's text quoted, its control characters escaped (it may come from the environment).
std::string quoted(std::string_view s) {
  return "'" + printable_name(s) + "'";
}

Error refuse(std::string_view text, const std::string& problem) {
  return Error{"sample spec " + quoted(text) + ": " + problem};
}

// A whole decimal number, digits only; nullopt when empty, not a number or above 2^64 - 1.
std::optional<std::uint64_t> parse_count(std::string_view digits) {
  if (digits.empty() || digits.size() > 20) return std::nullopt;
  std::uint64_t value = 0;
  for (const char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool is_level_key(std::string_view key) {
  return key == "u" || key == "k" || key == "uk" || key == "ku";
}

// The event's name with the precise modifiers taken out (the resolvers do not know them):
// a part of u/k/p letters with one to three p's (perf's :pp, :upp) and libpfm4's precise=N.
struct EventModifiers {
  std::string name;  // what the event resolver is given
  std::uint8_t precise = 0;
  bool levels_given = false;
};

Result<EventModifiers> split_modifiers(std::string_view text, std::string_view event) {
  // Modifiers start at the first ':' after a "pmu::" prefix or after a raw spec's last '/'.
  std::size_t from = 0;
  if (const auto slash = event.rfind('/'); slash != std::string_view::npos) {
    from = slash + 1;
  } else if (const auto pmu = event.find("::"); pmu != std::string_view::npos) {
    from = pmu + 2;
  }
  const auto colon = event.find(':', from);
  EventModifiers out;
  out.name = std::string(event.substr(0, colon));
  std::string_view rest = colon == std::string_view::npos ? std::string_view() : event.substr(colon + 1);
  bool precise_given = false;
  while (colon != std::string_view::npos) {
    const auto next = rest.find(':');
    const std::string_view part = rest.substr(0, next);
    const std::string_view key = part.substr(0, part.find('='));
    std::string kept(part);
    if (key.size() == 7 &&
        std::equal(key.begin(), key.end(), "precise", [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; })) {
      const auto level = part.size() > 8 ? parse_count(part.substr(8)) : std::nullopt;
      if (part.size() <= 8 || !level || *level > 3) return refuse(text, quoted(part) + ": precise takes 0, 1, 2 or 3 (precise=2)");
      if (precise_given) return refuse(text, "the precise level is given twice");
      out.precise = static_cast<std::uint8_t>(*level);
      precise_given = true;
      kept.clear();
    } else if (!part.empty() && part.find('p') != std::string_view::npos && part.find_first_not_of("ukp") == std::string_view::npos) {
      const auto ps = static_cast<std::size_t>(std::count(part.begin(), part.end(), 'p'));
      if (ps > 3) return refuse(text, quoted(":" + std::string(part)) + ": at most three p's (:ppp, precise_ip 3)");
      if (precise_given) return refuse(text, "the precise level is given twice");
      out.precise = static_cast<std::uint8_t>(ps);
      precise_given = true;
      kept.erase(std::remove(kept.begin(), kept.end(), 'p'), kept.end());
    }
    if (is_level_key(kept.substr(0, kept.find('=')))) out.levels_given = true;
    if (!kept.empty()) out.name += ":" + kept;
    if (next == std::string_view::npos) break;
    rest.remove_prefix(next + 1);
  }
  return out;
}

// The rate after '@': a frequency in Hz, or 'p' and a period.
Result<SampleSpec> parse_rate(std::string_view text, std::string_view rate, SampleSpec spec, const SamplingLimits& limits) {
  spec.frequency = rate.empty() || rate.front() != 'p';
  const std::string_view digits = spec.frequency ? rate : rate.substr(1);
  const std::string what = spec.frequency ? "frequency" : "period";
  if (rate.empty()) return refuse(text, "nothing after '@'; " + std::string(kSyntax));
  if (!digits.empty() && digits.front() == '-') return refuse(text, "a " + what + " cannot be negative; " + kSyntax);
  const auto value = parse_count(digits);
  if (!value) {
    return refuse(text, quoted(digits) + " is not a whole number" + (digits.size() > 19 ? " that fits in 64 bits" : "") + "; " + kSyntax);
  }
  if (*value == 0) return refuse(text, spec.frequency ? "0 Hz takes no samples" : "a period of 0 events takes no samples");
  spec.rate = *value;
  const bool clock = spec.resolved.unit == "ns";  // cpu-clock, task-clock: a period is nanoseconds
  const std::uint64_t hz = spec.frequency ? *value : clock ? std::max<std::uint64_t>(1, 1'000'000'000 / *value) : 0;
  if (limits.max_sample_rate > 0 && hz > limits.max_sample_rate) {
    const std::string asked =
        spec.frequency ? std::to_string(hz) + " Hz" : "a period of " + std::to_string(*value) + " ns (" + std::to_string(hz) + " Hz)";
    return refuse(text, asked + " is above this kernel's limit of " + std::to_string(limits.max_sample_rate) +
                            " Hz (kernel.perf_event_max_sample_rate). Lower the rate, or raise the limit: `sudo sysctl "
                            "kernel.perf_event_max_sample_rate=" +
                            std::to_string(hz) + "` (the kernel lowers it by itself when sampling interrupts take too long)");
  }
  if (!spec.frequency && *value >= kMaxPeriod) return refuse(text, "a period of 2^63 events or more is refused by the kernel");
  if (!spec.frequency && !spec.resolved.software && *value < kMinHardwarePeriod) {
    return refuse(text, "a sample every " + std::to_string(*value) +
                            " events would interrupt the CPU every few hundred nanoseconds (the "
                            "kernel throttles it); use a period of at least " +
                            std::to_string(kMinHardwarePeriod) + ", e.g. " + spec.event + "@p100000, or a frequency (" + spec.event + "@1000)");
  }
  return spec;
}

}  // namespace

SamplingLimits read_sampling_limits() {
  SamplingLimits limits;
  if (const auto rate = parse_count(read_first_line("/proc/sys/kernel/perf_event_max_sample_rate"))) limits.max_sample_rate = *rate;
  if (const auto stack = parse_count(read_first_line("/proc/sys/kernel/perf_event_max_stack"))) {
    limits.max_stack = static_cast<std::uint32_t>(std::min<std::uint64_t>(*stack, UINT32_MAX));
  }
  return limits;
}

Result<SampleSpec> parse_sample_spec(std::string_view text) {
  return parse_sample_spec(text, read_sampling_limits(), kSysfsDevices);
}

Result<SampleSpec> parse_sample_spec(std::string_view text, const SamplingLimits& limits, const std::string& sysfs_devices) {
  const std::string_view spec_text = trimmed(text);
  if (spec_text.empty()) return Error{"empty sample spec; " + std::string(kSyntax)};
  // A control character (an embedded NUL would end the event's name where the kernel and
  // libpfm4 read it) is never part of an event name or a rate.
  for (const char c : spec_text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      return refuse(text, "a control character (" + std::string(hex) + ") in the spec; " + std::string(kSyntax));
    }
  }
  const auto at = spec_text.find('@');
  if (at != std::string_view::npos && spec_text.find('@', at + 1) != std::string_view::npos)
    return refuse(text, "more than one '@'; " + std::string(kSyntax));
  const std::string_view event_text = at == std::string_view::npos ? spec_text : spec_text.substr(0, at);
  auto modifiers = split_modifiers(text, event_text.empty() ? std::string_view("cpu-clock") : event_text);
  if (!modifiers) return modifiers.error();
  SampleSpec spec;
  spec.text = std::string(spec_text);
  spec.event = modifiers->name;
  spec.precise_ip = modifiers->precise;
  spec.levels_given = modifiers->levels_given;
  auto resolved = resolve_event(spec.event, sysfs_devices);
  if (!resolved) return refuse(text, resolved.error().message);
  spec.resolved = std::move(*resolved);
  if (spec.resolved.uncore) {
    return refuse(text, quoted(spec.event) + " is an uncore event: it counts a whole socket, not a thread, and cannot be sampled; " +
                            "sample a core event such as cpu-clock or cycles");
  }
  if (spec.precise_ip > 0 && spec.resolved.software) {
    return refuse(text, quoted(spec.event) + " is a software event, which has no precise mode: :p, :pp, :ppp and precise=N need a hardware " +
                            "event on a PMU with precise sampling (Intel PEBS, AMD IBS)");
  }
  if (at != std::string_view::npos) {
    auto with_rate = parse_rate(text, spec_text.substr(at + 1), std::move(spec), limits);
    if (!with_rate) return with_rate;
    spec = std::move(*with_rate);
  } else if (limits.max_sample_rate > 0 && kDefaultSampleHz > limits.max_sample_rate) {
    return refuse(text, "the default " + std::to_string(kDefaultSampleHz) + " Hz is above this kernel's limit of " +
                            std::to_string(limits.max_sample_rate) + " Hz (kernel.perf_event_max_sample_rate); give a lower rate (" + spec.event +
                            "@" + std::to_string(limits.max_sample_rate) +
                            ") or raise the limit with `sudo sysctl kernel.perf_event_max_sample_rate=1000`");
  }
  if (limits.max_stack > 0 && limits.max_stack < spec.callchain_depth) {
    spec.callchain_depth = limits.max_stack;
    spec.notes.push_back("callchains are cut at " + std::to_string(limits.max_stack) + " frames: kernel.perf_event_max_stack is " +
                         std::to_string(limits.max_stack) +
                         " (raise it with `sudo sysctl kernel.perf_event_max_stack=" + std::to_string(kDefaultCallchainDepth) + "`)");
  }
  return spec;
}

std::string describe_rate(const SampleSpec& spec) {
  if (spec.frequency) return std::to_string(spec.rate) + " Hz";
  if (spec.resolved.unit == "ns") return "every " + std::to_string(spec.rate) + " ns";
  return "every " + std::to_string(spec.rate) + " events";
}

}  // namespace hwprof::sampling
