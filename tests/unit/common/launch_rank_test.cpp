// Which rank a process is, from its launcher's environment.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "common/launch_rank.hpp"

namespace hwprof::detail {
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

TEST(LaunchRank, FoldersSortByRank) {
  EXPECT_EQ(rank_folder(3), "rank-00003");
  EXPECT_EQ(rank_folder(0), "rank-00000");
  EXPECT_EQ(rank_folder(123456), "rank-123456");
  EXPECT_LT(rank_folder(9), rank_folder(10));
}

}  // namespace
}  // namespace hwprof::detail
