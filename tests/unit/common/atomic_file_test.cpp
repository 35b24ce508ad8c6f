// write_file_atomically and check_output_path on what a user may give -o: regular files
// (replaced whole, mode and owner kept), symlinks (the target replaced, the link kept, also when
// dangling), character devices and FIFOs (written in place, never replaced), this process's
// descriptors, directories and missing folders (refused, nothing left behind).
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <new>
#include <sstream>
#include <string>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/atomic_file.hpp"
#include "hwprof/atomic_file.hpp"
#include "scratch_dir.hpp"

namespace hwprof {
namespace {

using ::testing::HasSubstr;

class AtomicFileTest : public test::ScratchDirTest {
 protected:
  static std::string read(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // Nothing but `expected` names in the folder: no temporary file left behind.
  void expect_only(std::initializer_list<std::string> expected) const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir_)) names.push_back(e.path().filename().string());
    EXPECT_THAT(names, ::testing::UnorderedElementsAreArray(expected));
  }
};

TEST_F(AtomicFileTest, ReplacesAFileWholeAndKeepsItsMode) {
  std::ofstream(path("r.txt")) << "old content that is longer";
  ASSERT_EQ(::chmod(path("r.txt").c_str(), 0640), 0);
  ASSERT_FALSE(write_file_atomically(path("r.txt"), "new"));
  EXPECT_EQ(read(path("r.txt")), "new");
  struct stat st {};
  ASSERT_EQ(::stat(path("r.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  expect_only({"r.txt"});
}

TEST_F(AtomicFileTest, ANewFileGetsTheUmaskMode) {
  const mode_t old = ::umask(022);
  ASSERT_FALSE(write_file_atomically(path("n.txt"), "x"));
  ::umask(old);
  struct stat st {};
  ASSERT_EQ(::stat(path("n.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
}

TEST_F(AtomicFileTest, ASymlinksTargetIsReplacedAndTheLinkStays) {
  std::ofstream(path("target.txt")) << "old";
  ASSERT_EQ(::chmod(path("target.txt").c_str(), 0600), 0);
  std::filesystem::create_symlink("target.txt", dir_ / "link.txt");
  std::filesystem::create_symlink("link.txt", dir_ / "link2.txt");
  ASSERT_FALSE(write_file_atomically(path("link2.txt"), "through two links"));
  EXPECT_TRUE(std::filesystem::is_symlink(dir_ / "link.txt"));
  EXPECT_TRUE(std::filesystem::is_symlink(dir_ / "link2.txt"));
  EXPECT_EQ(read(path("target.txt")), "through two links");
  struct stat st {};
  ASSERT_EQ(::stat(path("target.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  expect_only({"target.txt", "link.txt", "link2.txt"});
}

TEST_F(AtomicFileTest, ASymlinkLoopIsRefusedAndStays) {
  std::filesystem::create_symlink("loop2", dir_ / "loop");
  std::filesystem::create_symlink("loop", dir_ / "loop2");
  for (auto* check :
       {+[](const std::string& p) { return write_file_atomically(p, "x"); }, +[](const std::string& p) { return check_output_path(p); }}) {
    auto error = check(path("loop"));
    ASSERT_TRUE(error);
    EXPECT_EQ(error->message, path("loop") + ": cannot follow its symbolic links (Too many levels of symbolic links)");
  }
  EXPECT_TRUE(std::filesystem::is_symlink(dir_ / "loop"));
  EXPECT_TRUE(std::filesystem::is_symlink(dir_ / "loop2"));
  expect_only({"loop", "loop2"});
}

TEST_F(AtomicFileTest, ADanglingSymlinkGetsItsTargetCreated) {
  std::filesystem::create_directories(dir_ / "sub");
  std::filesystem::create_symlink("sub/made.txt", dir_ / "dangling");
  ASSERT_FALSE(write_file_atomically(path("dangling"), "made"));
  EXPECT_TRUE(std::filesystem::is_symlink(dir_ / "dangling"));
  EXPECT_EQ(read(path("sub/made.txt")), "made");
}

TEST_F(AtomicFileTest, AFifoIsWrittenInPlaceWhenReadAndRefusedWhenNot) {
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  auto nobody = write_file_atomically(path("fifo"), "x");
  ASSERT_TRUE(nobody);
  EXPECT_EQ(nobody->message, path("fifo") + ": a FIFO that no program is reading; nothing was written");
  std::string got;
  const int reader = ::open(path("fifo").c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  ASSERT_FALSE(write_file_atomically(path("fifo"), "through the fifo"));
  char buffer[64] = {};
  const ssize_t n = ::read(reader, buffer, sizeof buffer);
  ::close(reader);
  EXPECT_EQ(std::string(buffer, n > 0 ? static_cast<std::size_t>(n) : 0), "through the fifo");
  struct stat st {};
  ASSERT_EQ(::lstat(path("fifo").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  expect_only({"fifo"});
}

TEST_F(AtomicFileTest, ACharacterDeviceIsWrittenNeverReplaced) {
  // /dev/null itself, read-only: the check must not need to replace anything.
  EXPECT_FALSE(check_output_path("/dev/null"));
  if (::geteuid() != 0) GTEST_SKIP() << "making device nodes needs root";
  ASSERT_EQ(::mknod(path("null").c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);
  ASSERT_EQ(::mknod(path("full").c_str(), S_IFCHR | 0666, makedev(1, 7)), 0);
  ASSERT_FALSE(write_file_atomically(path("null"), "gone"));
  auto full = write_file_atomically(path("full"), "no room");
  ASSERT_TRUE(full);
  EXPECT_EQ(full->message, path("full") + ": write failed (No space left on device)");
  for (const char* name : {"null", "full"}) {
    struct stat st {};
    ASSERT_EQ(::lstat(path(name).c_str(), &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode)) << name << " was replaced";
  }
  expect_only({"null", "full"});
}

TEST_F(AtomicFileTest, ADescriptorOfThisProcessIsWrittenThrough) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::filesystem::create_symlink("/proc/self/fd/" + std::to_string(fds[1]), dir_ / "out");
  ASSERT_FALSE(write_file_atomically(path("out"), "down the pipe"));
  ::close(fds[1]);
  char buffer[64] = {};
  const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
  ::close(fds[0]);
  EXPECT_EQ(std::string(buffer, n > 0 ? static_cast<std::size_t>(n) : 0), "down the pipe");
  EXPECT_TRUE(std::filesystem::is_symlink(dir_ / "out"));
  expect_only({"out"});
}

TEST_F(AtomicFileTest, DirectoriesMissingFoldersAndEmptyPathsAreRefused) {
  auto directory = write_file_atomically(dir_.string(), "x");
  ASSERT_TRUE(directory);
  EXPECT_EQ(directory->message, dir_.string() + ": is a directory; give a file name");
  auto missing = write_file_atomically(path("no/such/x.json"), "x");
  ASSERT_TRUE(missing);
  EXPECT_THAT(missing->message, HasSubstr("cannot create a temporary file beside it (No such file or directory)"));
  auto empty = write_file_atomically("", "x");
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->message, "the output path is empty");
  expect_only({});
}

TEST_F(AtomicFileTest, CheckOutputPathFindsABadDestinationBeforeTheWork) {
  EXPECT_FALSE(check_output_path(path("fine.json")));
  auto missing = check_output_path("/nonexistent-hwprof-dir/x.json");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->message, "/nonexistent-hwprof-dir/x.json: the folder /nonexistent-hwprof-dir cannot be used (No such file or directory)");
  auto directory = check_output_path(dir_.string());
  ASSERT_TRUE(directory);
  EXPECT_THAT(directory->message, HasSubstr("is a directory"));
  std::ofstream(path("file")) << "x";
  auto under_a_file = check_output_path(path("file/x.json"));
  ASSERT_TRUE(under_a_file);
  EXPECT_THAT(under_a_file->message, HasSubstr("is not a folder"));
  expect_only({"file"});
}

// A large report is written as it is made (docs/regions.md): parts of every size arrive in
// order, and a file that could not be made whole leaves the old one and no temporary file.
TEST_F(AtomicFileTest, PartsOfAnySizeAreWrittenInOrder) {
  std::string expected;
  const std::string big(200000, 'b');
  const auto produce = [&](const common::TextSink& sink) {
    sink("head,");
    sink(big);
    for (int i = 0; i < 20000; ++i) sink(std::to_string(i) + ",");
    sink("");
    sink("tail");
  };
  produce([&expected](std::string_view part) { expected += part; });
  ASSERT_FALSE(common::write_file_atomically_in_parts(path("parts.txt"), produce));
  EXPECT_EQ(read(path("parts.txt")), expected);
  expect_only({"parts.txt"});
}

TEST_F(AtomicFileTest, AFailureWhileMakingThePartsLeavesTheOldFileAndNoTemporary) {
  std::ofstream(path("p.txt")) << "old";
  const auto produce = [](const common::TextSink& sink) {
    sink(std::string(100000, 'x'));  // already past the buffer: some of it is on disk
    throw std::bad_alloc();
  };
  EXPECT_THROW(static_cast<void>(common::write_file_atomically_in_parts(path("p.txt"), produce)), std::bad_alloc);
  EXPECT_EQ(read(path("p.txt")), "old");
  expect_only({"p.txt"});
}

}  // namespace
}  // namespace hwprof
