// What a sampling run produces, and the free functions that turn the kernel's ring buffer
// into it — tested on buffers built by hand, without a kernel (docs/sampling.md, "Records").
//
// The records are the kernel's (include/uapi/linux/perf_event.h, enum perf_event_type, and
// man perf_event_open(2), "MMAP layout"), for the one layout the sampler asks for:
// sample_type = IP | TID | TIME | CALLCHAIN and sample_id_all = 1, so that every record but a
// sample ends with {u32 pid, u32 tid, u64 time} (kSampleIdBytes).
//
// Samples are kept without a heap allocation each: fixed SampleRecords in one vector, their
// callchains in one flat vector of frames (and one of each frame's context), a sample naming
// its (first_frame, frame_count) slice. Past a cap on samples or frames a sample is counted
// as dropped, never silently lost.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <sys/types.h>

#include "common/stages.hpp"
#include "hwprof/result.hpp"

namespace hwprof::sampling {

inline constexpr std::size_t kDefaultMaxFrames = std::size_t{16} << 20;  // 16M frames: 144 MiB
inline constexpr std::size_t kDefaultMaxSamples = std::size_t{4} << 20;  // 4M samples: 160 MiB
inline constexpr std::size_t kSampleIdBytes = 16;                        // the trailer: pid, tid, time

// Where a frame (or a sample's ip) was: from the PERF_CONTEXT_* markers of a callchain, or a
// sample's PERF_RECORD_MISC_CPUMODE bits.
enum class FrameContext : std::uint8_t { unknown, kernel, user, hypervisor, guest_kernel, guest_user };

struct SampleRecord {
  std::uint64_t time_ns = 0;  // CLOCK_MONOTONIC (the sampler sets use_clockid)
  std::uint64_t ip = 0;
  std::uint32_t pid = 0;
  std::uint32_t tid = 0;
  std::uint32_t first_frame = 0;  // into SampleStore::frames()
  std::uint32_t frame_count = 0;  // innermost first; the markers left out
  FrameContext ip_context = FrameContext::unknown;
};

// An executable mapping: PERF_RECORD_MMAP2 (or MMAP) of a process being sampled, or a line of
// /proc/PID/maps (time_ns 0).
struct MappingRecord {
  std::uint32_t pid = 0;
  std::uint32_t tid = 0;
  std::uint64_t time_ns = 0;
  std::uint64_t address = 0;
  std::uint64_t length = 0;
  std::uint64_t file_offset = 0;  // pgoff: the file offset mapped at `address`
  std::uint32_t major = 0;        // the file's device and inode (0 where the kernel sent a build id)
  std::uint32_t minor = 0;
  std::uint64_t inode = 0;
  std::uint32_t prot = 0;  // PROT_READ | PROT_WRITE | PROT_EXEC
  std::uint32_t flags = 0;
  std::string build_id;  // hex, where the kernel sent one (PERF_RECORD_MISC_MMAP_BUILD_ID)
  std::string filename;  // a path, "[vdso]", "//anon"
};

// A thread's name: PERF_RECORD_COMM, `exec` when it changed because the process exec'd.
struct CommRecord {
  std::uint32_t pid = 0;
  std::uint32_t tid = 0;
  std::uint64_t time_ns = 0;
  bool exec = false;
  std::string comm;
};

// A thread or process started (fork) or ended (exit): PERF_RECORD_FORK / EXIT.
struct TaskRecord {
  bool exit = false;
  std::uint32_t pid = 0;
  std::uint32_t ppid = 0;
  std::uint32_t tid = 0;
  std::uint32_t ptid = 0;
  std::uint64_t time_ns = 0;
};

// What the kernel reported besides samples, and what the parser could not use.
struct RecordCounts {
  std::uint64_t lost = 0;          // samples the kernel could not write (PERF_RECORD_LOST, LOST_SAMPLES)
  std::uint64_t lost_records = 0;  // how many LOST records said so
  std::uint64_t throttled = 0;     // PERF_RECORD_THROTTLE: the kernel stopped sampling an event for a tick
  std::uint64_t unthrottled = 0;
  std::uint64_t malformed = 0;  // records shorter than their type's layout, or a ring that made no sense
  std::uint64_t ignored = 0;    // records of types the sampler does not keep
};

class SampleStore {
 public:
  explicit SampleStore(std::size_t max_samples = kDefaultMaxSamples, std::size_t max_frames = kDefaultMaxFrames);

  // Keeps a sample and its raw callchain (PERF_CONTEXT_* markers included: they set the context
  // of the frames after them, and are left out). false, and counted as dropped, when a cap is
  // reached or memory runs out.
  bool add_sample(const SampleRecord& sample, std::span<const std::uint64_t> callchain) noexcept;

  const std::vector<SampleRecord>& samples() const noexcept { return samples_; }
  std::span<const std::uint64_t> frames(const SampleRecord& sample) const noexcept;
  std::span<const FrameContext> frame_contexts(const SampleRecord& sample) const noexcept;
  std::size_t frame_total() const noexcept { return frames_.size(); }
  std::uint64_t dropped() const noexcept { return dropped_; }

  std::vector<MappingRecord> mappings;
  std::vector<CommRecord> comms;
  std::vector<TaskRecord> tasks;
  RecordCounts counts;

  // Samples, mappings, names and tasks in time order (stable): the rings are per CPU, so a
  // thread's samples arrive from several of them.
  void sort_by_time();

 private:
  std::size_t max_samples_;
  std::size_t max_frames_;
  std::vector<SampleRecord> samples_;
  std::vector<std::uint64_t> frames_;
  std::vector<FrameContext> contexts_;
  std::uint64_t dropped_ = 0;
};

// One record (header included), as 8-byte words: the kernel keeps every record 8-byte
// aligned and sized. Malformed or unknown ones are counted, never trusted.
void parse_record(std::span<const std::uint64_t> record, SampleStore& out) noexcept;

// Where a record that wraps around the end of the ring is put together (the largest record
// is 64 KiB: perf_event_header.size is 16 bits).
using RingScratch = std::array<std::uint64_t, 65536 / 8>;

// Parses every record between `tail` and `head` (free-running byte counters, as the mmap page
// has them) of a ring of `size` bytes (a power of two) into `out`; returns the new tail. A
// record whose header makes no sense stops the drain at `head` and is counted as malformed.
std::uint64_t drain_ring(const std::uint64_t* data, std::uint64_t size, std::uint64_t tail, std::uint64_t head, RingScratch& scratch,
                         SampleStore& out) noexcept;

}  // namespace hwprof::sampling
