// Perf map files (/tmp/perf-PID.map) as a JIT writes them and as they arrive damaged: good
// lines become entries, garbage is skipped and counted with its line numbers, overlapping and
// empty entries have one answer, and files that are too large, FIFOs, devices or missing are
// refused by name without reading or waiting.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scratch_dir.hpp"
#include "symbols/perf_map.hpp"

namespace hwprof {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

symbols::PerfMap parsed(const std::string& text, const symbols::PerfMapLimits& limits = {}) {
  auto map = symbols::parse_perf_map(text, "/tmp/perf-42.map", limits);
  EXPECT_TRUE(map) << map.error().message;
  return map ? std::move(*map) : symbols::PerfMap{};
}

std::string name_at(const symbols::PerfMap& map, std::uint64_t address) {
  const symbols::PerfMapEntry* entry = symbols::find_entry(map, address);
  return entry ? entry->name : "(none)";
}

TEST(PerfMap, ReadsEntriesWithAndWithout0x) {
  const auto map = parsed(
      "7f0000001000 40 jit_avx512_core_brgemm_kernel_t\n"
      "0x7f0000002000 0x20 brgemm 64x64 (f32)\r\n"
      "7F0000003000   8\tjit:uni_eltwise\n");
  ASSERT_EQ(map.entries.size(), 3u);
  EXPECT_EQ(map.entries[1].name, "brgemm 64x64 (f32)");
  EXPECT_EQ(map.entries[2].line, 3u);
  EXPECT_EQ(map.skipped_lines, 0u);
  EXPECT_TRUE(map.warnings().empty());
  EXPECT_EQ(name_at(map, 0x7f0000001000), "jit_avx512_core_brgemm_kernel_t");
  EXPECT_EQ(name_at(map, 0x7f000000103f), "jit_avx512_core_brgemm_kernel_t");
  EXPECT_EQ(name_at(map, 0x7f0000001040), "(none)");
  EXPECT_EQ(name_at(map, 0x7f000000201f), "brgemm 64x64 (f32)");
  EXPECT_EQ(name_at(map, 0x7f0000003007), "jit:uni_eltwise");
}

TEST(PerfMap, GarbageLinesAreSkippedAndCountedWithTheirNumbers) {
  const auto map = parsed(
      "1000 10 good\n"                // 1
      "hello\n"                       // 2: one word
      "zz00 10 name\n"                // 3: not hex
      "2000 10\n"                     // 4: no name
      "2000 1g name\n"                // 5: size not hex
      "\n"                            // 6: blank, not garbage
      "3000 10 bin\x01ary\n"          // 7: a control character
      "ffffffffffffff00 200 wraps\n"  // 8: past the end of the address space
      "0x 10 empty\n"                 // 9: 0x and no digits
      "4000 10 also good\n");         // 10
  EXPECT_EQ(map.entries.size(), 2u);
  EXPECT_EQ(map.skipped_lines, 7u);
  EXPECT_THAT(map.first_skipped, ElementsAre(2u, 3u, 4u, 5u, 7u));
  ASSERT_EQ(map.warnings().size(), 1u);
  EXPECT_EQ(map.warnings()[0], "/tmp/perf-42.map: 7 lines skipped, not \"START SIZE name\" with START and SIZE in hex (line 2, 3, 4, 5, 7, ...)");
  EXPECT_EQ(name_at(map, 0x4008), "also good");
}

TEST(PerfMap, ZeroSizeEntriesAreIgnoredAndOverlapsHaveOneAnswer) {
  const auto map = parsed(
      "1000 100 first\n"
      "1080 100 second\n"  // overlaps the end of first: wins where they share
      "5000 0 empty\n"
      "2000 1000 outer\n"
      "2100 100 inner\n"  // inside outer: wins inside it, outer around it
      "9100 100 small\n"
      "9000 1000 big\n");  // over small, later: covers it all
  EXPECT_EQ(map.zero_size_entries, 1u);
  EXPECT_EQ(map.overlapping_entries, 6u);
  EXPECT_EQ(name_at(map, 0x1010), "first");
  EXPECT_EQ(name_at(map, 0x1090), "second");
  EXPECT_EQ(name_at(map, 0x1150), "second");
  EXPECT_EQ(name_at(map, 0x5000), "(none)");
  EXPECT_EQ(name_at(map, 0x2050), "outer");
  EXPECT_EQ(name_at(map, 0x2150), "inner");
  EXPECT_EQ(name_at(map, 0x2250), "outer");
  EXPECT_EQ(name_at(map, 0x9150), "big");
  const auto warnings = map.warnings();
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_EQ(warnings[0], "/tmp/perf-42.map: 1 entry of size 0 ignored (an entry of size 0 names no address)");
  EXPECT_THAT(warnings[1], HasSubstr("6 entries share addresses with another; where they overlap, the later line names the address"));
}

TEST(PerfMap, TooManyEntriesIsRefusedNamingTheFileAndTheLimit) {
  symbols::PerfMapLimits limits;
  limits.max_entries = 3;
  auto map = symbols::parse_perf_map("1000 10 a\n2000 10 b\n3000 10 c\n4000 10 d\n", "/tmp/perf-42.map", limits);
  ASSERT_FALSE(map);
  EXPECT_EQ(map.error().message, "/tmp/perf-42.map: more than 3 entries (line 4); a perf map file may have at most 3 entries");
}

TEST(PerfMap, AVeryLongLineIsSkippedAndTheRestIsRead) {
  const std::string text = "1000 10 " + std::string(200000, 'x') + "\n2000 10 after\n";
  const auto map = parsed(text);
  EXPECT_EQ(map.skipped_lines, 1u);
  EXPECT_EQ(name_at(map, 0x2000), "after");
}

TEST(PerfMap, BinaryDataIsSkippedWithoutHarm) {
  std::string noise;
  std::uint64_t state = 0x9e3779b97f4a7c15u;
  for (int i = 0; i < 1 << 16; ++i) {
    state = state * 6364136223846793005u + 1442695040888963407u;
    noise.push_back(static_cast<char>(state >> 56));
  }
  const auto map = parsed(noise);
  EXPECT_GT(map.skipped_lines, 0u);
  EXPECT_TRUE(map.entries.empty());
}

using PerfMapFileTest = test::ScratchDirTest;

TEST_F(PerfMapFileTest, AFileIsReadAndAFileOverTheLimitIsRefusedNamingIt) {
  const std::string path = put("perf-1.map", "1000 10 kernel_a\n2000 20 kernel_b\n");
  auto map = symbols::read_perf_map(path);
  ASSERT_TRUE(map) << map.error().message;
  EXPECT_EQ(map->entries.size(), 2u);
  EXPECT_EQ(map->path, path);
  symbols::PerfMapLimits limits;
  limits.max_bytes = 20;
  auto big = symbols::read_perf_map(path, limits);
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().message, path + ": 34 bytes; a perf map file may have at most 20 bytes");
}

// Just past the default limit, as a sparse file: refused from its size alone, so neither the
// 256 MiB nor the time to read them is spent.
TEST_F(PerfMapFileTest, AFileJustPastTheDefaultLimitIsRefusedBeforeItIsRead) {
  const std::string path = put("perf-3.map", "1000 10 kernel_a\n");
  const std::size_t limit = symbols::PerfMapLimits{}.max_bytes;
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(limit + 1)), 0);
  auto big = symbols::read_perf_map(path);
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().message,
            path + ": " + std::to_string(limit + 1) + " bytes; a perf map file may have at most " + std::to_string(limit) + " bytes");
}

TEST_F(PerfMapFileTest, AFifoIsRefusedWithoutWaitingEvenWithAWriter) {
  const std::string path = this->path("perf-2.map");
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  // A writer that never writes: a reader that read a FIFO would wait for it.
  const int writer = ::open(path.c_str(), O_RDWR | O_NONBLOCK);
  ASSERT_GE(writer, 0);
  auto map = symbols::read_perf_map(path);
  ::close(writer);
  ASSERT_FALSE(map);
  EXPECT_EQ(map.error().message, path + ": is a FIFO or pipe, not a perf map file; give a regular file");
}

TEST_F(PerfMapFileTest, DevicesDirectoriesAndMissingFilesAreNamed) {
  auto zero = symbols::read_perf_map("/dev/zero");
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().message, "/dev/zero: is a character device, not a perf map file; give a regular file");
  auto directory = symbols::read_perf_map(dir_.string());
  ASSERT_FALSE(directory);
  EXPECT_THAT(directory.error().message, HasSubstr("is a directory"));
  auto missing = symbols::read_perf_map(path("perf-404.map"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, path("perf-404.map") + ": cannot open the perf map file (No such file or directory)");
  EXPECT_EQ(symbols::perf_map_path(1234), "/tmp/perf-1234.map");
}

}  // namespace
}  // namespace hwprof
