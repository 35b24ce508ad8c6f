// hwprof::mpi (src/mpi/): examples/mpi_imbalance.cpp under mpirun, its ranks merged at
// MPI_Finalize. The last rank does 4x the blocks of local_work, so it must be named its
// straggler; every rank's calls are exact; its merge must agree with `hwprof merge` of the
// ranks' own folders, made from the same sessions by another path.
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "report/merge.hpp"
#include "report/rank_files.hpp"
#include "run_process.hpp"

namespace hwprof {
namespace {

namespace fs = std::filesystem;
constexpr int kSteps = 4;

class MpiMerge : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(HWPROF_MPIEXEC)) GTEST_SKIP() << "no " << HWPROF_MPIEXEC << ": install openmpi-bin (scripts/install-deps.sh)";
    dir_ = fs::temp_directory_path() /
           ("hwprof-mpi-" + std::to_string(::getpid()) + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "cwd");
  }
  void TearDown() override {
    if (!HasFailure() && !dir_.empty()) fs::remove_all(dir_);
  }

  // This process's environment with these variables added (leak checks off: Open MPI keeps
  // its allocations until exit).
  static std::vector<std::string> environment(const std::vector<std::string>& variables) {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string entry(*e);
      if (entry.rfind("HWPROF_", 0) != 0 && entry.rfind("ASAN_OPTIONS=", 0) != 0) env.push_back(entry);
    }
    const char* asan = std::getenv("ASAN_OPTIONS");
    env.push_back(std::string("ASAN_OPTIONS=") + (asan != nullptr ? std::string(asan) + ":" : "") + "detect_leaks=0");
    env.push_back("HWPROF_BACKEND=timer");
    env.push_back("OPENBLAS_NUM_THREADS=1");
    env.insert(env.end(), variables.begin(), variables.end());
    return env;
  }

  // mpirun with `args` (after its own flags).
  test::ProcessResult mpirun(const std::vector<std::string>& args, const std::vector<std::string>& variables) {
    std::vector<std::string> argv = {HWPROF_MPIEXEC};
    if (::geteuid() == 0) argv.push_back("--allow-run-as-root");  // Open MPI refuses root without it
    argv.push_back("--oversubscribe");                            // more ranks than this machine's cores
    argv.insert(argv.end(), args.begin(), args.end());
    const std::vector<std::string> env = environment(variables);
    return test::run_process(argv, &env, (dir_ / "cwd").string());
  }

  // mpirun -np `ranks` of the example, with these variables.
  test::ProcessResult launch(int ranks, const std::vector<std::string>& variables) {
    return mpirun({"-np", std::to_string(ranks), HWPROF_EXAMPLE_MPI, std::to_string(kSteps)}, variables);
  }

  static const session::MergedRegion& region(const session::MergedRanks& m, const std::string& name) {
    for (const session::MergedRegion& r : m.regions) {
      if (r.name == name) return r;
    }
    ADD_FAILURE() << "no region " << name;
    return m.total;
  }

  // The merged run of `ranks` ranks: the last rank is the straggler of its 4x share of
  // local_work; every region's calls per rank are exact.
  void check_run(int ranks) {
    const fs::path out = dir_ / "out";
    const test::ProcessResult r = launch(ranks, {"HWPROF_OUTPUT=" + out.string()});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.err.find("hwprof::mpi: merged " + std::to_string(ranks) + " ranks"), std::string::npos) << r.err;
    for (const char* file : {"merged.json", "merged.txt", "merged.html"}) EXPECT_TRUE(fs::is_regular_file(out / file)) << file;
    // The merge's own reader checks it: every field, and each imbalance against its rank_ms.
    const auto merged = report::load_merged((out / "merged.json").string());
    ASSERT_TRUE(merged.ok()) << merged.error().message;
    const session::MergedRanks& m = *merged;
    EXPECT_NE(m.made_by.find("MPI_Finalize"), std::string::npos) << m.made_by;
    ASSERT_EQ(m.ranks.size(), static_cast<std::size_t>(ranks));
    for (int k = 0; k < ranks; ++k) {
      EXPECT_EQ(m.ranks[k].rank, k);
      EXPECT_EQ(m.ranks[k].size, ranks);
      EXPECT_EQ(m.ranks[k].model, "hwprof_example_mpi_imbalance");
    }
    const session::MergedRegion& work = region(m, "local_work");
    EXPECT_EQ(work.straggler, ranks - 1);
    EXPECT_EQ(work.missing, 0);
    for (int k = 0; k < ranks; ++k) EXPECT_EQ(work.rank_calls[k], kSteps * (k == ranks - 1 ? 4 : 1)) << "rank " << k;
    ASSERT_TRUE(work.flops_per_call.has_value());
    EXPECT_EQ(*work.flops_per_call, 2.0 * 65536 * 40);
    // Every rank entered io_wait, allreduce and step once per step: exact, whatever the load.
    for (const char* name : {"io_wait", "allreduce", "step"}) {
      const session::MergedRegion& calls = region(m, name);
      EXPECT_EQ(calls.missing, 0) << name;
      for (int k = 0; k < ranks; ++k) EXPECT_EQ(calls.rank_calls[k], kSteps) << name << " rank " << k;
    }
    // A sleep never ends early: rank k spent at least (k + 1) x 10 ms per step in io_wait (how
    // much longer depends on the load, so neither the straggler nor the imbalance is held to a
    // band here; the reader above checked the imbalance against the ranks' times).
    const session::MergedRegion& io = region(m, "io_wait");
    for (int k = 0; k < ranks; ++k) EXPECT_GE(io.rank_ms[k], 10.0 * (k + 1) * kSteps - 0.01) << "rank " << k;
    // `hwprof merge` of the ranks' folders: the same sessions, read from the files.
    auto files = report::load_rank_profiles({out.string()});
    ASSERT_TRUE(files.ok()) << files.error().message;
    const session::MergedRanks f = analysis::merge_ranks(std::move(files->ranks), files->empty_folders);
    ASSERT_EQ(f.ranks.size(), m.ranks.size());
    for (const session::MergedRegion& a : m.regions) {
      const session::MergedRegion& b = region(f, a.name);
      EXPECT_EQ(a.straggler, b.straggler) << a.name;
      for (int k = 0; k < ranks; ++k) EXPECT_NEAR(a.rank_ms[k], b.rank_ms[k], 1e-6 * b.rank_ms[k] + 1e-9) << a.name << " rank " << k;
      EXPECT_NEAR(a.imbalance, b.imbalance, 1e-6) << a.name;
    }
    // And it renders again from its JSON, in every format.
    for (const char* format : {"table", "json", "html"}) {
      const test::ProcessResult again = test::run_process({HWPROF_CLI_PATH, "merge", (out / "merged.json").string(), "-f", format});
      EXPECT_EQ(again.exit_code, 0) << format << ": " << again.err;
      EXPECT_NE(again.out.find("local_work"), std::string::npos) << format;
    }
  }

  fs::path dir_;
};

TEST_F(MpiMerge, TwoRanksNameTheStragglerAndCountTheCalls) {
  check_run(2);
}

TEST_F(MpiMerge, FourOversubscribedRanksNameTheStragglerAndCountTheCalls) {
  check_run(4);
}

TEST_F(MpiMerge, WithoutOutputNothingIsWrittenAndTheProgramRunsAsBefore) {
  const test::ProcessResult r = launch(2, {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("rank 0 of 2"), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find("hwprof"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_empty(dir_ / "cwd"));
}

TEST_F(MpiMerge, OneRankWithoutOutputTurnsTheMergeOffWithoutAHang) {
  // mpirun's MPMD form: rank 0 with HWPROF_OUTPUT, rank 1 without.
  const fs::path out = dir_ / "out";
  const test::ProcessResult r =
      mpirun({"-np", "1", "env", "HWPROF_OUTPUT=" + out.string(), HWPROF_EXAMPLE_MPI, "2", ":", "-np", "1", HWPROF_EXAMPLE_MPI, "2"}, {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("not every rank has HWPROF_OUTPUT set"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out / "merged.json"));
  EXPECT_TRUE(fs::is_regular_file(out / "rank-00000" / "profile.json"));
}

TEST_F(MpiMerge, MergeOffKeepsOnlyTheRanksOwnFolders) {
  const fs::path out = dir_ / "out";
  const test::ProcessResult r = launch(2, {"HWPROF_OUTPUT=" + out.string(), "HWPROF_MPI_MERGE=0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(out / "merged.json"));
  EXPECT_TRUE(fs::is_regular_file(out / "rank-00000" / "profile.json"));
  EXPECT_TRUE(fs::is_regular_file(out / "rank-00001" / "profile.json"));
}

}  // namespace
}  // namespace hwprof
