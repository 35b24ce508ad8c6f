// The report's "Where inside the layers" section (docs/sampling.md, "Outputs"). The stacks go
// into the page once, compactly, as data-* attributes (a names table and each distinct stack
// as [samples, frame, ...]), and the script draws the flame graph of the layer chosen: one SVG
// per layer would repeat every stack's frames in markup, several times the size.
#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/stages.hpp"
#include "report/sampling_outputs.hpp"
#include "report/svg.hpp"

namespace hwprof::report {
namespace {

constexpr std::size_t kLongestShownFunction = 90;

// A function's name as a cell: the whole name in the tooltip where the cell shortens it.
std::string sampling_function_cell(const std::string& name) {
  if (name.size() <= kLongestShownFunction) return "<td>" + xml_escape(name) + "</td>";
  return fmt::format("<td title=\"{}\">{}…</td>", xml_escape(name), xml_escape(name.substr(0, kLongestShownFunction - 1)));
}

std::string sampling_percent(double share) {
  return fmt::format("{:.1f}%", 100.0 * share);
}

std::string sampling_top_table(const SampledLayer& l, std::size_t index) {
  std::string out = fmt::format(
      "<table id=\"flame-top-{}\" hidden=\"hidden\"><caption class=\"note\">{}: {} samples "
      "(measured){}</caption><thead><tr><th>Function</th><th>Module</th>"
      "<th class=\"num\">Samples</th><th class=\"num\">Share</th><th class=\"num\">95 % interval</th></tr></thead><tbody>\n",
      index, xml_escape(l.name), l.samples, l.by_pool_workers > 0 ? fmt::format(", {} of them on pool workers", l.by_pool_workers) : "");
  if (!l.enough) {
    return out + fmt::format("<tr><td colspan=\"5\" class=\"lowres\">too few samples to say (fewer than 30)</td></tr>\n</tbody></table>\n");
  }
  for (const SampledFunction& f : l.top) {
    out += "<tr>" + sampling_function_cell(f.function) + "<td>" + xml_escape(f.module) + "</td>";
    out += fmt::format("<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}–{}</td></tr>\n", f.samples, sampling_percent(f.share),
                       sampling_percent(f.low), sampling_percent(f.high));
  }
  if (l.rest > 0)
    out += fmt::format("<tr><td class=\"lowres\">[other functions]</td><td></td><td class=\"num\">{}</td><td></td><td></td></tr>\n", l.rest);
  return out + "</tbody></table>\n";
}

// The attribute texts: names, modules and stacks as JSON (escaped for an attribute).
std::string sampling_data_attributes(const SamplingProfile& s) {
  nlohmann::json stacks = nlohmann::json::array();
  for (const SampledStackRow& r : s.stacks) {
    nlohmann::json row = nlohmann::json::array({r.samples});
    for (int f : r.frames) row.push_back(f);
    stacks.push_back(std::move(row));
  }
  const auto text = [](const nlohmann::json& j) { return xml_escape(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)); };
  return fmt::format(" data-names=\"{}\" data-modules=\"{}\" data-stacks=\"{}\"", text(s.frame_names), text(s.frame_modules), text(stacks));
}

}  // namespace

std::string sampling_html_section(const Profile& p) {
  if (!p.sampling) return "";
  const SamplingProfile& s = *p.sampling;
  std::string out = "<section id=\"sampling\"><h2>Where inside the layers</h2>\n";
  out += fmt::format(
      "<p class=\"note\">Sampled ({}, {}): {} samples on {} of {} measured passes (measured). A frame is as wide as its share of the samples, its "
      "callees above it; the layer is the root. Shares are of the layer's samples, with their 95 % interval; pool workers' samples go to the "
      "layer their launching thread was in.</p>\n",
      xml_escape(s.spec), xml_escape(s.rate), s.samples, s.sampled_passes, s.sampled_passes + s.unsampled_passes);
  if (s.stacks.empty()) {
    out += s.samples == 0 ? "<p class=\"na\">No samples were taken.</p>\n"
                          : "<p class=\"na\">The stacks are not in this profile.json (written before hwprof kept them): the flame graph "
                            "cannot be drawn; the functions per layer are below.</p>\n";
  }
  out += "<p><label for=\"flame-layer\">Layer </label><select id=\"flame-layer\">";
  std::uint64_t in_layers = 0;
  for (const SampledLayer& l : s.layers) in_layers += l.samples;
  out += fmt::format("<option value=\"all\" data-root=\"-1\">all layers ({} samples)</option>", in_layers);
  for (std::size_t i = 0; i < s.layers.size(); ++i) {
    const SampledLayer& l = s.layers[i];
    const auto named = std::find(s.frame_names.begin(), s.frame_names.end(), l.name);
    const long root = named == s.frame_names.end() ? -1 : static_cast<long>(named - s.frame_names.begin());
    out += fmt::format("<option value=\"{}\" data-root=\"{}\">{} ({} samples)</option>", i, root, xml_escape(l.name), l.samples);
  }
  out += "</select></p>\n";
  out += "<div id=\"flame\" class=\"svg-wrap\"" + sampling_data_attributes(s) + "></div>\n";
  out +=
      "<p id=\"flame-detail\" class=\"note\" aria-live=\"polite\">Hover over or focus (Tab) a frame for its name, module, samples and share.</p>\n";
  out += "<p id=\"flame-top-all\" class=\"note\">Choose a layer for its top functions.</p>\n";
  for (std::size_t i = 0; i < s.layers.size(); ++i) out += sampling_top_table(s.layers[i], i);
  return out + "</section>\n";
}

// The flame graph drawn from the section's data-* attributes: the stacks of the chosen layer
// (all of them for "all layers") merged into a tree, roots along the bottom, frames under a
// pixel left to their parent, colours by the name's hash as flamegraph.svg chooses them.
// data-drawn on the box says what was drawn (the browser test reads it).
// Long: one raw string of JavaScript, a page's script read top to bottom.
std::string_view sampling_html_script() {
  return R"JS(
(function () {
  'use strict';
  var box = document.getElementById('flame');
  var select = document.getElementById('flame-layer');
  if (!box || !select) return;
  var names = JSON.parse(box.getAttribute('data-names') || '[]');
  var modules = JSON.parse(box.getAttribute('data-modules') || '[]');
  var stacks = JSON.parse(box.getAttribute('data-stacks') || '[]');
  var detail = document.getElementById('flame-detail');
  var NS = 'http://www.w3.org/2000/svg';
  var WIDTH = 1200, ROW = 16;
  var encoder = new TextEncoder();
  function colour(name) {
    var h = 2166136261, bytes = encoder.encode(name);
    for (var i = 0; i < bytes.length; ++i) h = Math.imul(h ^ bytes[i], 16777619) >>> 0;
    return 'rgb(' + (205 + h % 50) + ',' + ((h >>> 8) % 180) + ',' + ((h >>> 16) % 55) + ')';
  }
  function tree(root) {
    var top = { frame: -1, samples: 0, children: new Map() };
    stacks.forEach(function (s) {
      if (root !== -1 && s[1] !== root) return;
      var n = top;
      n.samples += s[0];
      for (var i = 1; i < s.length; ++i) {
        var c = n.children.get(s[i]);
        if (!c) { c = { frame: s[i], samples: 0, children: new Map() }; n.children.set(s[i], c); }
        c.samples += s[0];
        n = c;
      }
    });
    return top;
  }
  function sorted(n) {
    return Array.from(n.children.values()).sort(function (a, b) {
      var x = names[a.frame] || '', y = names[b.frame] || '';
      return x < y ? -1 : (x > y ? 1 : 0);
    });
  }
  function depth(n, px) {
    var d = 0;
    n.children.forEach(function (c) { if (c.samples * px >= 1) d = Math.max(d, 1 + depth(c, px)); });
    return d;
  }
  function describe(c, total) {
    var name = names[c.frame] || '[unknown]', module = modules[c.frame] || '';
    return name + (module ? ' — ' + module : '') + ' (' + c.samples + ' sample' + (c.samples === 1 ? '' : 's') + ', ' +
      (100 * c.samples / total).toFixed(1) + '%)';
  }
  function draw(root) {
    var top = tree(root);
    while (box.firstChild) box.removeChild(box.firstChild);
    var frames = 0;
    if (top.samples > 0) {
      var px = WIDTH / top.samples, levels = depth(top, px), height = levels * ROW + 2;
      var svg = document.createElementNS(NS, 'svg');
      svg.setAttribute('viewBox', '0 0 ' + WIDTH + ' ' + height);
      svg.setAttribute('width', WIDTH);
      svg.setAttribute('height', height);
      svg.setAttribute('role', 'img');
      svg.setAttribute('font-size', '11');
      var place = function (n, x, level) {
        sorted(n).forEach(function (c) {
          var w = c.samples * px;
          if (w < 1) return;
          var text = describe(c, top.samples), name = names[c.frame] || '[unknown]';
          var g = document.createElementNS(NS, 'g');
          var title = document.createElementNS(NS, 'title');
          title.textContent = text;
          g.appendChild(title);
          var rect = document.createElementNS(NS, 'rect');
          rect.setAttribute('x', x.toFixed(1));
          rect.setAttribute('y', ((levels - 1 - level) * ROW).toFixed(1));
          rect.setAttribute('width', w.toFixed(1));
          rect.setAttribute('height', ROW - 1);
          rect.setAttribute('rx', 2);
          rect.setAttribute('fill', colour(name));
          g.appendChild(rect);
          var fit = Math.floor((w - 6) / 6.5);
          if (fit >= 3) {
            var label = document.createElementNS(NS, 'text');
            label.setAttribute('x', (x + 3).toFixed(1));
            label.setAttribute('y', ((levels - 1 - level) * ROW + 11.5).toFixed(1));
            label.textContent = name.length <= fit ? name : name.slice(0, fit - 2) + '..';
            g.appendChild(label);
            g.setAttribute('tabindex', '0');
            g.setAttribute('aria-label', text);
          }
          var show = function () { if (detail) detail.textContent = text; };
          g.addEventListener('mouseover', show);
          g.addEventListener('focus', show);
          svg.appendChild(g);
          ++frames;
          place(c, x, level + 1);
          x += w;
        });
      };
      place(top, 0, 0);
      box.appendChild(svg);
    }
    var chosen = select.options[select.selectedIndex];
    box.setAttribute('data-drawn', chosen.value + ':' + frames + ':' + top.samples);
  }
  function choose() {
    var chosen = select.options[select.selectedIndex];
    var root = Number(chosen.getAttribute('data-root'));
    draw(chosen.value !== 'all' && root < 0 ? -2 : root);  // a row without stacks draws nothing
    Array.prototype.forEach.call(select.options, function (o) {
      var t = document.getElementById('flame-top-' + o.value);
      if (t) t.hidden = o !== chosen;
    });
  }
  select.addEventListener('change', choose);
  choose();
})();
)JS";
}

}  // namespace hwprof::report
