// The one page skeleton and the one stylesheet of every HTML page hwprof writes: the profile's
// report, the comparison of two profiles and the merge of ranks.
#include "report/html_page.hpp"

#include "common/stages.hpp"
#include "report/svg.hpp"

namespace hwprof::report {
namespace {

constexpr const char* kStylesheet = R"CSS(
:root { --ink: #1d232b; --muted: #5c6670; --line: #d9dee3; --compute: #1f5fa8; --memory: #c0392b; --overhead: #8a8a8a; --none: #5b7a99; }
* { box-sizing: border-box; }
body { font: 14px/1.45 "DejaVu Sans", Arial, sans-serif; color: var(--ink); margin: 0; padding: 24px 32px 48px; background: #f6f7f9; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 0 0 10px; }
.sub, .note { color: var(--muted); }
.note { font-size: 12.5px; margin: 6px 0; }
section { background: white; border: 1px solid var(--line); border-radius: 6px; padding: 16px 20px; margin: 16px 0; overflow-x: auto; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap: 16px; }
.cards section { margin: 0; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 3px 16px; margin: 0; }
dt { color: var(--muted); }
dd { margin: 0; }
table { border-collapse: collapse; font-size: 12.5px; }
th, td { padding: 4px 7px; border-bottom: 1px solid var(--line); text-align: left; white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
thead th { position: sticky; top: 0; background: #eef1f4; }
table.sortable thead th { cursor: pointer; user-select: none; }
table.sortable thead th:hover { background: #e1e6eb; }
th[aria-sort="ascending"]::after { content: " ▲"; font-size: 10px; }
th[aria-sort="descending"]::after { content: " ▼"; font-size: 10px; }
tfoot td { font-weight: bold; border-top: 2px solid var(--ink); }
.share { background: linear-gradient(to right, #f2c4bd var(--w), transparent var(--w)); }
.bound { display: inline-block; padding: 0 7px; border-radius: 9px; color: white; font-size: 12px; }
.bound.compute { background: var(--compute); }
.bound.memory { background: var(--memory); }
.bound.overhead { background: var(--overhead); }
.bound.none { background: var(--none); }
.na { color: var(--memory); }
.lowres { color: var(--muted); font-style: italic; }
.worry td:first-child { border-left: 4px solid var(--memory); }
.svg-wrap svg { max-width: 100%; height: auto; }
code { background: #eef1f4; padding: 0 4px; border-radius: 3px; }
.banner { border-left: 5px solid var(--none); }
.banner.warn { border-left-color: #d68910; background: #fff8e6; }
.banner ul, .banner ol { margin: 0; padding-left: 24px; }
.answer { font-size: 16px; margin: 8px 0 0; }
/* The comparison's and the merge's pages: numbers right-aligned, the first column left. */
body.plain td, body.plain th { text-align: right; }
body.plain td:first-child, body.plain th:first-child { text-align: left; }
body.plain .warn { color: #b00020; }
.slower { color: #b00020; font-weight: bold; }
.faster { color: #1b7f3b; font-weight: bold; }
.straggler { font-weight: bold; outline: 1px solid #b00020; }
)CSS";

}  // namespace

std::string html_page_open(std::string_view title, std::string_view body_class) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<title>" + xml_escape(title) + "</title>\n<style>" + std::string(kStylesheet) + "</style>\n</head>\n";
  out += body_class.empty() ? std::string("<body>\n") : "<body class=\"" + xml_escape(body_class) + "\">\n";
  return out;
}

std::string html_page_close(std::string_view script) {
  std::string out;
  if (!script.empty()) out += "<script>" + std::string(script) + "</script>\n";
  return out + "</body>\n</html>\n";
}

}  // namespace hwprof::report
