#include "placement/process_samples.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/stages.hpp"
#include "symbols/symbols.hpp"

namespace hwprof::placement {

SamplingProfile sampling_of_process(const ProcessSamples& taken, std::span<const RegionSpan> spans, const RowOfRegion& row_of) {
  SamplingProfile out;
  out.spec = taken.spec;
  out.rate = taken.stats->rate;
  out.lost = taken.stats->lost;
  out.throttled = taken.stats->throttled;
  out.dropped = taken.stats->dropped;
  out.warnings = taken.warnings;
  out.timeline_calls = taken.timeline_calls;
  auto symbolizer = symbolizer_for_process(taken.pid);
  if (!symbolizer) out.warnings.push_back("sampled addresses are not named: " + symbolizer.error().message);
  const NameOfAddress name_of = [&](std::uint64_t address) -> FrameName {
    if (!symbolizer) return {fmt::format("[unknown] 0x{:x}", address), "", false};
    return frame_name_of(symbolizer->resolve(address));
  };
  add_sampled_layers(*taken.store, taken.pid, spans, row_of, name_of, 5, out, taken.window, taken.attribute_until_ns);
  if (symbolizer) {
    for (const std::string& w : symbolizer->warnings()) out.warnings.push_back(w);
  }
  if (const std::string hint = anonymous_code_hint(out); !hint.empty()) out.warnings.push_back(hint);
  return out;
}

FrameName frame_name_of(const Symbol& sym) {
  // Code no symbol covers (a stripped library's internal functions: libgomp's barrier wait)
  // is one row per module, not one per instruction address, which would split its share.
  if (sym.source == SymbolSource::module_offset) return {sym.module + " [no symbol]", sym.module, true};
  // Anonymous executable memory no perf map entry covers: code generated at run time (oneDNN's
  // kernels under PyTorch), one row rather than one per address.
  if (sym.source == SymbolSource::unknown && !sym.module.empty()) return {std::string(kAnonymousCodeFrame), sym.module, false};
  return {symbol_label(sym), sym.module, sym.source != SymbolSource::unknown};
}

std::string anonymous_code_hint(const SamplingProfile& s) {
  const auto anonymous = std::find(s.frame_names.begin(), s.frame_names.end(), kAnonymousCodeFrame);
  if (anonymous == s.frame_names.end() || s.samples == 0) return "";
  const int id = static_cast<int>(anonymous - s.frame_names.begin());
  std::uint64_t n = 0;
  for (const SampledStackRow& r : s.stacks) {
    if (!r.frames.empty() && r.frames.back() == id) n += r.samples;
  }
  const double share = static_cast<double>(n) / static_cast<double>(s.samples);
  if (share < 0.01) return "";
  return fmt::format(
      "{} samples ({:.0f}%) landed in anonymous executable memory without a perf map entry: code generated at run time (oneDNN's "
      "kernels, under PyTorch); set ONEDNN_JIT_PROFILE=2 so that oneDNN writes /tmp/perf-PID.map and they are named",
      n, 100.0 * share);
}

std::uint64_t timeline_full_since(const SessionSnapshot& snapshot, std::span<const RegionSpan> spans) {
  if (snapshot.timeline_dropped == 0) return std::numeric_limits<std::uint64_t>::max();
  // The timeline keeps calls in the order they end: past the last end it holds, a call ended
  // that it does not, and so may any region open then.
  std::uint64_t last = 0;
  for (const RegionSpan& s : spans) last = std::max(last, s.end_ns);
  return last;
}

}  // namespace hwprof::placement
