#include "symbols/address_ranges.hpp"

#include <algorithm>
#include <queue>
#include <utility>
#include "common/stages.hpp"

namespace hwprof::symbols {
namespace {

bool sorted_and_apart(const std::vector<AddressRange>& ranges) {
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    if (ranges[i].end <= ranges[i].start) return false;
    if (i > 0 && ranges[i].start < ranges[i - 1].end) return false;
  }
  return true;
}

}  // namespace

std::vector<AddressRange> latest_wins(const std::vector<AddressRange>& ranges) {
  if (sorted_and_apart(ranges)) return ranges;  // mappings, and most perf maps
  std::vector<AddressRange> order;
  std::vector<std::uint64_t> bounds;
  order.reserve(ranges.size());
  bounds.reserve(2 * ranges.size());
  for (const AddressRange& r : ranges) {
    if (r.end <= r.start) continue;
    order.push_back(r);
    bounds.push_back(r.start);
    bounds.push_back(r.end);
  }
  std::sort(order.begin(), order.end(), [](const AddressRange& a, const AddressRange& b) { return a.start < b.start; });
  std::sort(bounds.begin(), bounds.end());
  bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
  // A sweep over the bounds: between two neighbouring bounds the same ranges are open, and the
  // open range with the largest index covers. Ranges that have ended leave the queue when they
  // reach its top.
  std::priority_queue<std::pair<std::uint32_t, std::uint64_t>> open;  // (index, end)
  std::vector<AddressRange> pieces;
  std::size_t next = 0;
  for (std::size_t b = 0; b + 1 < bounds.size(); ++b) {
    const std::uint64_t from = bounds[b];
    const std::uint64_t to = bounds[b + 1];
    for (; next < order.size() && order[next].start <= from; ++next) open.emplace(order[next].index, order[next].end);
    while (!open.empty() && open.top().second <= from) open.pop();
    if (open.empty()) continue;
    const std::uint32_t index = open.top().first;
    if (!pieces.empty() && pieces.back().end == from && pieces.back().index == index) {
      pieces.back().end = to;
    } else {
      pieces.push_back(AddressRange{from, to, index});
    }
  }
  return pieces;
}

const AddressRange* find_range(const std::vector<AddressRange>& pieces, std::uint64_t address) {
  auto after = std::upper_bound(pieces.begin(), pieces.end(), address, [](std::uint64_t a, const AddressRange& r) { return a < r.start; });
  if (after == pieces.begin()) return nullptr;
  const AddressRange& piece = *(after - 1);
  return address < piece.end ? &piece : nullptr;
}

}  // namespace hwprof::symbols
