#include "report/flamegraph.hpp"

#include <algorithm>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/stages.hpp"
#include "report/svg.hpp"

namespace hwprof::report {
namespace {

std::string folded_name(const std::vector<std::string>& names, int index) {
  if (index < 0 || static_cast<std::size_t>(index) >= names.size() || names[static_cast<std::size_t>(index)].empty()) return "[unknown]";
  std::string name = names[static_cast<std::size_t>(index)];
  for (char& c : name) {
    if (c == ';' || c == '\n' || c == '\r') c = '_';
  }
  return name;
}

// The stacks merged into a tree: a node per distinct path from a root.
struct Node {
  int name = -1;
  std::uint64_t samples = 0;
  std::map<int, std::unique_ptr<Node>> children;  // by name, so that siblings come out in one order
};

Node merge(const std::vector<SampledStack>& stacks) {
  Node root;
  for (const SampledStack& s : stacks) {
    root.samples += s.samples;
    Node* at = &root;
    for (int frame : s.frames) {
      auto& child = at->children[frame];
      if (!child) {
        child = std::make_unique<Node>();
        child->name = frame;
      }
      child->samples += s.samples;
      at = child.get();
    }
  }
  return root;
}

int depth_of(const Node& n) {
  int deepest = 0;
  for (const auto& [name, child] : n.children) deepest = std::max(deepest, 1 + depth_of(*child));
  return deepest;
}

// A warm colour (reds, oranges, yellows, as flame graphs of CPU time use) from the name.
std::string colour(std::string_view name) {
  std::uint32_t h = 2166136261u;  // FNV-1a
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  const int r = 205 + static_cast<int>(h % 50);
  const int g = static_cast<int>((h >> 8) % 180);
  const int b = static_cast<int>((h >> 16) % 55);
  return fmt::format("rgb({},{},{})", r, g, b);
}

constexpr double kRow = 16.0;
constexpr double kTop = 28.0;  // the title's room

void draw(const Node& n, const std::vector<std::string>& names, std::uint64_t total, double x, int level, int levels, double px_per_sample,
          std::string& out) {
  double child_x = x;
  for (const auto& [name, child] : n.children) {
    const double w = static_cast<double>(child->samples) * px_per_sample;
    if (w < 1.0) continue;  // under a pixel: part of the parent's width, not drawn
    const double y = kTop + static_cast<double>(levels - 1 - level) * kRow;
    const std::string label = folded_name(names, child->name);
    const double share = total > 0 ? 100.0 * static_cast<double>(child->samples) / static_cast<double>(total) : 0.0;
    out += fmt::format(
        "<g><title>{} ({} sample{}, {:.1f}%)</title><rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\" rx=\"2\"/>",
        xml_escape(label), child->samples, child->samples == 1 ? "" : "s", share, child_x, y, w, kRow - 1.0, colour(label));
    // As many characters as fit at about 6.5 px each; the rest elided.
    const auto fit = static_cast<std::size_t>(std::max(0.0, (w - 6.0) / 6.5));
    if (fit >= 3) {
      const std::string shown = label.size() <= fit ? label : label.substr(0, fit - 2) + "..";
      out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>", child_x + 3.0, y + kRow - 4.5, xml_escape(shown));
    }
    out += "</g>\n";
    draw(*child, names, total, child_x, level + 1, levels, px_per_sample, out);
    child_x += w;
  }
}

}  // namespace

std::string folded_stacks(const std::vector<std::string>& names, const std::vector<SampledStack>& stacks) {
  std::string out;
  for (const SampledStack& s : stacks) {
    if (s.samples == 0 || s.frames.empty()) continue;
    for (std::size_t i = 0; i < s.frames.size(); ++i) out += (i > 0 ? ";" : "") + folded_name(names, s.frames[i]);
    out += " " + std::to_string(s.samples) + "\n";
  }
  return out;
}

std::string speedscope_json(std::string_view title, const std::vector<std::string>& names, const std::vector<SampledStack>& stacks) {
  using json = nlohmann::ordered_json;
  json frames = json::array();
  for (std::size_t i = 0; i < names.size(); ++i) frames.push_back({{"name", folded_name(names, static_cast<int>(i))}});
  const bool unknown_needed = std::any_of(stacks.begin(), stacks.end(), [&](const SampledStack& s) {
    return std::any_of(s.frames.begin(), s.frames.end(), [&](int f) { return f < 0 || static_cast<std::size_t>(f) >= names.size(); });
  });
  const auto unknown = static_cast<int>(names.size());
  if (unknown_needed) frames.push_back({{"name", "[unknown]"}});
  json samples = json::array(), weights = json::array();
  std::uint64_t total = 0;
  for (const SampledStack& s : stacks) {
    if (s.samples == 0 || s.frames.empty()) continue;
    json stack = json::array();
    for (int f : s.frames) stack.push_back(f < 0 || static_cast<std::size_t>(f) >= names.size() ? unknown : f);
    samples.push_back(std::move(stack));
    weights.push_back(s.samples);
    total += s.samples;
  }
  json doc = {{"$schema", "https://www.speedscope.app/file-format-schema.json"},
              {"shared", {{"frames", std::move(frames)}}},
              {"profiles", json::array({{{"type", "sampled"},
                                         {"name", std::string(title)},
                                         {"unit", "none"},
                                         {"startValue", 0},
                                         {"endValue", total},
                                         {"samples", std::move(samples)},
                                         {"weights", std::move(weights)}}})},
              {"name", std::string(title)},
              {"activeProfileIndex", 0},
              {"exporter", "hwprof"}};
  return doc.dump() + "\n";
}

std::string flamegraph_svg(std::string_view title, const std::vector<std::string>& names, const std::vector<SampledStack>& stacks, double width,
                           bool standalone) {
  const Node root = merge(stacks);
  const int levels = std::max(1, depth_of(root));
  const double height = kTop + static_cast<double>(levels) * kRow + 8.0;
  std::string out = svg_open(width, height, standalone);
  out += "<style>text{font:11px sans-serif;fill:#000}</style>\n";
  out += fmt::format("<text x=\"{:.1f}\" y=\"18\" text-anchor=\"middle\" style=\"font-size:14px\">{}</text>\n", width / 2.0,
                     xml_escape(fmt::format("{} ({} sample{})", title, root.samples, root.samples == 1 ? "" : "s")));
  if (root.samples > 0) draw(root, names, root.samples, 0.0, 0, levels, (width - 1.0) / static_cast<double>(root.samples), out);
  out += "</svg>\n";
  return out;
}

}  // namespace hwprof::report
