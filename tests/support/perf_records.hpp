// The kernel's sampling records built by hand, in the layout the sampler asks for
// (sample_type IP | TID | TIME | CALLCHAIN, sample_id_all: every non-sample record ends with
// pid, tid and time), for tests of the record parser and of the sampler on a fake kernel
// (docs/sampling.md, "Records").
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include <linux/perf_event.h>
#include <sys/mman.h>

namespace hwprof::test {

inline constexpr auto kKernelMarker = static_cast<std::uint64_t>(PERF_CONTEXT_KERNEL);
inline constexpr auto kUserMarker = static_cast<std::uint64_t>(PERF_CONTEXT_USER);

// Two u32 fields in one word, in memory order ({pid, tid}).
inline std::uint64_t pack(std::uint32_t first, std::uint32_t second) {
  std::uint64_t w = 0;
  std::memcpy(&w, &first, 4);
  std::memcpy(reinterpret_cast<char*>(&w) + 4, &second, 4);
  return w;
}

inline std::uint64_t header(std::uint32_t type, std::uint16_t misc, std::size_t words) {
  std::uint64_t w = 0;
  const auto size = static_cast<std::uint16_t>(words * 8);
  std::memcpy(&w, &type, 4);
  std::memcpy(reinterpret_cast<char*>(&w) + 4, &misc, 2);
  std::memcpy(reinterpret_cast<char*>(&w) + 6, &size, 2);
  return w;
}

// `parts` one after the other (sized once: GCC 12 warns falsely on vectors grown by insert).
inline std::vector<std::uint64_t> join(std::initializer_list<std::vector<std::uint64_t>> parts) {
  std::size_t n = 0;
  for (const auto& p : parts) n += p.size();
  std::vector<std::uint64_t> out(n);
  auto at = out.begin();
  for (const auto& p : parts) at = std::copy(p.begin(), p.end(), at);
  return out;
}

// `text` NUL-padded to whole words.
inline std::vector<std::uint64_t> text_words(const std::string& text) {
  std::vector<std::uint64_t> words(text.size() / 8 + 1, 0);
  auto* bytes = reinterpret_cast<char*>(words.data());
  for (std::size_t i = 0; i < text.size(); ++i) bytes[i] = text[i];
  return words;
}

// A record: `body` after a header that gives the right size.
inline std::vector<std::uint64_t> record(std::uint32_t type, std::uint16_t misc, const std::vector<std::uint64_t>& body) {
  return join({{header(type, misc, body.size() + 1)}, body});
}

inline std::vector<std::uint64_t> chain(std::initializer_list<std::uint64_t> entries) {
  return entries;
}

inline std::vector<std::uint64_t> sample_record(std::uint32_t pid, std::uint32_t tid, std::uint64_t time, std::uint64_t ip,
                                                const std::vector<std::uint64_t>& callchain, std::uint16_t misc = PERF_RECORD_MISC_USER) {
  return record(PERF_RECORD_SAMPLE, misc, join({{ip, pack(pid, tid), time, callchain.size()}, callchain}));
}

// The sample_id trailer every non-sample record ends with.
inline std::vector<std::uint64_t> trailer(std::uint32_t pid, std::uint32_t tid, std::uint64_t time) {
  return {pack(pid, tid), time};
}

inline std::vector<std::uint64_t> mmap2_record(std::uint32_t pid, std::uint64_t addr, std::uint64_t len, std::uint64_t pgoff, const std::string& file,
                                               std::uint64_t time) {
  return record(PERF_RECORD_MMAP2, 0,
                join({{pack(pid, pid), addr, len, pgoff, pack(8, 1), 4242, 7, pack(PROT_READ | PROT_EXEC, MAP_PRIVATE)},
                      text_words(file),
                      trailer(pid, pid, time)}));
}

inline std::vector<std::uint64_t> comm_record(std::uint32_t pid, std::uint32_t tid, const std::string& name, bool exec, std::uint64_t time) {
  return record(PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0, join({{pack(pid, tid)}, text_words(name), trailer(pid, tid, time)}));
}

inline std::vector<std::uint64_t> lost_record(std::uint64_t count, std::uint64_t time) {
  return record(PERF_RECORD_LOST, 0, join({{99, count}, trailer(1, 1, time)}));
}

inline std::vector<std::uint64_t> throttle_record(bool throttled, std::uint64_t time) {
  return record(throttled ? PERF_RECORD_THROTTLE : PERF_RECORD_UNTHROTTLE, 0, join({{time, 99, 99}, trailer(1, 1, time)}));
}

inline std::vector<std::uint64_t> task_record(bool exit, std::uint32_t pid, std::uint32_t tid, std::uint32_t ptid, std::uint64_t time) {
  return record(exit ? PERF_RECORD_EXIT : PERF_RECORD_FORK, 0, join({{pack(pid, pid), pack(tid, ptid), time}, trailer(pid, tid, time)}));
}

}  // namespace hwprof::test
