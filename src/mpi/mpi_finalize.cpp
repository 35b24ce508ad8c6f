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

#include "hwprof/cpu.hpp"
#include "hwprof/regions.hpp"
#include "hwprof/version.hpp"
#include "report/merged_ranks.hpp"
#include "session/report_writer.hpp"

namespace hwprof::detail {
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
  if (default_state_word.load(std::memory_order_acquire) <= 1) return l;
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

void merge_at_finalize() {
  int initialized = 0;
  int finalized = 0;
  PMPI_Initialized(&initialized);
  PMPI_Finalized(&finalized);
  if (initialized == 0 || finalized != 0 || !wants_merge()) return;
  MPI_Comm comm = MPI_COMM_NULL;
  if (PMPI_Comm_dup(MPI_COMM_WORLD, &comm) != MPI_SUCCESS) return;
  int rank = 0;
  int size = 1;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);

  const Local local = local_regions();
  const std::vector<std::string> names = agree_on_names(local.names, comm, size);
  // Rows: the regions, then the total.
  const std::size_t rows = names.size() + 1;
  std::vector<double> ms(rows, kNaN), calls(rows, kNaN), flops(rows, -1.0), bytes(rows, -1.0);
  for (std::size_t i = 0; i < local.names.size(); ++i) {
    const auto at = static_cast<std::size_t>(std::lower_bound(names.begin(), names.end(), local.names[i]) - names.begin());
    const RegionReport& r = local.snapshot.regions[local.regions[i]];
    ms[at] = r.total_inclusive_ns / 1e6;
    calls[at] = static_cast<double>(r.calls);
    if (r.work_flops) flops[at] = *r.work_flops;
    if (r.work_bytes) bytes[at] = *r.work_bytes;
  }
  ms[rows - 1] = local.total_ms;
  calls[rows - 1] = std::isfinite(local.total_ms) ? 1.0 : kNaN;

  // Step 2: the reductions. An absent value is +inf for the min, -1 for the max and 0 for the sums.
  std::vector<double> low(rows), high_in(rows), sum_in(rows), calls_in(rows), present_in(rows);
  std::vector<ValueRank> loc_in(rows);
  for (std::size_t i = 0; i < rows; ++i) {
    const bool here = std::isfinite(ms[i]);
    low[i] = here ? ms[i] : std::numeric_limits<double>::infinity();
    high_in[i] = here ? ms[i] : -1.0;
    sum_in[i] = here ? ms[i] : 0.0;
    calls_in[i] = here ? calls[i] : 0.0;
    present_in[i] = here ? 1.0 : 0.0;
    loc_in[i] = {high_in[i], rank};
  }
  std::vector<double> min_out(rows), sum_out(rows), calls_out(rows), present_out(rows), flops_out(rows), bytes_out(rows);
  std::vector<ValueRank> loc_out(rows);
  const int n = static_cast<int>(rows);
  PMPI_Reduce(low.data(), min_out.data(), n, MPI_DOUBLE, MPI_MIN, 0, comm);
  PMPI_Reduce(sum_in.data(), sum_out.data(), n, MPI_DOUBLE, MPI_SUM, 0, comm);
  PMPI_Reduce(calls_in.data(), calls_out.data(), n, MPI_DOUBLE, MPI_SUM, 0, comm);
  PMPI_Reduce(present_in.data(), present_out.data(), n, MPI_DOUBLE, MPI_SUM, 0, comm);
  PMPI_Reduce(loc_in.data(), loc_out.data(), n, MPI_DOUBLE_INT, MPI_MAXLOC, 0, comm);
  PMPI_Reduce(flops.data(), flops_out.data(), n, MPI_DOUBLE, MPI_MAX, 0, comm);
  PMPI_Reduce(bytes.data(), bytes_out.data(), n, MPI_DOUBLE, MPI_MAX, 0, comm);

  // Step 3: each rank's row of times and calls, and its machine, at rank 0.
  std::vector<double> all_ms(rank == 0 ? rows * static_cast<std::size_t>(size) : 0);
  std::vector<double> all_calls(all_ms.size());
  PMPI_Gather(ms.data(), n, MPI_DOUBLE, all_ms.data(), n, MPI_DOUBLE, 0, comm);
  PMPI_Gather(calls.data(), n, MPI_DOUBLE, all_calls.data(), n, MPI_DOUBLE, 0, comm);
  char machine[kHostChars + kCpuChars] = {};
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  int host_length = 0;
  PMPI_Get_processor_name(host, &host_length);
  copy_text(machine, kHostChars, host);
  copy_text(machine + kHostChars, kCpuChars, detect_cpu().brand);
  std::vector<char> machines(rank == 0 ? sizeof machine * static_cast<std::size_t>(size) : 0);
  PMPI_Gather(machine, sizeof machine, MPI_CHAR, machines.data(), sizeof machine, MPI_CHAR, 0, comm);
  std::vector<int> threads(rank == 0 ? static_cast<std::size_t>(size) : 0);
  PMPI_Gather(&local.threads, 1, MPI_INT, threads.data(), 1, MPI_INT, 0, comm);
  PMPI_Comm_free(&comm);
  if (rank != 0) return;

  MergedRanks merged;
  merged.made_by = "hwprof::mpi at MPI_Finalize (MPI_Reduce min/max/sum/maxloc over " + std::to_string(size) + " ranks)";
  for (int k = 0; k < size; ++k) {
    const char* m = machines.data() + static_cast<std::size_t>(k) * sizeof machine;
    merged.ranks.push_back({k, size, "", std::string(m, strnlen(m, kHostChars)),
                            std::string(m + kHostChars, strnlen(m + kHostChars, kCpuChars)), "", threads[k]});
  }
  for (std::size_t i = 0; i < rows; ++i) {
    MergedRegion r;
    r.name = i + 1 < rows ? names[i] : "total";
    std::vector<double> present;
    for (int k = 0; k < size; ++k) {
      const std::size_t at = static_cast<std::size_t>(k) * rows + i;
      r.rank_ms.push_back(all_ms[at]);
      r.rank_calls.push_back(all_calls[at]);
      if (std::isfinite(all_ms[at])) present.push_back(all_ms[at]);
    }
    const int count = static_cast<int>(std::lround(present_out[i]));
    r.missing = size - count;
    if (flops_out[i] >= 0) r.flops_per_call = flops_out[i];
    if (bytes_out[i] >= 0) r.bytes_per_call = bytes_out[i];
    if (count > 0) {
      r.min_ms = min_out[i];
      r.max_ms = loc_out[i].value;
      r.straggler = loc_out[i].rank;
      r.mean_ms = sum_out[i] / count;
      r.imbalance = r.max_ms > 0 ? (r.max_ms - r.mean_ms) / r.max_ms : 0.0;
      std::sort(present.begin(), present.end());
      const std::size_t mid = present.size() / 2;
      r.median_ms = present.size() % 2 == 1 ? present[mid] : 0.5 * (present[mid - 1] + present[mid]);
    }
    if (i + 1 < rows) {
      merged.regions.push_back(std::move(r));
    } else {
      merged.total = std::move(r);
    }
  }
  const std::string dir = std::getenv("HWPROF_OUTPUT");
  std::string tried;
  void* symbol = report_module_symbol(kReportModuleMergedEntry, &tried);
  if (symbol == nullptr) {
    std::fprintf(stderr, "hwprof::mpi: no merged report: the report module %s was not found (looked in %s); the ranks' own folders "
                 "are written, and `hwprof merge %s` merges them\n", kReportModuleFile, tried.c_str(), dir.c_str());
    return;
  }
  std::vector<char> message(16384, '\0');
  const int rc = reinterpret_cast<ReportModuleMergedEntry>(symbol)(&merged, HWPROF_VERSION_STRING, dir.c_str(), message.data(), message.size());
  if (rc != 0) {
    std::fprintf(stderr, "hwprof::mpi: no merged report in %s: %s\n", dir.c_str(), message.data());
  } else {
    std::fprintf(stderr, "hwprof::mpi: merged %d ranks into %s/merged.json, merged.txt, merged.html\n", size, dir.c_str());
  }
}

}  // namespace
}  // namespace hwprof::detail

extern "C" __attribute__((visibility("default"))) int MPI_Finalize(void) {
  try {
    hwprof::detail::merge_at_finalize();
  } catch (...) {
    std::fprintf(stderr, "hwprof::mpi: the merge at MPI_Finalize failed (out of memory?); the ranks' own folders are still written\n");
  }
  return PMPI_Finalize();
}
