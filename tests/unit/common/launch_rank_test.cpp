// Which rank a process is, from its launcher's environment.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "common/launch_rank.hpp"

namespace hwprof::common {
namespace {

LaunchRank from(const std::map<std::string, std::string>& env) {
  return launch_rank([&](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

TEST(LaunchRank, EachLauncherAndItsSize) {
  EXPECT_FALSE(from({}).known());
  const LaunchRank ompi = from({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "4"}});
  EXPECT_EQ(ompi.rank, 3);
  EXPECT_EQ(ompi.size, 4);
  EXPECT_EQ(ompi.variable, "OMPI_COMM_WORLD_RANK");
  EXPECT_EQ(from({{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}}).size, 2);
  EXPECT_EQ(from({{"PMIX_RANK", "5"}}).rank, 5);
  EXPECT_EQ(from({{"PMIX_RANK", "5"}}).size, 0) << "PMIx without a size: unknown, not 0 ranks";
  const LaunchRank slurm = from({{"SLURM_PROCID", "7"}, {"SLURM_NTASKS", "8"}});
  EXPECT_EQ(slurm.rank, 7);
  EXPECT_EQ(slurm.variable, "SLURM_PROCID");
  const LaunchRank torch = from({{"RANK", "2"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "0"}});
  EXPECT_EQ(torch.rank, 2);
  EXPECT_EQ(torch.variable, "RANK");
  // Open MPI's variable wins over the others an MPI-under-Slurm job also has.
  EXPECT_EQ(from({{"SLURM_PROCID", "0"}, {"OMPI_COMM_WORLD_RANK", "6"}, {"OMPI_COMM_WORLD_SIZE", "8"}}).rank, 6);
}

TEST(LaunchRank, WhatIsNotARankIsIgnored) {
  EXPECT_FALSE(from({{"RANK", "2"}}).known()) << "RANK alone is too common a name";
  EXPECT_FALSE(from({{"OMPI_COMM_WORLD_RANK", "-1"}}).known());
  EXPECT_FALSE(from({{"OMPI_COMM_WORLD_RANK", "two"}}).known());
  EXPECT_FALSE(from({{"OMPI_COMM_WORLD_RANK", "3x"}}).known());
  EXPECT_FALSE(from({{"OMPI_COMM_WORLD_RANK", ""}}).known());
  EXPECT_FALSE(from({{"OMPI_COMM_WORLD_RANK", "99999999999"}}).known());
  EXPECT_FALSE(from({{"OMPI_COMM_WORLD_RANK", "4"}, {"OMPI_COMM_WORLD_SIZE", "4"}}).known()) << "rank 4 of 4 is inconsistent";
  EXPECT_EQ(from({{"OMPI_COMM_WORLD_RANK", "bad"}, {"SLURM_PROCID", "1"}}).rank, 1) << "the next launcher's variable";
}

TEST(LaunchRank, ALauncherVariableThatCannotBeUsedIsSaidWithItsValue) {
  const LaunchRank bad = from({{"SLURM_PROCID", "abc"}});
  EXPECT_FALSE(bad.known());
  ASSERT_EQ(bad.problems.size(), 1u);
  EXPECT_NE(bad.problems[0].find("SLURM_PROCID='abc'"), std::string::npos) << bad.problems[0];
  const LaunchRank traversal = from({{"PMI_RANK", "../../etc"}});
  ASSERT_EQ(traversal.problems.size(), 1u);
  EXPECT_NE(traversal.problems[0].find("PMI_RANK='../../etc' is not a rank"), std::string::npos) << traversal.problems[0];
  const LaunchRank too_big = from({{"OMPI_COMM_WORLD_RANK", "4"}, {"OMPI_COMM_WORLD_SIZE", "4"}});
  ASSERT_EQ(too_big.problems.size(), 1u);
  EXPECT_NE(too_big.problems[0].find("is not below OMPI_COMM_WORLD_SIZE='4'"), std::string::npos) << too_big.problems[0];
  const LaunchRank bad_size = from({{"PMIX_RANK", "1"}, {"PMIX_SIZE", "0"}});
  ASSERT_EQ(bad_size.problems.size(), 1u);
  EXPECT_NE(bad_size.problems[0].find("PMIX_SIZE='0'"), std::string::npos) << bad_size.problems[0];
  const LaunchRank escaped = from({{"PMI_RANK", "1\x1b[2J"}});
  ASSERT_EQ(escaped.problems.size(), 1u);
  EXPECT_EQ(escaped.problems[0].find('\x1b'), std::string::npos) << "control characters are escaped";
  EXPECT_NE(escaped.problems[0].find("\\x1b"), std::string::npos) << escaped.problems[0];
  const LaunchRank fine = from({{"OMPI_COMM_WORLD_RANK", "bad"}, {"SLURM_PROCID", "1"}});
  EXPECT_EQ(fine.rank, 1);
  EXPECT_EQ(fine.problems.size(), 1u) << "the unusable variable before the usable one is still said";
  EXPECT_TRUE(from({{"RANK", "2"}}).problems.empty()) << "RANK alone is not a launcher's: nothing to say";
  EXPECT_TRUE(from({}).problems.empty());
}

TEST(LaunchRank, FoldersSortByRank) {
  EXPECT_EQ(rank_folder(3), "rank-00003");
  EXPECT_EQ(rank_folder(0), "rank-00000");
  EXPECT_EQ(rank_folder(123456), "rank-123456");
  EXPECT_LT(rank_folder(9), rank_folder(10));
}

}  // namespace
}  // namespace hwprof::common
