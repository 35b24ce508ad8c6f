#include "placement/sampled_layers.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <unordered_map>
#include <vector>

#include "common/stages.hpp"
#include "placement/code_parts.hpp"

namespace hwprof::placement {
namespace {

// Names interned once each: frame_names is the table the stacks index.
class Names {
 public:
  explicit Names(std::vector<std::string>& table) : table_(table) {}
  int id(const std::string& name) {
    const auto [it, fresh] = ids_.emplace(name, static_cast<int>(table_.size()));
    if (fresh) table_.push_back(name);
    return it->second;
  }

 private:
  std::vector<std::string>& table_;
  std::unordered_map<std::string, int> ids_;
};

// A sample inside a traced pass as an instant on its layer's lane; past the cap, counted.
// Samples come in time order, so the passes are searched from the first that has not ended.
void add_instant(const TraceWindow& window, std::uint64_t time_ns, std::int64_t tid, int row, int leaf, SamplingProfile& out) {
  const auto pass = std::lower_bound(window.passes.begin(), window.passes.end(), time_ns,
                                     [](const std::pair<std::uint64_t, std::uint64_t>& p, std::uint64_t t) { return p.second < t; });
  if (pass == window.passes.end() || time_ns < pass->first || time_ns < window.origin_ns) return;
  if (out.instants.size() >= window.most) {
    ++out.instants_left_out;
    return;
  }
  const int lane = window.lane_of ? window.lane_of(tid) : 0;
  out.instants.push_back({static_cast<double>(time_ns - window.origin_ns) * 1e-3, lane, row, leaf});
}

}  // namespace

// Long: one pass over the samples does the three joins (row, leaf function, stack), each a
// few lines over the same interning tables.
void add_sampled_layers(const SampleStore& samples, int pid, std::span<const RegionSpan> spans, const RowOfRegion& row_of,
                        const NameOfAddress& name_of, std::size_t top, SamplingProfile& out, const TraceWindow* window,
                        std::uint64_t attribute_until_ns) {
  const std::optional<SampledRow> named_outside = row_of(kOutsideRegion);
  const std::string outside_row = named_outside ? named_outside->name : kOutsideEveryLayerRow;
  std::vector<TakenSample> taken;
  std::vector<const SampleRecord*> kept;
  for (const SampleRecord& s : samples.samples()) {
    if (static_cast<int>(s.pid) != pid) continue;
    if (s.time_ns > attribute_until_ns) {
      ++out.timeline_full;
      ++out.samples;
      continue;
    }
    taken.push_back({static_cast<std::int64_t>(s.tid), s.time_ns});
    kept.push_back(&s);
  }
  const std::vector<AttributedSample> attributed = attribute_samples(spans, taken);

  Names names(out.frame_names);
  std::unordered_map<std::uint64_t, int> frame_of_address;  // an address's name id
  std::unordered_map<int, std::string> module_of;           // a name id's module
  std::unordered_map<int, bool> known_id;                   // a name id's address was in a mapping
  const auto frame = [&](std::uint64_t address, FrameContext context) {
    if (context == FrameContext::kernel || context == FrameContext::guest_kernel) return names.id("[kernel]");
    const auto known = frame_of_address.find(address);
    if (known != frame_of_address.end()) return known->second;
    const FrameName n = name_of(address);
    const int id = names.id(n.label);
    module_of.emplace(id, n.module);
    if (out.frame_modules.size() < out.frame_names.size()) out.frame_modules.resize(out.frame_names.size());
    out.frame_modules[static_cast<std::size_t>(id)] = n.module;
    known_id.emplace(id, n.known);
    frame_of_address.emplace(address, id);
    return id;
  };

  std::vector<SampledRow> rows;
  std::unordered_map<int, int> row_of_region;  // region id -> rows index (-1: not a row)
  std::map<std::string, int> row_by_name;
  std::vector<AttributedSample> by_row(attributed.size());
  std::vector<int> leaf(attributed.size(), -1);
  std::map<std::vector<int>, std::uint64_t> stacks;
  for (std::size_t k = 0; k < attributed.size(); ++k) {
    const AttributedSample& a = attributed[k];
    int row = -1;
    if (a.region >= 0) {
      auto [it, fresh] = row_of_region.emplace(a.region, -1);
      if (fresh) {
        if (const auto r = row_of(a.region)) {
          const auto [named, added] = row_by_name.emplace(r->name, static_cast<int>(rows.size()));
          if (added) rows.push_back(*r);
          it->second = named->second;
        }
      }
      row = it->second;
    }
    by_row[k] = {row, row >= 0 ? a.how : a.how == Attribution::ambiguous ? Attribution::ambiguous : Attribution::outside};
    if (row < 0) ++(by_row[k].how == Attribution::ambiguous ? out.ambiguous : out.outside);
    const SampleRecord& s = *kept[k];
    leaf[k] = frame(s.ip, s.ip_context);
    // The stack, root first: the row, then the callers from the outermost to the leaf (the
    // kernel's callchain is leaf first).
    const auto addresses = samples.frames(s);
    const auto contexts = samples.frame_contexts(s);
    // Callers from the leaf outwards, as far as the chain holds: the kernel walks frame
    // pointers, and code built without them (most libraries) leaves garbage beyond the first
    // frame it broke, an address in no mapping. The chain stops there, marked, rather than
    // showing made-up callers. A caller's frame is a return address, the instruction after its
    // call: its function is the one at the address before it.
    std::vector<int> callers;  // leaf first
    bool cut = false;
    for (std::size_t f = 0; f < addresses.size(); ++f) {
      const std::uint64_t address = f > 0 && addresses[f] > 0 ? addresses[f] - 1 : addresses[f];
      const int id = frame(address, f < contexts.size() ? contexts[f] : FrameContext::unknown);
      if (f > 0 && !known_id[id]) {
        cut = true;
        break;
      }
      callers.push_back(id);
    }
    if (callers.empty()) callers.push_back(leaf[k]);
    std::vector<int> stack;
    stack.reserve(callers.size() + 2);
    stack.push_back(names.id(row >= 0 ? rows[static_cast<std::size_t>(row)].name : outside_row));
    if (cut) stack.push_back(names.id("[callers unknown: the frame-pointer chain broke]"));
    for (auto c = callers.rbegin(); c != callers.rend(); ++c) stack.push_back(*c);
    if (row >= 0 && window != nullptr) add_instant(*window, s.time_ns, a.tid, stack.front(), leaf[k], out);
    ++stacks[stack];
  }
  out.frame_modules.resize(out.frame_names.size());
  out.samples += kept.size();
  for (auto& [frames, n] : stacks) out.stacks.push_back({frames, n});

  // Each row's samples by part of the code (the leaf's function and module).
  constexpr std::size_t kParts = static_cast<std::size_t>(CodePart::other) + 1;
  std::unordered_map<int, std::array<std::uint64_t, kParts>> parts_of_row;
  std::unordered_map<int, CodePart> part_of_name;
  for (std::size_t k = 0; k < by_row.size(); ++k) {
    auto [it, fresh] = part_of_name.emplace(leaf[k], CodePart::other);
    if (fresh && leaf[k] >= 0) {
      const auto module = module_of.find(leaf[k]);
      it->second = code_part_of(out.frame_names[static_cast<std::size_t>(leaf[k])], module != module_of.end() ? module->second : "");
    }
    auto& counts = parts_of_row.try_emplace(by_row[k].region).first->second;
    ++counts[static_cast<std::size_t>(it->second)];
  }
  for (const RegionBreakdown& b : break_down(by_row, leaf, top)) {
    SampledLayer l;
    l.name = b.region >= 0 ? rows[static_cast<std::size_t>(b.region)].name : outside_row;
    l.layer = b.region >= 0 ? rows[static_cast<std::size_t>(b.region)].layer : -1;
    l.outside = b.region < 0;
    l.samples = b.samples;
    l.by_pool_workers = b.by_launching_thread;
    l.enough = b.enough;
    l.rest = b.rest;
    for (const FunctionShare& f : b.top) {
      const std::string name = f.function >= 0 ? out.frame_names[static_cast<std::size_t>(f.function)] : "[unknown]";
      const auto module = module_of.find(f.function);
      l.top.push_back({name, module != module_of.end() ? module->second : "", f.share.samples, f.share.share, f.share.low, f.share.high});
    }
    if (const auto counts = parts_of_row.find(b.region); counts != parts_of_row.end()) {
      for (std::size_t p = 0; p < kParts; ++p) {
        if (counts->second[p] == 0) continue;
        const Share sh = share_of(counts->second[p], b.samples);
        l.parts.push_back({std::string(code_part_name(static_cast<CodePart>(p))), sh.samples, sh.share, sh.low, sh.high});
      }
      std::stable_sort(l.parts.begin(), l.parts.end(), [](const SampledPart& x, const SampledPart& y) { return x.samples > y.samples; });
    }
    out.layers.push_back(std::move(l));
  }
  // Most samples first; the row outside every layer last.
  std::stable_sort(out.layers.begin(), out.layers.end(), [&outside_row](const SampledLayer& a, const SampledLayer& b) {
    const bool a_out = a.name == outside_row, b_out = b.name == outside_row;
    if (a_out != b_out) return b_out;
    return a.samples > b.samples;
  });
}

}  // namespace hwprof::placement
