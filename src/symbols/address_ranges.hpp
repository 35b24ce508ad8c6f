// Address ranges that may overlap, made into pieces that do not: the lookup under the
// symbolizer's mappings and perf map entries (docs/sampling.md, "Symbols"). Where two ranges
// overlap, the later one (the larger index: a later line of a perf map file, a later mapping)
// covers the addresses they share, so the answer never depends on the order of a sort.
#pragma once

#include <cstdint>
#include <vector>
#include "common/stages.hpp"

namespace hwprof::symbols {

// [start, end), and which of the caller's ranges it is (or came from).
struct AddressRange {
  std::uint64_t start = 0;
  std::uint64_t end = 0;
  std::uint32_t index = 0;
};

// Pieces sorted by start that do not overlap, each holding the index of the latest range
// covering it; ranges with end <= start are dropped. O(n log n) time, O(n) memory.
std::vector<AddressRange> latest_wins(const std::vector<AddressRange>& ranges);

// The piece of `pieces` (as latest_wins made them) that holds `address`, or nullptr.
const AddressRange* find_range(const std::vector<AddressRange>& pieces, std::uint64_t address);

}  // namespace hwprof::symbols
