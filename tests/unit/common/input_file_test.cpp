// The shared reader of input files (common/input_file) and the JSON nesting limit, through the
// four loaders that use them: a file's type and size are checked before it is read, every read
// is bounded, pipes work, and no JSON reader nests deeper than 256 levels.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <csignal>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/input_file.hpp"
#include "common/text_position.hpp"
#include "hwprof/engine/graph.hpp"
#include "hwprof/engine/machine.hpp"
#include "hwprof/engine/profile.hpp"
#include "hwprof/engine/report.hpp"
#include "hwprof/event_group.hpp"
#include "scratch_dir.hpp"

namespace hwprof {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

using InputFileTest = test::ScratchDirTest;

TEST_F(InputFileTest, ReadsARegularFileWhole) {
  const std::string path = put("a.txt", std::string(200000, 'x'));
  auto text = common::read_input_file(path, "model spec", 1 << 20);
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_EQ(text->size(), 200000u);
}

TEST_F(InputFileTest, ASparseFileOverTheLimitIsRefusedBeforeReading) {
  const std::string path = (dir_ / "big.json").string();
  const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, std::int64_t{3} << 30), 0);
  ::close(fd);
  const auto start = std::chrono::steady_clock::now();
  auto text = common::read_input_file(path, "profile", 1 << 20);
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().message, path + ": 3221225472 bytes; a profile may have at most 1048576 bytes");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST_F(InputFileTest, DevicesDirectoriesAndMissingFilesAreNamed) {
  auto zero = common::read_input_file("/dev/zero", "machine report", 1 << 20);
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().message, "/dev/zero: is a character device, not a machine report; give a regular file or a pipe");
  auto directory = common::read_input_file(dir_.string(), "event-group file", 1 << 20);
  ASSERT_FALSE(directory);
  EXPECT_EQ(directory.error().message, dir_.string() + ": is a directory, not an event-group file; give a regular file or a pipe");
  auto missing = common::read_input_file((dir_ / "none").string(), "model spec", 1 << 20);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, (dir_ / "none").string() + ": cannot open the model spec (No such file or directory)");
  std::filesystem::create_symlink("/dev/urandom", dir_ / "random");
  auto random = common::read_input_file((dir_ / "random").string(), "model spec", 1 << 20);
  ASSERT_FALSE(random);
  EXPECT_THAT(random.error().message, HasSubstr("is a character device"));
  auto empty = common::read_input_file("", "model spec", 1 << 20);
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().message, "the path of the model spec is empty");
}

TEST_F(InputFileTest, AFifoNobodyWritesIntoFailsAtOnce) {
  const std::string path = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  auto text = common::read_input_file(path, "model spec", 1 << 20);
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().message, path + ": the pipe or FIFO gave no data (is a program writing into it?); expected a model spec");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST_F(InputFileTest, APipeIsReadToItsEndAndBounded) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::thread writer([&] {
    const std::string chunk(1000, 'y');
    for (int i = 0; i < 100; ++i) {
      if (::write(fds[1], chunk.data(), chunk.size()) < 0) break;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    ::close(fds[1]);
  });
  const std::string path = "/proc/self/fd/" + std::to_string(fds[0]);
  auto text = common::read_input_file(path, "model spec", 1 << 20);
  writer.join();
  ::close(fds[0]);
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_EQ(text->size(), 100000u);

  ASSERT_EQ(::pipe(fds), 0);
  // The writer sees EPIPE, not SIGPIPE, once the reader has had enough.
  struct sigaction ignore {};
  struct sigaction old {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &old);
  std::thread flood([&] {
    const std::string chunk(4096, 'z');
    while (::write(fds[1], chunk.data(), chunk.size()) > 0) {
    }
  });
  auto bounded = common::read_input_file("/proc/self/fd/" + std::to_string(fds[0]), "profile", 1 << 16);
  ::close(fds[0]);  // the writer gets EPIPE and stops
  flood.join();
  ::close(fds[1]);
  ::sigaction(SIGPIPE, &old, nullptr);
  ASSERT_FALSE(bounded);
  EXPECT_THAT(bounded.error().message, HasSubstr(": more than 65536 bytes; a profile may have at most 65536 bytes"));
}

TEST(JsonNesting, LimitIs256LevelsOutsideStrings) {
  EXPECT_EQ(common::json_nesting_overflow(std::string(256, '[') + std::string(256, ']')), std::string_view::npos);
  EXPECT_EQ(common::json_nesting_overflow(std::string(257, '[')), 256u);
  // Brackets inside strings, escaped quotes included, are not nesting.
  EXPECT_EQ(common::json_nesting_overflow("[\"" + std::string(300, '[') + "\\\"" + std::string(300, '{') + "\"]"), std::string_view::npos);
  // Closing brackets bring the depth back: 1000 arrays of depth 200 in a row are fine.
  std::string row;
  for (int i = 0; i < 1000; ++i) row += std::string(200, '[') + std::string(200, ']');
  EXPECT_EQ(common::json_nesting_overflow(row), std::string_view::npos);
}

TEST(JsonNesting, EveryJsonReaderRefusesDeepNestingWithItsPlace) {
  const std::string deep = "{\"a\":\n" + std::string(100000, '[');
  auto spec = parse_model(deep, "deep.json");
  ASSERT_FALSE(spec);
  EXPECT_THAT(spec.error().message, StartsWith("deep.json:2:256: JSON nesting deeper than 256 levels"));
  auto machine = machine_from_json(deep, "m.json");
  ASSERT_FALSE(machine);
  EXPECT_THAT(machine.error().message, StartsWith("m.json:2:256: JSON nesting deeper than 256 levels"));
  auto profile = profile_from_json(deep, "p.json");
  ASSERT_FALSE(profile);
  EXPECT_THAT(profile.error().message, StartsWith("p.json:2:256: JSON nesting deeper than 256 levels"));
}

TEST_F(InputFileTest, LoadersUseTheBoundedReader) {
  auto spec = load_model("/dev/zero");
  ASSERT_FALSE(spec);
  EXPECT_THAT(spec.error().message, StartsWith("/dev/zero: is a character device, not a model spec"));
  auto machine = load_machine(dir_.string());
  ASSERT_FALSE(machine);
  EXPECT_THAT(machine.error().message, StartsWith(dir_.string() + ": is a directory, not a machine report"));
  auto profile = load_profile("/dev/urandom");
  ASSERT_FALSE(profile);
  EXPECT_THAT(profile.error().message, StartsWith("/dev/urandom: is a character device, not a profile"));
  auto group = load_event_group("/dev/zero");
  ASSERT_FALSE(group);
  EXPECT_THAT(group.error().message, StartsWith("/dev/zero: is a character device, not an event-group file"));
}

TEST(EventGroupText, ANulByteIsRefusedWithItsLineAndColumn) {
  const std::string text = std::string("TITLE x\n\nEVENTS\nt task-clock") + '\0' + "junk\n";
  auto group = parse_event_group(text, "g.txt");
  ASSERT_FALSE(group);
  EXPECT_EQ(group.error().message, "g.txt:4:13: a NUL byte; an event-group file is text (a binary file, or damaged?)");
}

}  // namespace
}  // namespace hwprof
