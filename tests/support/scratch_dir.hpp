// A test fixture with a fresh folder of its own (named after the process and the test, removed
// afterwards) and a helper that writes a file into it, creating folders on the way.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace hwprof::test {

class ScratchDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("hwprof-" + std::to_string(::getpid()) + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name() + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  // The path of `relative` in the folder, after writing `text` there.
  std::string put(const std::string& relative, const std::string& text) {
    const std::filesystem::path p = dir_ / relative;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  std::string path(const std::string& relative) const { return (dir_ / relative).string(); }

  std::filesystem::path dir_;
};

}  // namespace hwprof::test
