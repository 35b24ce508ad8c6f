#include "sampling/sample_records.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <string>

#include <linux/perf_event.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/input_file.hpp"
#include "common/stages.hpp"

namespace hwprof::sampling {
namespace {

// The largest /proc/PID/maps read: a process with a million mappings is far below it.

struct Header {
  std::uint32_t type = 0;
  std::uint16_t misc = 0;
  std::uint16_t size = 0;
};

// struct perf_event_header {u32 type; u16 misc; u16 size} read from its 8-byte word.
Header header_of(std::uint64_t word) noexcept {
  Header h;
  std::memcpy(&h.type, &word, sizeof h.type);
  std::memcpy(&h.misc, reinterpret_cast<const char*>(&word) + 4, sizeof h.misc);
  std::memcpy(&h.size, reinterpret_cast<const char*>(&word) + 6, sizeof h.size);
  return h;
}

// The two u32 fields packed in one word ({u32 pid, tid}, {u32 prot, flags}), in memory order.
std::uint32_t first_u32(std::uint64_t word) noexcept {
  std::uint32_t v = 0;
  std::memcpy(&v, &word, sizeof v);
  return v;
}
std::uint32_t second_u32(std::uint64_t word) noexcept {
  std::uint32_t v = 0;
  std::memcpy(&v, reinterpret_cast<const char*>(&word) + 4, sizeof v);
  return v;
}

FrameContext context_of_misc(std::uint16_t misc) noexcept {
  switch (misc & PERF_RECORD_MISC_CPUMODE_MASK) {
    case PERF_RECORD_MISC_KERNEL:
      return FrameContext::kernel;
    case PERF_RECORD_MISC_USER:
      return FrameContext::user;
    case PERF_RECORD_MISC_HYPERVISOR:
      return FrameContext::hypervisor;
    case PERF_RECORD_MISC_GUEST_KERNEL:
      return FrameContext::guest_kernel;
    case PERF_RECORD_MISC_GUEST_USER:
      return FrameContext::guest_user;
    default:
      return FrameContext::unknown;
  }
}

FrameContext context_of_marker(std::uint64_t marker) noexcept {
  switch (marker) {
    case static_cast<std::uint64_t>(PERF_CONTEXT_KERNEL):
      return FrameContext::kernel;
    case static_cast<std::uint64_t>(PERF_CONTEXT_USER):
      return FrameContext::user;
    case static_cast<std::uint64_t>(PERF_CONTEXT_HV):
      return FrameContext::hypervisor;
    case static_cast<std::uint64_t>(PERF_CONTEXT_GUEST_KERNEL):
      return FrameContext::guest_kernel;
    case static_cast<std::uint64_t>(PERF_CONTEXT_GUEST_USER):
      return FrameContext::guest_user;
    default:
      return FrameContext::unknown;
  }
}

bool is_marker(std::uint64_t entry) noexcept {
  return entry >= static_cast<std::uint64_t>(PERF_CONTEXT_MAX);
}

// The NUL-terminated text that starts at word `first` and ends before the sample_id trailer.
std::string text_at(std::span<const std::uint64_t> record, std::size_t first) {
  const char* start = reinterpret_cast<const char*>(record.data() + first);
  const std::size_t room = (record.size() - first) * 8 - kSampleIdBytes;
  return std::string(start, ::strnlen(start, room));
}

std::string hex(const unsigned char* bytes, std::size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    out += kDigits[bytes[i] >> 4];
    out += kDigits[bytes[i] & 15];
  }
  return out;
}

// The sample_id trailer's time: the last word of every non-sample record.
std::uint64_t trailer_time(std::span<const std::uint64_t> record) noexcept {
  return record.back();
}

// The fields PERF_RECORD_MMAP and MMAP2 begin with: {hdr; u32 pid, tid; u64 addr, len, pgoff}.
MappingRecord mapping_fields(std::span<const std::uint64_t> r) {
  MappingRecord m;
  m.pid = first_u32(r[1]);
  m.tid = second_u32(r[1]);
  m.address = r[2];
  m.length = r[3];
  m.file_offset = r[4];
  return m;
}

// PERF_RECORD_MMAP2: {hdr; u32 pid, tid; u64 addr, len, pgoff; union {u32 maj, min; u64 ino,
// ino_generation} or {u8 build_id_size, 3 reserved, build_id[20]}; u32 prot, flags;
// char filename[]; sample_id}.
void parse_mmap2(std::span<const std::uint64_t> r, std::uint16_t misc, SampleStore& out) {
  constexpr std::size_t kFilename = 9;
  if (r.size() < kFilename + kSampleIdBytes / 8) {
    ++out.counts.malformed;
    return;
  }
  MappingRecord m = mapping_fields(r);
  if ((misc & PERF_RECORD_MISC_MMAP_BUILD_ID) != 0) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(r.data() + 5);
    m.build_id = hex(bytes + 4, std::min<std::size_t>(bytes[0], 20));
  } else {
    m.major = first_u32(r[5]);
    m.minor = second_u32(r[5]);
    m.inode = r[6];
  }
  m.prot = first_u32(r[8]);
  m.flags = second_u32(r[8]);
  m.filename = text_at(r, kFilename);
  m.time_ns = trailer_time(r);
  out.mappings.push_back(std::move(m));
}

// PERF_RECORD_MMAP (kernels before mmap2, or a caller that asked for it): {hdr; u32 pid, tid;
// u64 addr, len, pgoff; char filename[]; sample_id}. Only executable mappings are sent.
void parse_mmap(std::span<const std::uint64_t> r, SampleStore& out) {
  constexpr std::size_t kFilename = 5;
  if (r.size() < kFilename + kSampleIdBytes / 8) {
    ++out.counts.malformed;
    return;
  }
  MappingRecord m = mapping_fields(r);
  m.prot = PROT_READ | PROT_EXEC;
  m.filename = text_at(r, kFilename);
  m.time_ns = trailer_time(r);
  out.mappings.push_back(std::move(m));
}

// PERF_RECORD_COMM: {hdr; u32 pid, tid; char comm[]; sample_id}.
void parse_comm(std::span<const std::uint64_t> r, std::uint16_t misc, SampleStore& out) {
  if (r.size() < 2 + kSampleIdBytes / 8) {
    ++out.counts.malformed;
    return;
  }
  CommRecord c;
  c.pid = first_u32(r[1]);
  c.tid = second_u32(r[1]);
  c.exec = (misc & PERF_RECORD_MISC_COMM_EXEC) != 0;
  c.comm = text_at(r, 2);
  c.time_ns = trailer_time(r);
  out.comms.push_back(std::move(c));
}

// PERF_RECORD_FORK / EXIT: {hdr; u32 pid, ppid; u32 tid, ptid; u64 time; sample_id}.
void parse_task(std::span<const std::uint64_t> r, bool exit, SampleStore& out) {
  if (r.size() < 4) {
    ++out.counts.malformed;
    return;
  }
  TaskRecord t;
  t.exit = exit;
  t.pid = first_u32(r[1]);
  t.ppid = second_u32(r[1]);
  t.tid = first_u32(r[2]);
  t.ptid = second_u32(r[2]);
  t.time_ns = r[3];
  out.tasks.push_back(t);
}

// PERF_RECORD_SAMPLE for IP | TID | TIME | CALLCHAIN: {hdr; u64 ip; u32 pid, tid; u64 time;
// u64 nr; u64 ips[nr]}.
void parse_sample(std::span<const std::uint64_t> r, std::uint16_t misc, SampleStore& out) noexcept {
  constexpr std::size_t kChain = 5;
  if (r.size() < kChain || r[4] > r.size() - kChain) {
    ++out.counts.malformed;
    return;
  }
  SampleRecord s;
  s.ip = r[1];
  s.pid = first_u32(r[2]);
  s.tid = second_u32(r[2]);
  s.time_ns = r[3];
  s.ip_context = context_of_misc(misc);
  out.add_sample(s, r.subspan(kChain, r[4]));
}

}  // namespace

SampleStore::SampleStore(std::size_t max_samples, std::size_t max_frames)
    : max_samples_(max_samples), max_frames_(std::min<std::size_t>(max_frames, UINT32_MAX)) {}

bool SampleStore::add_sample(const SampleRecord& sample, std::span<const std::uint64_t> callchain) noexcept {
  const auto markers = static_cast<std::size_t>(std::count_if(callchain.begin(), callchain.end(), is_marker));
  const std::size_t count = callchain.size() - markers;
  const std::size_t before = frames_.size();
  if (samples_.size() >= max_samples_ || count > max_frames_ - before) {
    ++dropped_;
    return false;
  }
  try {
    FrameContext context = sample.ip_context;  // the kernel puts a marker first; this is for a chain without one
    for (const std::uint64_t entry : callchain) {
      if (is_marker(entry)) {
        context = context_of_marker(entry);
        continue;
      }
      frames_.push_back(entry);
      contexts_.push_back(context);
    }
    SampleRecord kept = sample;
    kept.first_frame = static_cast<std::uint32_t>(before);
    kept.frame_count = static_cast<std::uint32_t>(count);
    samples_.push_back(kept);
  } catch (...) {
    // Out of memory: this sample is dropped like one past the cap, its frames taken back.
    frames_.resize(before);
    contexts_.resize(std::min(contexts_.size(), before));
    ++dropped_;
    return false;
  }
  return true;
}

std::span<const std::uint64_t> SampleStore::frames(const SampleRecord& sample) const noexcept {
  return std::span<const std::uint64_t>(frames_).subspan(sample.first_frame, sample.frame_count);
}

std::span<const FrameContext> SampleStore::frame_contexts(const SampleRecord& sample) const noexcept {
  return std::span<const FrameContext>(contexts_).subspan(sample.first_frame, sample.frame_count);
}

void SampleStore::sort_by_time() {
  auto by_time = [](const auto& a, const auto& b) { return a.time_ns < b.time_ns; };
  std::stable_sort(samples_.begin(), samples_.end(), by_time);
  std::stable_sort(mappings.begin(), mappings.end(), by_time);
  std::stable_sort(comms.begin(), comms.end(), by_time);
  std::stable_sort(tasks.begin(), tasks.end(), by_time);
}

void parse_record(std::span<const std::uint64_t> record, SampleStore& out) noexcept {
  if (record.empty()) {
    ++out.counts.malformed;
    return;
  }
  const Header h = header_of(record[0]);
  try {
    switch (h.type) {
      case PERF_RECORD_SAMPLE:
        parse_sample(record, h.misc, out);
        return;
      case PERF_RECORD_LOST:  // {hdr; u64 id, lost; sample_id}
        if (record.size() < 3) break;
        out.counts.lost += record[2];
        ++out.counts.lost_records;
        return;
      case PERF_RECORD_LOST_SAMPLES:  // {hdr; u64 lost; sample_id}
        if (record.size() < 2) break;
        out.counts.lost += record[1];
        ++out.counts.lost_records;
        return;
      case PERF_RECORD_THROTTLE:  // {hdr; u64 time, id, stream_id; sample_id}
        ++out.counts.throttled;
        return;
      case PERF_RECORD_UNTHROTTLE:
        ++out.counts.unthrottled;
        return;
      case PERF_RECORD_MMAP2:
        parse_mmap2(record, h.misc, out);
        return;
      case PERF_RECORD_MMAP:
        parse_mmap(record, out);
        return;
      case PERF_RECORD_COMM:
        parse_comm(record, h.misc, out);
        return;
      case PERF_RECORD_FORK:
      case PERF_RECORD_EXIT:
        parse_task(record, h.type == PERF_RECORD_EXIT, out);
        return;
      default:
        ++out.counts.ignored;
        return;
    }
  } catch (...) {
    // Out of memory for a mapping's or a name's text: that record is lost, and counted.
  }
  ++out.counts.malformed;
}

std::uint64_t drain_ring(const std::uint64_t* data, std::uint64_t size, std::uint64_t tail, std::uint64_t head, RingScratch& scratch,
                         SampleStore& out) noexcept {
  while (head - tail >= sizeof(std::uint64_t) && head != tail) {
    const std::uint64_t offset = tail & (size - 1);
    const Header h = header_of(data[offset / 8]);
    // The kernel writes whole 8-byte-aligned records; anything else means a ring we do not
    // understand: skip to the head rather than parse garbage.
    if (h.size < sizeof(std::uint64_t) || h.size % 8 != 0 || h.size > head - tail || offset % 8 != 0) {
      ++out.counts.malformed;
      return head;
    }
    if (offset + h.size <= size) {
      parse_record(std::span<const std::uint64_t>(data + offset / 8, h.size / 8), out);
    } else {
      const std::uint64_t first = size - offset;
      std::memcpy(scratch.data(), data + offset / 8, first);
      std::memcpy(reinterpret_cast<char*>(scratch.data()) + first, data, h.size - first);
      parse_record(std::span<const std::uint64_t>(scratch.data(), h.size / 8), out);
    }
    tail += h.size;
  }
  if (head != tail) ++out.counts.malformed;  // fewer than 8 bytes left: not a record
  return head;
}

}  // namespace hwprof::sampling
