// The memory a run may take (common/memory_budget) on made-up /proc and /sys trees: MemAvailable
// alone, a cgroup v2 limit (the tightest of the cgroup and its parents), a v1 limit, "max", and
// nothing readable; and the refusal of a model that does not fit, before anything is allocated.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/memory_budget.hpp"
#include "hwprof/engine/executor.hpp"
#include "hwprof/engine/graph.hpp"
#include "scratch_dir.hpp"

namespace hwprof {
namespace {

using ::testing::HasSubstr;

using MemoryBudgetTest = test::ScratchDirTest;

constexpr std::int64_t kGiB = std::int64_t{1} << 30;

TEST_F(MemoryBudgetTest, MemAvailableAloneWithoutACgroupLimit) {
  put("proc/meminfo", "MemTotal:       24000000 kB\nMemFree:         1000000 kB\nMemAvailable:   20971520 kB\n");
  put("proc/self/cgroup", "0::/user.slice/session-1.scope\n");
  put("sys/fs/cgroup/user.slice/session-1.scope/memory.max", "max\n");
  put("sys/fs/cgroup/user.slice/memory.max", "max\n");
  const common::MemoryBudget b = common::memory_budget(dir_.string());
  EXPECT_EQ(b.available, 20 * kGiB);
  EXPECT_EQ(b.source, "MemAvailable 20.0 GiB");
}

TEST_F(MemoryBudgetTest, TheTightestCgroupV2LimitOnTheWayUpWins) {
  put("proc/meminfo", "MemAvailable:   20971520 kB\n");
  put("proc/self/cgroup", "0::/docker/abc\n");
  put("sys/fs/cgroup/docker/abc/memory.max", "max\n");
  put("sys/fs/cgroup/docker/memory.max", std::to_string(4 * kGiB) + "\n");
  put("sys/fs/cgroup/docker/memory.current", std::to_string(1 * kGiB) + "\n");
  const common::MemoryBudget b = common::memory_budget(dir_.string());
  EXPECT_EQ(b.available, 3 * kGiB);
  EXPECT_EQ(b.source, "cgroup memory limit 4.0 GiB, 1.0 GiB of it used; MemAvailable 20.0 GiB");
}

TEST_F(MemoryBudgetTest, ACgroupV1LimitCountsAndItsNoLimitValueDoesNot) {
  put("proc/meminfo", "MemAvailable:   20971520 kB\n");
  put("proc/self/cgroup", "12:cpu,cpuacct:/x\n4:memory:/job\n");
  put("sys/fs/cgroup/memory/job/memory.limit_in_bytes", std::to_string(2 * kGiB) + "\n");
  put("sys/fs/cgroup/memory/job/memory.usage_in_bytes", "0\n");
  put("sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
  EXPECT_EQ(common::memory_budget(dir_.string()).available, 2 * kGiB);
}

TEST_F(MemoryBudgetTest, NothingReadableIsUnknownAndRefusesNothing) {
  const common::MemoryBudget b = common::memory_budget(dir_.string());
  EXPECT_EQ(b.available, -1);
  EXPECT_FALSE(common::check_memory_fits(std::int64_t{1} << 50, "x", "y", b));
}

TEST_F(MemoryBudgetTest, TooMuchIsRefusedWithTheFigures) {
  common::MemoryBudget b{2 * kGiB, "MemAvailable 2.0 GiB"};
  EXPECT_FALSE(common::check_memory_fits(kGiB, "model 'm'", "parameters 1 GiB", b));
  auto error = common::check_memory_fits(3 * kGiB, "model 'm' at batch 8", "parameters 3.0 GiB", b);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->message,
            "model 'm' at batch 8 needs about 3.0 GiB of memory (parameters 3.0 GiB; analytic estimate), but only 2.0 GiB are "
            "available (MemAvailable 2.0 GiB); nothing was allocated");
}

TEST(MemoryBudget, AnAddressSpaceLimitOfThisProcessCounts) {
  // In a child, so that the limit binds nothing else; ASan maps terabytes of shadow, so the
  // limit is set above what is mapped now.
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::ifstream status("/proc/self/status");
    std::string line;
    std::int64_t mapped = 0;
    while (std::getline(status, line)) {
      if (line.rfind("VmSize:", 0) == 0) mapped = std::stoll(line.substr(7)) * 1024;
    }
    struct rlimit limit {};
    limit.rlim_cur = limit.rlim_max = static_cast<rlim_t>(mapped + kGiB);
    if (::setrlimit(RLIMIT_AS, &limit) != 0) ::_exit(2);
    const common::MemoryBudget b = common::memory_budget();
    const bool bounded = b.available > 0 && b.available <= kGiB && b.source.rfind("address-space limit (ulimit -v) ", 0) == 0;
    ::_exit(bounded ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: the budget ignored RLIMIT_AS; 2: setrlimit failed";
}

TEST(ExecutorMemory, AModelLargerThanTheMachineIsRefusedBeforeAllocating) {
  // LeNet-5 fits at batch 1; 2^34 samples of it (about 600 TiB of activations) fit nowhere.
  auto graph = load_model(std::string(HWPROF_MODELS_DIR) + "/lenet5.json");
  ASSERT_TRUE(graph) << graph.error().message;
  ExecutorOptions options;
  options.batch = std::int64_t{1} << 34;
  auto built = Executor::build(*graph, options);
  ASSERT_FALSE(built);
  EXPECT_THAT(built.error().message, HasSubstr("model 'lenet5' at batch 17179869184 needs about "));
  EXPECT_THAT(built.error().message, HasSubstr("of memory (parameters and buffers 241.0 KiB, peak activations "));
  EXPECT_THAT(built.error().message, HasSubstr("; use a smaller --batch or a machine with more memory"));
  options.batch = 1;
  EXPECT_FALSE(Executor::check_memory(*graph, options));
}

}  // namespace
}  // namespace hwprof
