// hwprof::mpi: the ranks' regions merged inside the parallel program, at MPI_Finalize (after
// Caliper's cross-process aggregation; PMPI interposition is the MPI standard's profiling
// interface, MPI-4.0 §15.2). The program links -lhwprof_mpi before -lmpi (CMake:
// hwprof::mpi), or runs with LD_PRELOAD=libhwprof_mpi.so; at MPI_Finalize, with HWPROF_OUTPUT
// set on every rank:
//
//   1. the ranks agree on the regions' names (an allgather of each rank's names: a region
//      entered by only some ranks still gets one row, with the others counted missing);
//   2. per region, MPI_Reduce gives rank 0 the min, max (MAXLOC: the straggler) and sum of the
//      ranks' times, the sum of their calls and how many ranks entered it — tree reductions
//      inside the MPI library, not rank 0 reading files;
//   3. rank 0 gathers each rank's time per region (the median and the per-rank view need
//      them) and its machine, and the report module writes HWPROF_OUTPUT/merged.json,
//      merged.txt and merged.html (docs/merge.md).
//
// Every rank still writes its own HWPROF_OUTPUT/rank-NNNNN/ at exit. Everything runs on a
// duplicate of MPI_COMM_WORLD, so none of it can match the program's own messages.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "common/stages.hpp"
#include "hwprof/cpu.hpp"
#include "hwprof/regions.hpp"
#include "hwprof/statistics.hpp"
#include "hwprof/version.hpp"
#include "session/merged_ranks.hpp"
#include "session/report_writer.hpp"

namespace hwprof::mpi {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int kHostChars = 256;
constexpr int kCpuChars = 128;

bool wants_merge() {
  const char* output = std::getenv("HWPROF_OUTPUT");
  const char* off = std::getenv("HWPROF_MPI_MERGE");
  const bool disabled = off != nullptr && (std::strcmp(off, "0") == 0 || std::strcmp(off, "off") == 0 || std::strcmp(off, "no") == 0);
  return output != nullptr && output[0] != '\0' && !disabled;
}

// What this rank measured: its regions by name, and its program total (the time in the
// outermost regions, summed over the threads: a regions profile's total).
struct Local {
  std::vector<std::string> names;
  std::vector<std::size_t> regions;  // into snapshot.regions
  double total_ms = kNaN;
  int threads = 0;
  SessionSnapshot snapshot;
};

Local local_regions() {
  Local l;
  // 0: no region was ever entered on this rank (nothing to open); 1: disabled.
  if (detail::default_state_word.load(std::memory_order_acquire) <= 1) return l;
  l.snapshot = default_session().snapshot();
  double root_ns = 0;
  for (const CallPath& c : l.snapshot.call_tree) root_ns += c.parent < 0 ? c.inclusive_ns : 0.0;
  l.total_ms = root_ns / 1e6;
  l.threads = static_cast<int>(l.snapshot.threads.size());
  for (const RegionReport& r : l.snapshot.regions) {
    if (r.calls == 0) continue;
    l.names.push_back(r.name);
    l.regions.push_back(static_cast<std::size_t>(&r - l.snapshot.regions.data()));
  }
  return l;
}

// Step 1: the sorted union of every rank's region names.
std::vector<std::string> agree_on_names(const std::vector<std::string>& mine, MPI_Comm comm, int size) {
  std::string packed;
  for (const std::string& n : mine) packed += n + '\0';
  const int length = static_cast<int>(std::min<std::size_t>(packed.size(), std::numeric_limits<int>::max() / std::max(size, 1)));
  std::vector<int> lengths(static_cast<std::size_t>(size));
  PMPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm);
  // Each rank's share is capped at INT_MAX / size characters, so the displacements fit an int.
  std::vector<int> displacements(static_cast<std::size_t>(size), 0);
  std::size_t total = 0;
  for (int k = 0; k < size; ++k) {
    displacements[k] = static_cast<int>(total);
    total += static_cast<std::size_t>(lengths[k]);
  }
  std::vector<char> all(total + 1, '\0');
  PMPI_Allgatherv(packed.data(), length, MPI_CHAR, all.data(), lengths.data(), displacements.data(), MPI_CHAR, comm);
  std::set<std::string> names;
  for (std::size_t start = 0; start + 1 < all.size();) {
    const std::string name(all.data() + start);
    names.insert(name);
    start += name.size() + 1;
  }
  return {names.begin(), names.end()};
}

struct ValueRank {
  double value;
  int rank;
};

void copy_text(char* to, int size, const std::string& text) {
  std::snprintf(to, static_cast<std::size_t>(size), "%s", text.c_str());
}

// This rank's row per region (in `names` order), then its total; NaN (or -1 for the work)
// where it has none.
struct Rows {
  std::size_t count = 0;
  std::vector<double> ms, calls, flops, bytes;
};

Rows local_rows(const Local& local, const std::vector<std::string>& names) {
  Rows r;
  r.count = names.size() + 1;
  r.ms.assign(r.count, kNaN);
  r.calls.assign(r.count, kNaN);
  r.flops.assign(r.count, -1.0);
  r.bytes.assign(r.count, -1.0);
  for (std::size_t i = 0; i < local.names.size(); ++i) {
    const auto at = static_cast<std::size_t>(std::lower_bound(names.begin(), names.end(), local.names[i]) - names.begin());
    const RegionReport& region = local.snapshot.regions[local.regions[i]];
    r.ms[at] = region.total_inclusive_ns / 1e6;
    r.calls[at] = static_cast<double>(region.calls);
    if (region.work_flops) r.flops[at] = *region.work_flops;
    if (region.work_bytes) r.bytes[at] = *region.work_bytes;
  }
  r.ms[r.count - 1] = local.total_ms;
  r.calls[r.count - 1] = std::isfinite(local.total_ms) ? 1.0 : kNaN;
  return r;
}

// Step 2, at rank 0: per row, the min, the max with its rank, the sum, the calls, how many
// ranks have it, and the work per call. An absent value is +inf for the min, -1 for the max
// and 0 for the sums.
struct Reduced {
  std::vector<double> min, sum, calls, present, flops, bytes;
  std::vector<ValueRank> max;
};

Reduced reduce_rows(const Rows& rows, int rank, MPI_Comm comm) {
  const std::size_t n = rows.count;
  std::vector<double> low(n), sum(n), calls(n), present(n);
  std::vector<ValueRank> high(n);
  for (std::size_t i = 0; i < n; ++i) {
    const bool here = std::isfinite(rows.ms[i]);
    low[i] = here ? rows.ms[i] : std::numeric_limits<double>::infinity();
    sum[i] = here ? rows.ms[i] : 0.0;
    calls[i] = here ? rows.calls[i] : 0.0;
    present[i] = here ? 1.0 : 0.0;
    high[i] = {here ? rows.ms[i] : -1.0, rank};
  }
  Reduced out;
  for (std::vector<double>* v : {&out.min, &out.sum, &out.calls, &out.present, &out.flops, &out.bytes}) v->resize(n);
  out.max.resize(n);
  const int count = static_cast<int>(n);
  PMPI_Reduce(low.data(), out.min.data(), count, MPI_DOUBLE, MPI_MIN, 0, comm);
  PMPI_Reduce(sum.data(), out.sum.data(), count, MPI_DOUBLE, MPI_SUM, 0, comm);
  PMPI_Reduce(calls.data(), out.calls.data(), count, MPI_DOUBLE, MPI_SUM, 0, comm);
  PMPI_Reduce(present.data(), out.present.data(), count, MPI_DOUBLE, MPI_SUM, 0, comm);
  PMPI_Reduce(high.data(), out.max.data(), count, MPI_DOUBLE_INT, MPI_MAXLOC, 0, comm);
  PMPI_Reduce(rows.flops.data(), out.flops.data(), count, MPI_DOUBLE, MPI_MAX, 0, comm);
  PMPI_Reduce(rows.bytes.data(), out.bytes.data(), count, MPI_DOUBLE, MPI_MAX, 0, comm);
  return out;
}

// Step 3, at rank 0: every rank's row of times and calls (rank-major), and its machine.
struct Gathered {
  std::vector<double> ms, calls;
  std::vector<MergedRankInfo> ranks;
};

Gathered gather_rows(const Rows& rows, int threads, int rank, int size, MPI_Comm comm) {
  Gathered g;
  const int n = static_cast<int>(rows.count);
  // assign, not resize: GCC 12 at -O2 warns of a null dereference inside resize of an empty
  // vector (a false positive of -Wnull-dereference).
  g.ms.assign(rank == 0 ? rows.count * static_cast<std::size_t>(size) : 0, 0.0);
  g.calls.assign(g.ms.size(), 0.0);
  PMPI_Gather(rows.ms.data(), n, MPI_DOUBLE, g.ms.data(), n, MPI_DOUBLE, 0, comm);
  PMPI_Gather(rows.calls.data(), n, MPI_DOUBLE, g.calls.data(), n, MPI_DOUBLE, 0, comm);
  char machine[kHostChars + kCpuChars] = {};
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  int host_length = 0;
  PMPI_Get_processor_name(host, &host_length);
  copy_text(machine, kHostChars, host);
  copy_text(machine + kHostChars, kCpuChars, detect_cpu().brand);
  std::vector<char> machines(rank == 0 ? sizeof machine * static_cast<std::size_t>(size) : 0);
  PMPI_Gather(machine, sizeof machine, MPI_CHAR, machines.data(), sizeof machine, MPI_CHAR, 0, comm);
  std::vector<int> all_threads(rank == 0 ? static_cast<std::size_t>(size) : 0);
  PMPI_Gather(&threads, 1, MPI_INT, all_threads.data(), 1, MPI_INT, 0, comm);
  for (int k = 0; rank == 0 && k < size; ++k) {
    const char* m = machines.data() + static_cast<std::size_t>(k) * sizeof machine;
    g.ranks.push_back({k, size, "", std::string(m, strnlen(m, kHostChars)), std::string(m + kHostChars, strnlen(m + kHostChars, kCpuChars)), "",
                       all_threads[static_cast<std::size_t>(k)]});
  }
  return g;
}

// Rank 0's merge: the statistics from the reductions, the median and the per-rank view from
// the gathered rows.
MergedRanks merged_of(const std::vector<std::string>& names, const Reduced& reduced, Gathered gathered) {
  MergedRanks merged;
  const std::size_t size = gathered.ranks.size();
  const std::size_t rows = names.size() + 1;
  merged.made_by = "hwprof::mpi at MPI_Finalize (MPI_Reduce min/max/sum/maxloc over " + std::to_string(size) + " ranks)";
  merged.ranks = std::move(gathered.ranks);
  for (std::size_t i = 0; i < rows; ++i) {
    MergedRegion r;
    r.name = i + 1 < rows ? names[i] : "total";
    std::vector<double> present;
    for (std::size_t k = 0; k < size; ++k) {
      const std::size_t at = k * rows + i;
      r.rank_ms.push_back(gathered.ms[at]);
      r.rank_calls.push_back(gathered.calls[at]);
      if (std::isfinite(gathered.ms[at])) present.push_back(gathered.ms[at]);
    }
    const int count = static_cast<int>(std::lround(reduced.present[i]));
    r.missing = static_cast<int>(size) - count;
    if (reduced.flops[i] >= 0) r.flops_per_call = reduced.flops[i];
    if (reduced.bytes[i] >= 0) r.bytes_per_call = reduced.bytes[i];
    if (count > 0) {
      r.min_ms = reduced.min[i];
      r.max_ms = reduced.max[i].value;
      r.straggler = reduced.max[i].rank;
      r.mean_ms = reduced.sum[i] / count;
      r.imbalance = rank_imbalance(r.max_ms, r.mean_ms);
      r.median_ms = summarize(std::move(present)).median;
    }
    (i + 1 < rows ? merged.regions.emplace_back() : merged.total) = std::move(r);
  }
  return merged;
}

// The report module writes the merge (it has the report code and this machine's calibration).
void write_merged(MergedRanks& merged, const std::string& dir) {
  std::string tried;
  void* symbol = detail::report_module_symbol(kReportModuleMergedEntry, &tried);
  if (symbol == nullptr) {
    std::fprintf(stderr,
                 "hwprof::mpi: no merged report: the report module %s was not found (looked in %s); the ranks' own folders "
                 "are written, and `hwprof merge %s` merges them\n",
                 kReportModuleFile, tried.c_str(), dir.c_str());
    return;
  }
  std::vector<char> message(16384, '\0');
  const int rc = reinterpret_cast<ReportModuleMergedEntry>(symbol)(&merged, HWPROF_VERSION_STRING, dir.c_str(), message.data(), message.size());
  if (rc != 0) {
    std::fprintf(stderr, "hwprof::mpi: no merged report in %s: %s\n", dir.c_str(), message.data());
  } else {
    std::fprintf(stderr, "hwprof::mpi: merged %zu ranks into %s/merged.json, merged.txt, merged.html\n", merged.ranks.size(), dir.c_str());
  }
}

void merge_at_finalize() {
  int initialized = 0;
  int finalized = 0;
  PMPI_Initialized(&initialized);
  PMPI_Finalized(&finalized);
  if (initialized == 0 || finalized != 0) return;
  MPI_Comm comm = MPI_COMM_NULL;
  if (PMPI_Comm_dup(MPI_COMM_WORLD, &comm) != MPI_SUCCESS) return;
  int rank = 0;
  int size = 1;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  // Every rank must want it (HWPROF_OUTPUT set, the merge not turned off), or none takes part.
  const int mine = wants_merge() ? 1 : 0;
  int all = 0;
  PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm);
  if (all == 0) {
    if (mine == 1 && rank == 0) std::fprintf(stderr, "hwprof::mpi: no merged report: not every rank has HWPROF_OUTPUT set\n");
    PMPI_Comm_free(&comm);
    return;
  }
  const Local local = local_regions();
  const std::vector<std::string> names = agree_on_names(local.names, comm, size);
  const Rows rows = local_rows(local, names);
  const Reduced reduced = reduce_rows(rows, rank, comm);
  Gathered gathered = gather_rows(rows, local.threads, rank, size, comm);
  PMPI_Comm_free(&comm);
  if (rank != 0) return;
  MergedRanks merged = merged_of(names, reduced, std::move(gathered));
  write_merged(merged, std::getenv("HWPROF_OUTPUT"));
}

}  // namespace
}  // namespace hwprof::mpi

extern "C" __attribute__((visibility("default"))) int MPI_Finalize(void) {
  try {
    hwprof::mpi::merge_at_finalize();
  } catch (...) {
    std::fprintf(stderr, "hwprof::mpi: the merge at MPI_Finalize failed (out of memory?); the ranks' own folders are still written\n");
  }
  return PMPI_Finalize();
}
