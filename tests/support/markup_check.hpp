// A small, strict reader of the markup the reports write (SVG as XML, and HTML5 as the
// report writes it), so that tests need no parser library: every tag closes in order,
// attributes are quoted and unique, text holds no raw '<' and only known entities. It keeps
// each element's name, attributes and decoded text for the tests to inspect.
#pragma once

#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace hwprof::test {

struct Element {
  std::string name;
  std::map<std::string, std::string> attributes;  // values decoded
  std::string text;                               // the element's own text, decoded
  int depth = 0;
  std::vector<std::string> ancestors;  // outermost first
};

struct Markup {
  std::vector<Element> elements;  // in document order
  std::string problem;            // empty when the document is well formed
  bool ok() const { return problem.empty(); }
  std::vector<const Element*> all(const std::string& name) const {
    std::vector<const Element*> out;
    for (const Element& e : elements) {
      if (e.name == name) out.push_back(&e);
    }
    return out;
  }
};

enum class Dialect { xml, html };

namespace markup_detail {

inline bool decode_entities(std::string_view raw, std::string* out) {
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] != '&') {
      *out += raw[i];
      continue;
    }
    const std::size_t semi = raw.find(';', i);
    if (semi == std::string_view::npos || semi - i > 10) return false;
    const std::string_view name = raw.substr(i + 1, semi - i - 1);
    if (name == "amp") {
      *out += '&';
    } else if (name == "lt") {
      *out += '<';
    } else if (name == "gt") {
      *out += '>';
    } else if (name == "quot") {
      *out += '"';
    } else if (name == "apos") {
      *out += '\'';
    } else if (name.size() > 1 && name[0] == '#') {
      const bool hex = name[1] == 'x';
      const std::string digits(name.substr(hex ? 2 : 1));
      if (digits.empty()) return false;
      for (char c : digits) {
        if (!(hex ? std::isxdigit(static_cast<unsigned char>(c)) : std::isdigit(static_cast<unsigned char>(c)))) return false;
      }
      const unsigned long code = std::stoul(digits, nullptr, hex ? 16 : 10);
      if (code < 0x80) {
        *out += static_cast<char>(code);
      } else {
        *out += '?';  // tests only compare ASCII
      }
    } else {
      return false;
    }
    i = semi;
  }
  return true;
}

inline bool name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':' || c == '.';
}

}  // namespace markup_detail

inline Markup parse_markup(std::string_view doc, Dialect dialect) {
  using namespace markup_detail;
  static const std::set<std::string> kVoid = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"};
  Markup m;
  std::vector<std::size_t> open;  // indices into m.elements
  const auto fail = [&](std::size_t pos, const std::string& what) {
    std::size_t line = 1;
    for (std::size_t i = 0; i < pos && i < doc.size(); ++i) line += doc[i] == '\n';
    m.problem = "line " + std::to_string(line) + ": " + what;
    return m;
  };
  std::size_t i = 0;
  while (i < doc.size()) {
    if (doc[i] != '<') {
      const std::size_t next = doc.find('<', i);
      const std::string_view raw = doc.substr(i, (next == std::string_view::npos ? doc.size() : next) - i);
      std::string text;
      if (!decode_entities(raw, &text)) return fail(i, "a raw '&' or an unknown entity in text");
      if (raw.find('>') != std::string_view::npos && dialect == Dialect::xml) return fail(i, "a raw '>' in text");
      if (!open.empty()) {
        m.elements[open.back()].text += text;
      } else if (text.find_first_not_of(" \t\r\n") != std::string::npos) {
        return fail(i, "text outside the root element");
      }
      i = next == std::string_view::npos ? doc.size() : next;
      continue;
    }
    if (doc.substr(i, 4) == "<!--") {
      const std::size_t end = doc.find("-->", i + 4);
      if (end == std::string_view::npos) return fail(i, "an unclosed comment");
      i = end + 3;
      continue;
    }
    if (doc.substr(i, 2) == "<?" || doc.substr(i, 2) == "<!") {
      if (!m.elements.empty()) return fail(i, "a declaration after the root element started");
      const std::size_t end = doc.find('>', i);
      if (end == std::string_view::npos) return fail(i, "an unclosed declaration");
      i = end + 1;
      continue;
    }
    if (doc.substr(i, 2) == "</") {
      std::size_t j = i + 2;
      while (j < doc.size() && name_char(doc[j])) ++j;
      const std::string name(doc.substr(i + 2, j - i - 2));
      while (j < doc.size() && std::isspace(static_cast<unsigned char>(doc[j]))) ++j;
      if (j >= doc.size() || doc[j] != '>') return fail(i, "a malformed end tag");
      if (open.empty() || m.elements[open.back()].name != name) {
        return fail(i, "</" + name + "> closes " + (open.empty() ? std::string("nothing") : "<" + m.elements[open.back()].name + ">"));
      }
      open.pop_back();
      i = j + 1;
      continue;
    }
    // A start tag.
    std::size_t j = i + 1;
    while (j < doc.size() && name_char(doc[j])) ++j;
    if (j == i + 1) return fail(i, "a raw '<' in text");
    Element e;
    e.name = std::string(doc.substr(i + 1, j - i - 1));
    e.depth = static_cast<int>(open.size());
    for (std::size_t k : open) e.ancestors.push_back(m.elements[k].name);
    bool self_closing = false;
    for (;;) {
      while (j < doc.size() && std::isspace(static_cast<unsigned char>(doc[j]))) ++j;
      if (j >= doc.size()) return fail(i, "an unclosed start tag <" + e.name + ">");
      if (doc[j] == '>') {
        ++j;
        break;
      }
      if (doc.substr(j, 2) == "/>") {
        self_closing = true;
        j += 2;
        break;
      }
      const std::size_t name_start = j;
      while (j < doc.size() && name_char(doc[j])) ++j;
      if (j == name_start) return fail(j, "a malformed attribute in <" + e.name + ">");
      const std::string attribute(doc.substr(name_start, j - name_start));
      if (j >= doc.size() || doc[j] != '=') return fail(j, "attribute " + attribute + " of <" + e.name + "> has no quoted value");
      ++j;
      if (j >= doc.size() || (doc[j] != '"' && doc[j] != '\'')) return fail(j, "attribute " + attribute + " is not quoted");
      const char quote = doc[j];
      const std::size_t close = doc.find(quote, j + 1);
      if (close == std::string_view::npos) return fail(j, "an unterminated attribute value");
      const std::string_view raw = doc.substr(j + 1, close - j - 1);
      if (raw.find('<') != std::string_view::npos) return fail(j, "a raw '<' in attribute " + attribute);
      std::string value;
      if (!decode_entities(raw, &value)) return fail(j, "a raw '&' in attribute " + attribute);
      if (!e.attributes.emplace(attribute, value).second) return fail(j, "attribute " + attribute + " given twice");
      j = close + 1;
    }
    const std::size_t index = m.elements.size();
    const bool is_void = dialect == Dialect::html && kVoid.count(e.name) > 0;
    const bool raw_text = dialect == Dialect::html && (e.name == "script" || e.name == "style");
    m.elements.push_back(std::move(e));
    if (!self_closing && !is_void) open.push_back(index);
    i = j;
    if (raw_text && !self_closing) {
      const std::string end_tag = "</" + m.elements[index].name;
      const std::size_t end = doc.find(end_tag, i);
      if (end == std::string_view::npos) return fail(i, "an unclosed <" + m.elements[index].name + ">");
      m.elements[index].text = std::string(doc.substr(i, end - i));
      i = end;
    }
  }
  if (!open.empty()) return fail(doc.size(), "<" + m.elements[open.back()].name + "> is never closed");
  if (m.elements.empty()) return fail(0, "no element at all");
  return m;
}

}  // namespace hwprof::test
