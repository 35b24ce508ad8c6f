// Where data is looked for: the prefix named by the report module a program was built against
// (a relocated install, the program outside it), only where that prefix holds the data.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "common/data_paths.hpp"
#include "scratch_dir.hpp"

namespace hwprof::common {
namespace {

namespace fs = std::filesystem;

class DataPaths : public test::ScratchDirTest {
 protected:
  // <prefix>/<libdir>/hwprof/libhwprof-report.so, in this build's installed layout.
  std::string module_in(const std::string& prefix) const {
    return (dir_ / prefix / HWPROF_TEST_INSTALL_LIBDIR / "hwprof" / "libhwprof-report.so").string();
  }
  std::string counters_in(const std::string& prefix) const {
    return (dir_ / prefix / HWPROF_TEST_INSTALL_LIBDIR / HWPROF_TEST_LIBDIR_TO_DATADIR / "hwprof" / "counters").lexically_normal().string();
  }
};

bool lists_dir(const std::vector<std::string>& dirs, const std::string& dir) {
  return std::find(dirs.begin(), dirs.end(), dir) != dirs.end();
}

TEST_F(DataPaths, TheModulesPrefixIsLookedInWhereItHoldsTheData) {
  fs::create_directories(counters_in("moved"));
  const std::vector<std::string> dirs = data_directories(nullptr, "counters", module_in("moved"));
  EXPECT_TRUE(lists_dir(dirs, counters_in("moved")));
  // Before the source tree and the configured prefix, which may hold another version's groups.
  const auto at = std::find(dirs.begin(), dirs.end(), counters_in("moved"));
  const auto source = std::find(dirs.begin(), dirs.end(), (fs::path(HWPROF_SOURCE_DIR_FOR_TEST) / "counters").string());
  EXPECT_LT(at, source);
}

TEST_F(DataPaths, APrefixWithoutTheDataAddsNothing) {
  const std::vector<std::string> without = data_directories(nullptr, "counters");
  EXPECT_EQ(data_directories(nullptr, "counters", module_in("empty")), without);
  EXPECT_EQ(data_directories(nullptr, "counters", ""), without);
}

}  // namespace
}  // namespace hwprof::common
