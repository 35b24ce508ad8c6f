// The kernel's sampling records, parsed from ring buffers built by hand in the layout the
// sampler asks for (IP | TID | TIME | CALLCHAIN, sample_id_all): samples with their callchain
// markers, LOST, THROTTLE, MMAP2, COMM, FORK and EXIT; a record wrapping around the end of the
// ring; the caps on samples and frames (docs/sampling.md, "Records").
#include <cstring>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <sys/mman.h>

#include "common/stages.hpp"
#include "perf_records.hpp"
#include "sampling/sample_records.hpp"

namespace hwprof::sampling {
namespace {

using test::chain;
using test::header;
using test::kKernelMarker;
using test::kUserMarker;
using test::pack;
using test::record;
using test::text_words;
using ::testing::ElementsAre;

std::vector<std::uint64_t> frames_of(const SampleStore& store, const SampleRecord& s) {
  const auto f = store.frames(s);
  return {f.begin(), f.end()};
}

std::vector<FrameContext> contexts_of(const SampleStore& store, const SampleRecord& s) {
  const auto c = store.frame_contexts(s);
  return {c.begin(), c.end()};
}

// A ring of `words` 8-byte words, written from a starting offset like the kernel writes it:
// each record right after the last, wrapping around the end.
class Ring {
 public:
  Ring(std::size_t words, std::uint64_t start) : data_(words, 0xdeadbeefdeadbeefULL), tail_(start * 8), head_(start * 8) {}
  void put(const std::vector<std::uint64_t>& rec) {
    for (std::uint64_t w : rec) {
      data_[(head_ / 8) % data_.size()] = w;
      head_ += 8;
    }
  }
  std::uint64_t drain(SampleStore& out) { return drain_ring(data_.data(), data_.size() * 8, tail_, head_, scratch_, out); }
  std::uint64_t head() const { return head_; }
  std::uint64_t size_bytes() const { return data_.size() * 8; }

 private:
  std::vector<std::uint64_t> data_;
  std::uint64_t tail_;
  std::uint64_t head_;
  RingScratch scratch_;
};

TEST(SampleRecords, EveryKindOfRecordIsParsedAndOneWrapsAroundTheEnd) {
  // 128 words; the first record starts 6 words before the end, so the sample (12 words)
  // wraps, and the ring's free-running counters are past one full lap.
  Ring ring(128, 128 + 122);
  ring.put(test::sample_record(7, 8, 1000, 0x401000,
                               {kKernelMarker, 0xffffffff81000010, 0xffffffff81000020, kUserMarker, 0x401000, 0x402000, 0x403000},
                               PERF_RECORD_MISC_KERNEL));
  ring.put(test::lost_record(5, 1100));
  ring.put(test::throttle_record(true, 1200));
  ring.put(test::throttle_record(false, 1300));
  ring.put(test::mmap2_record(7, 0x7f0000000000, 0x21000, 0x2000, "/usr/lib/libfoo.so", 900));
  ring.put(test::comm_record(7, 9, "worker", false, 950));
  ring.put(test::task_record(false, 7, 9, 8, 940));
  ring.put(test::task_record(true, 7, 9, 9, 1400));
  ring.put(test::sample_record(7, 9, 1500, 0x404000, {kUserMarker, 0x404000}));
  ASSERT_LE(ring.head() - (128 + 122) * 8, ring.size_bytes());  // no record overwrote another

  SampleStore store;
  EXPECT_EQ(ring.drain(store), ring.head());

  ASSERT_EQ(store.samples().size(), 2u);
  const SampleRecord& first = store.samples()[0];
  EXPECT_EQ(first.pid, 7u);
  EXPECT_EQ(first.tid, 8u);
  EXPECT_EQ(first.time_ns, 1000u);
  EXPECT_EQ(first.ip, 0x401000u);
  EXPECT_EQ(first.ip_context, FrameContext::kernel);
  // The markers are left out; each frame keeps the context the marker before it gave.
  EXPECT_THAT(frames_of(store, first), ElementsAre(0xffffffff81000010, 0xffffffff81000020, 0x401000, 0x402000, 0x403000));
  EXPECT_THAT(contexts_of(store, first),
              ElementsAre(FrameContext::kernel, FrameContext::kernel, FrameContext::user, FrameContext::user, FrameContext::user));
  const SampleRecord& second = store.samples()[1];
  EXPECT_EQ(second.tid, 9u);
  EXPECT_THAT(frames_of(store, second), ElementsAre(0x404000));
  EXPECT_EQ(store.frame_total(), 6u);

  EXPECT_EQ(store.counts.lost, 5u);
  EXPECT_EQ(store.counts.lost_records, 1u);
  EXPECT_EQ(store.counts.throttled, 1u);
  EXPECT_EQ(store.counts.unthrottled, 1u);
  EXPECT_EQ(store.counts.malformed, 0u);

  ASSERT_EQ(store.mappings.size(), 1u);
  const MappingRecord& m = store.mappings[0];
  EXPECT_EQ(m.pid, 7u);
  EXPECT_EQ(m.address, 0x7f0000000000u);
  EXPECT_EQ(m.length, 0x21000u);
  EXPECT_EQ(m.file_offset, 0x2000u);
  EXPECT_EQ(m.major, 8u);
  EXPECT_EQ(m.minor, 1u);
  EXPECT_EQ(m.inode, 4242u);
  EXPECT_EQ(m.prot, static_cast<std::uint32_t>(PROT_READ | PROT_EXEC));
  EXPECT_EQ(m.filename, "/usr/lib/libfoo.so");
  EXPECT_EQ(m.time_ns, 900u);

  ASSERT_EQ(store.comms.size(), 1u);
  EXPECT_EQ(store.comms[0].comm, "worker");
  EXPECT_EQ(store.comms[0].tid, 9u);
  EXPECT_FALSE(store.comms[0].exec);
  EXPECT_EQ(store.comms[0].time_ns, 950u);

  ASSERT_EQ(store.tasks.size(), 2u);
  EXPECT_FALSE(store.tasks[0].exit);
  EXPECT_EQ(store.tasks[0].tid, 9u);
  EXPECT_EQ(store.tasks[0].ptid, 8u);
  EXPECT_TRUE(store.tasks[1].exit);
  EXPECT_EQ(store.tasks[1].time_ns, 1400u);
}

TEST(SampleRecords, EachPossibleWrapPointGivesTheSameRecords) {
  // The same three records from every starting word of a small ring: the header, a field or
  // the callchain may be the part that wraps.
  const auto a = test::sample_record(1, 2, 10, 0x10, {kUserMarker, 0x10, 0x20, 0x30});
  const auto b = test::comm_record(1, 2, "a-thread-name", true, 11);
  const auto c = test::sample_record(1, 3, 12, 0x40, {kKernelMarker, 0xffffffff81000000, kUserMarker, 0x40});
  for (std::uint64_t start = 0; start < 32; ++start) {
    Ring ring(32, start);
    ring.put(a);
    ring.put(b);
    ring.put(c);
    SampleStore store;
    ring.drain(store);
    ASSERT_EQ(store.samples().size(), 2u) << "start " << start;
    EXPECT_THAT(frames_of(store, store.samples()[0]), ElementsAre(0x10, 0x20, 0x30)) << "start " << start;
    EXPECT_THAT(frames_of(store, store.samples()[1]), ElementsAre(0xffffffff81000000, 0x40)) << "start " << start;
    EXPECT_THAT(contexts_of(store, store.samples()[1]), ElementsAre(FrameContext::kernel, FrameContext::user));
    ASSERT_EQ(store.comms.size(), 1u);
    EXPECT_EQ(store.comms[0].comm, "a-thread-name");
    EXPECT_TRUE(store.comms[0].exec);
    EXPECT_EQ(store.counts.malformed, 0u);
  }
}

TEST(SampleRecords, AMmap2WithABuildIdGivesItInHex) {
  unsigned char id[24] = {20};  // build_id_size, 3 reserved bytes, then 20 bytes of build id
  for (int i = 0; i < 20; ++i) id[4 + i] = static_cast<unsigned char>(0xa0 + i);
  std::vector<std::uint64_t> id_words(3);
  std::memcpy(id_words.data(), id, sizeof id);
  const std::vector<std::uint64_t> body = test::join(
      {{pack(3, 3), 0x1000, 0x2000, 0}, id_words, {pack(PROT_READ | PROT_EXEC, MAP_PRIVATE)}, text_words("[vdso]"), test::trailer(3, 3, 5)});
  SampleStore store;
  parse_record(record(PERF_RECORD_MMAP2, PERF_RECORD_MISC_MMAP_BUILD_ID, body), store);
  ASSERT_EQ(store.mappings.size(), 1u);
  EXPECT_EQ(store.mappings[0].build_id, "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3");
  EXPECT_EQ(store.mappings[0].filename, "[vdso]");
  EXPECT_EQ(store.mappings[0].inode, 0u);
}

TEST(SampleRecords, ARecordWithANonsenseSizeStopsTheDrainAndIsCounted) {
  Ring ring(32, 0);
  ring.put(test::sample_record(1, 1, 1, 1, {kUserMarker, 1}));
  ring.put({header(PERF_RECORD_SAMPLE, 0, 0)});  // size 0: would loop for ever if trusted
  ring.put(test::sample_record(1, 1, 2, 2, {kUserMarker, 2}));
  SampleStore store;
  EXPECT_EQ(ring.drain(store), ring.head());
  EXPECT_EQ(store.samples().size(), 1u);
  EXPECT_EQ(store.counts.malformed, 1u);
}

TEST(SampleRecords, ACallchainLongerThanItsRecordIsMalformed) {
  auto bad = test::sample_record(1, 1, 1, 1, {kUserMarker, 1});
  bad[4] = 1000;  // nr
  SampleStore store;
  parse_record(bad, store);
  EXPECT_EQ(store.samples().size(), 0u);
  EXPECT_EQ(store.counts.malformed, 1u);
  parse_record(record(PERF_RECORD_MMAP2, 0, {1, 2}), store);
  EXPECT_EQ(store.counts.malformed, 2u);
  parse_record(record(PERF_RECORD_SWITCH, 0, {}), store);
  EXPECT_EQ(store.counts.ignored, 1u);
}

TEST(SampleRecords, TheFrameCapDropsSamplesAndCountsThem) {
  SampleStore store(100, 5);  // 100 samples, 5 frames
  const std::vector<std::uint64_t> three = {kUserMarker, 1, 2, 3};
  EXPECT_TRUE(store.add_sample(SampleRecord{}, three));
  EXPECT_FALSE(store.add_sample(SampleRecord{}, three));  // 6 frames > 5
  EXPECT_TRUE(store.add_sample(SampleRecord{}, chain({kUserMarker, 4, 5})));
  EXPECT_FALSE(store.add_sample(SampleRecord{}, chain({kUserMarker, 6})));
  EXPECT_EQ(store.samples().size(), 2u);
  EXPECT_EQ(store.frame_total(), 5u);
  EXPECT_EQ(store.dropped(), 2u);
  EXPECT_THAT(frames_of(store, store.samples()[1]), ElementsAre(4, 5));
}

TEST(SampleRecords, TheSampleCapDropsSamplesAndCountsThem) {
  SampleStore store(2, 1000);
  for (int i = 0; i < 5; ++i) store.add_sample(SampleRecord{}, {});
  EXPECT_EQ(store.samples().size(), 2u);
  EXPECT_EQ(store.dropped(), 3u);
}

TEST(SampleRecords, SortingByTimeKeepsEachSampleWithItsFrames) {
  SampleStore store;
  SampleRecord late;
  late.time_ns = 20;
  SampleRecord early;
  early.time_ns = 10;
  store.add_sample(late, chain({kUserMarker, 0x20}));
  store.add_sample(early, chain({kUserMarker, 0x10}));
  store.sort_by_time();
  EXPECT_EQ(store.samples()[0].time_ns, 10u);
  EXPECT_THAT(frames_of(store, store.samples()[0]), ElementsAre(0x10));
  EXPECT_THAT(frames_of(store, store.samples()[1]), ElementsAre(0x20));
}

}  // namespace
}  // namespace hwprof::sampling
