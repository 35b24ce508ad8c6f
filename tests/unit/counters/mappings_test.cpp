// The symbolizer's model of an address space: /proc/PID/maps parsed from recorded text (every
// kind of line a real process has), overlapping ranges made into pieces, a file offset turned
// into the module's own address on made-up program headers, and a module's table of function
// symbols made from made-up ones (aliases, symbols without a size).
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "symbols/address_ranges.hpp"
#include "symbols/elf_module.hpp"
#include "symbols/mappings.hpp"

namespace hwprof {
namespace {

using ::testing::HasSubstr;

// A process with a PIE, its heap, JIT memory, libc, a library in a folder with spaces, a
// deleted library, a memfd, and the kernel's pages: recorded from Debian 12, paths changed.
constexpr const char* kRecorded =
    "55d0c0a00000-55d0c0a02000 r--p 00000000 fe:00 247498                     /usr/bin/trainer\n"
    "55d0c0a02000-55d0c0a08000 r-xp 00002000 fe:00 247498                     /usr/bin/trainer\n"
    "55d0c0a08000-55d0c0a0b000 r--p 00008000 fe:00 247498                     /usr/bin/trainer\n"
    "55d0c1000000-55d0c1021000 rw-p 00000000 00:00 0                          [heap]\n"
    "7f10a0000000-7f10a0400000 rwxp 00000000 00:00 0 \n"
    "7f10b0000000-7f10b0026000 r--p 00000000 fe:00 332835                     /usr/lib/x86_64-linux-gnu/libc.so.6\n"
    "7f10b0026000-7f10b017c000 r-xp 00026000 fe:00 332835                     /usr/lib/x86_64-linux-gnu/libc.so.6\n"
    "7f10b0200000-7f10b0210000 r-xp 00010000 fe:00 400000                     /home/user/my models/libjit kernels.so\n"
    "7f10b0300000-7f10b0310000 r-xp 00000000 fe:00 400001                     /tmp/libold.so (deleted)\n"
    "7f10b0400000-7f10b0401000 r-xp 00000000 00:01 1234                       /memfd:xbyak (deleted)\n"
    "7ffd1e9ec000-7ffd1e9f0000 r--p 00000000 00:00 0                          [vvar]\n"
    "7ffd1e9f0000-7ffd1e9f2000 r-xp 00000000 00:00 0                          [vdso]\n"
    "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n";

TEST(ProcMaps, KeepsTheExecutableMappingsWithTheirPathsAndOffsets) {
  auto parsed = symbols::parse_proc_maps(kRecorded, "recorded");
  ASSERT_TRUE(parsed) << parsed.error().message;
  const std::vector<symbols::Mapping>& maps = *parsed;
  ASSERT_EQ(maps.size(), 8u);
  EXPECT_EQ(maps[0].start, 0x55d0c0a02000u);
  EXPECT_EQ(maps[0].end, 0x55d0c0a08000u);
  EXPECT_EQ(maps[0].pgoff, 0x2000u);
  EXPECT_EQ(maps[0].path, "/usr/bin/trainer");
  EXPECT_EQ(maps[1].path, "");  // anonymous rwx: JIT code
  EXPECT_EQ(maps[2].path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
  EXPECT_EQ(maps[2].pgoff, 0x26000u);
  EXPECT_EQ(maps[3].path, "/home/user/my models/libjit kernels.so");
  EXPECT_EQ(maps[4].path, "/tmp/libold.so");
  EXPECT_TRUE(maps[4].deleted);
  EXPECT_FALSE(maps[3].deleted);
  EXPECT_EQ(maps[5].path, "/memfd:xbyak");
  EXPECT_EQ(maps[6].path, "[vdso]");
  EXPECT_EQ(maps[7].path, "[vsyscall]");
  EXPECT_EQ(maps[7].end, 0xffffffffff601000u);
}

TEST(ProcMaps, SaysWhichMappingsHoldNoFile) {
  auto parsed = symbols::parse_proc_maps(kRecorded, "recorded");
  ASSERT_TRUE(parsed);
  std::vector<bool> anonymous;
  for (const symbols::Mapping& m : *parsed) anonymous.push_back(symbols::is_anonymous(m));
  EXPECT_EQ(anonymous, (std::vector<bool>{false, true, false, false, false, true, false, false}));
  EXPECT_TRUE(symbols::is_anonymous({0, 1, 0, "[heap]", false}));
  EXPECT_TRUE(symbols::is_anonymous({0, 1, 0, "[anon:v8]", false}));
  EXPECT_EQ(symbols::module_name("/home/user/my models/libjit kernels.so"), "libjit kernels.so");
  EXPECT_EQ(symbols::module_name("[vdso]"), "[vdso]");
  EXPECT_EQ(symbols::module_name("trainer"), "trainer");
}

TEST(ProcMaps, ALineOfAnotherShapeIsNamedWithItsNumber) {
  auto parsed = symbols::parse_proc_maps("55d0c0a00000-55d0c0a02000 r-xp 00000000 fe:00 1 /bin/x\nnot a maps line\n", "/proc/7/maps");
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().message, "/proc/7/maps:2: expected \"START-END PERMS OFFSET DEV INODE [PATH]\" (the format of /proc/PID/maps)");
  for (const char* bad : {"55d0c0a02000-55d0c0a00000 r-xp 00000000 fe:00 1 /bin/x",  // end before start
                          "55d0c0a00000-55d0c0a02000 r-x 00000000 fe:00 1 /bin/x",   // three permissions
                          "55d0c0a00000-55d0c0a02000 r-xp 0000zz00 fe:00 1 /bin/x", "55d0c0a00000-55d0c0a02000 r-xp 00000000 fe00 1 /bin/x",
                          "55d0c0a00000-55d0c0a02000", ""}) {
    auto one = symbols::parse_proc_maps(std::string(bad) + (*bad ? "\n" : "x\n"), "m");
    EXPECT_FALSE(one) << bad;
  }
  auto empty = symbols::parse_proc_maps("", "m");
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->empty());
}

TEST(ProcMaps, ThisProcessHoldsItsOwnCode) {
  auto maps = symbols::read_proc_maps(::getpid());
  ASSERT_TRUE(maps) << maps.error().message;
  const auto here = reinterpret_cast<std::uint64_t>(&symbols::parse_proc_maps);
  int holding = 0;
  for (const symbols::Mapping& m : *maps) holding += here >= m.start && here < m.end ? 1 : 0;
  EXPECT_EQ(holding, 1);
  auto none = symbols::read_proc_maps(-1);
  ASSERT_FALSE(none);
  EXPECT_THAT(none.error().message, HasSubstr("/proc/-1/maps: cannot open"));
}

std::vector<symbols::AddressRange> pieces_of(std::vector<symbols::AddressRange> ranges) {
  return symbols::latest_wins(ranges);
}

TEST(AddressRanges, TheLaterRangeCoversWhereTheyOverlap) {
  // 0: [100, 200), 1: [150, 250), 2: [120, 130) inside 0, 3: empty.
  const auto pieces = pieces_of({{100, 200, 0}, {150, 250, 1}, {120, 130, 2}, {300, 300, 3}});
  ASSERT_EQ(pieces.size(), 4u);
  EXPECT_EQ(pieces[0].start, 100u);
  EXPECT_EQ(pieces[0].end, 120u);
  EXPECT_EQ(pieces[0].index, 0u);
  EXPECT_EQ(pieces[1].index, 2u);
  EXPECT_EQ(pieces[2].start, 130u);
  EXPECT_EQ(pieces[2].end, 150u);
  EXPECT_EQ(pieces[2].index, 0u);
  EXPECT_EQ(pieces[3].start, 150u);
  EXPECT_EQ(pieces[3].end, 250u);
  EXPECT_EQ(pieces[3].index, 1u);
  EXPECT_EQ(symbols::find_range(pieces, 99), nullptr);
  EXPECT_EQ(symbols::find_range(pieces, 125)->index, 2u);
  EXPECT_EQ(symbols::find_range(pieces, 249)->index, 1u);
  EXPECT_EQ(symbols::find_range(pieces, 250), nullptr);
  // A later small range inside an earlier big one, and the same in the other order.
  const auto inside = pieces_of({{0, 1000, 0}, {400, 500, 1}});
  EXPECT_EQ(symbols::find_range(inside, 450)->index, 1u);
  EXPECT_EQ(symbols::find_range(inside, 550)->index, 0u);
  const auto under = pieces_of({{400, 500, 0}, {0, 1000, 1}});
  ASSERT_EQ(under.size(), 1u);
  EXPECT_EQ(symbols::find_range(under, 450)->index, 1u);
}

TEST(AddressRanges, SortedRangesStayAsTheyAre) {
  const auto pieces = pieces_of({{0, 10, 0}, {10, 20, 1}, {30, 40, 2}});
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(symbols::find_range(pieces, 10)->index, 1u);
  EXPECT_EQ(symbols::find_range(pieces, 25), nullptr);
}

TEST(ModuleAddress, TheSegmentTheMappingHoldsGivesTheModuleAddress) {
  // GNU ld with -z separate-code: file offsets are addresses.
  const std::vector<symbols::ElfModule::Segment> ld = {{0, 0x1000, 0, false}, {0x1000, 0x5000, 0x1000, true}, {0x6000, 0x800, 0x6000, false}};
  EXPECT_EQ(symbols::module_address(ld, 0x1234, 0x1000, 4096), 0x1234u);
  EXPECT_EQ(symbols::module_address(ld, 0x6100, 0x6000, 4096), 0x6100u);
  // lld: segments share file pages, and each lies at another address than its offset.
  const std::vector<symbols::ElfModule::Segment> lld = {{0, 0x740, 0, false}, {0x740, 0x2000, 0x1740, true}, {0x2740, 0x100, 0x5740, false}};
  EXPECT_EQ(symbols::module_address(lld, 0x1234, 0, 4096), 0x2234u);
  // The page before the text starts is mapped executable too, at the text's addresses.
  EXPECT_EQ(symbols::module_address(lld, 0x700, 0, 4096), 0x1700u);
  // The page holding the text's end and the data's start: the executable mapping's text.
  EXPECT_EQ(symbols::module_address(lld, 0x2100, 0, 4096), 0x3100u);
  EXPECT_EQ(symbols::module_address(lld, 0x2800, 0x2000, 4096), 0x5800u);
  EXPECT_EQ(symbols::module_address(lld, 0x9000, 0x2000, 4096), std::nullopt);
}

TEST(FunctionTable, OneNamePerAddressAndSizelessSymbolsStopAtTheNextOrTheirSection) {
  const auto table = symbols::function_table({
      {0x1000, 0, 0x1010, 0, "_init"},      // sizeless, its section ends at 0x1010
      {0x1100, 0x20, 0, 2, "local_alias"},  // three names of one function
      {0x1100, 0x20, 0, 1, "weak_alias"},
      {0x1100, 0x20, 0, 0, "global_name"},
      {0x1200, 0, 0x2000, 0, "asm_kernel"},  // sizeless, up to the next symbol
      {0x1300, 0x10, 0, 0, "after"},
      {0x1400, 0, 0x1400, 0, "empty_section_end"},  // nothing to cover: left out
  });
  ASSERT_EQ(table.size(), 4u);
  EXPECT_STREQ(table[0].name, "_init");
  EXPECT_EQ(table[0].end, 0x1010u);  // not over the code after .init
  EXPECT_STREQ(table[1].name, "global_name");
  EXPECT_EQ(table[1].end, 0x1120u);
  EXPECT_STREQ(table[2].name, "asm_kernel");
  EXPECT_EQ(table[2].end, 0x1300u);
  EXPECT_STREQ(table[3].name, "after");
  // Among aliases of equal standing, the name decides, whatever the order given.
  const auto first = symbols::function_table({{0x10, 4, 0, 0, "b"}, {0x10, 4, 0, 0, "a"}});
  const auto second = symbols::function_table({{0x10, 4, 0, 0, "a"}, {0x10, 4, 0, 0, "b"}});
  EXPECT_STREQ(first[0].name, "a");
  EXPECT_STREQ(second[0].name, "a");
}

}  // namespace
}  // namespace hwprof
