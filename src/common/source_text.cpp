// SourceText::locate: finds where a JSON pointer's value starts in the spec text, so that
// messages can say "file:line:column". nlohmann::json 3.11 keeps no positions, and looking
// up only on the error path keeps parsing at full speed.
#include <cstddef>
#include <string>
#include <string_view>

#include "common/text_position.hpp"
#include "hwprof/source_text.hpp"

namespace hwprof {
namespace {

class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text) {}

  std::size_t skip_ws(std::size_t pos) const {
    while (pos < text_.size() && (text_[pos] == ' ' || text_[pos] == '\t' || text_[pos] == '\n' || text_[pos] == '\r')) ++pos;
    return pos;
  }

  // pos at an opening quote; returns the position after the closing quote and the decoded
  // string (escapes other than \uXXXX kept as their character; \uXXXX kept verbatim, which
  // is enough to match the plain keys of a model spec).
  std::size_t read_string(std::size_t pos, std::string* out) const {
    ++pos;
    while (pos < text_.size() && text_[pos] != '"') {
      if (text_[pos] == '\\' && pos + 1 < text_.size()) {
        const char e = text_[pos + 1];
        if (out) {
          switch (e) {
            case 'n':
              *out += '\n';
              break;
            case 't':
              *out += '\t';
              break;
            case 'r':
              *out += '\r';
              break;
            case 'b':
              *out += '\b';
              break;
            case 'f':
              *out += '\f';
              break;
            case 'u':
              *out += "\\u";
              break;
            default:
              *out += e;
          }
        }
        pos += 2;
      } else {
        if (out) *out += text_[pos];
        ++pos;
      }
    }
    return pos < text_.size() ? pos + 1 : pos;
  }

  // Skips one value starting at pos (after white space); iterative, so depth costs no stack.
  std::size_t skip_value(std::size_t pos) const {
    pos = skip_ws(pos);
    if (pos >= text_.size()) return pos;
    if (text_[pos] == '"') return read_string(pos, nullptr);
    if (text_[pos] != '{' && text_[pos] != '[') {
      while (pos < text_.size() && text_[pos] != ',' && text_[pos] != '}' && text_[pos] != ']' && text_[pos] != ' ' && text_[pos] != '\n' &&
             text_[pos] != '\r' && text_[pos] != '\t') {
        ++pos;
      }
      return pos;
    }
    std::size_t depth = 0;
    while (pos < text_.size()) {
      const char c = text_[pos];
      if (c == '"') {
        pos = read_string(pos, nullptr);
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      if (c == '}' || c == ']') {
        if (--depth == 0) return pos + 1;
      }
      ++pos;
    }
    return pos;
  }

  // Position of the value of member `key` of the object at pos, or npos; `key_pos` gets the
  // position of the key itself.
  std::size_t member(std::size_t pos, const std::string& key, std::size_t* key_pos) const {
    pos = skip_ws(pos);
    if (pos >= text_.size() || text_[pos] != '{') return std::string_view::npos;
    pos = skip_ws(pos + 1);
    while (pos < text_.size() && text_[pos] == '"') {
      std::string name;
      const std::size_t name_pos = pos;
      pos = skip_ws(read_string(pos, &name));
      if (pos >= text_.size() || text_[pos] != ':') return std::string_view::npos;
      const std::size_t value = skip_ws(pos + 1);
      if (name == key) {
        *key_pos = name_pos;
        return value;
      }
      pos = skip_ws(skip_value(value));
      if (pos < text_.size() && text_[pos] == ',') pos = skip_ws(pos + 1);
    }
    return std::string_view::npos;
  }

  // Position of element `index` of the array at pos, or npos.
  std::size_t element(std::size_t pos, std::size_t index) const {
    pos = skip_ws(pos);
    if (pos >= text_.size() || text_[pos] != '[') return std::string_view::npos;
    pos = skip_ws(pos + 1);
    for (std::size_t i = 0; pos < text_.size() && text_[pos] != ']'; ++i) {
      if (i == index) return pos;
      pos = skip_ws(skip_value(pos));
      if (pos < text_.size() && text_[pos] == ',') pos = skip_ws(pos + 1);
    }
    return std::string_view::npos;
  }

 private:
  std::string_view text_;
};

std::string unescape_token(std::string_view token) {
  std::string out;
  for (std::size_t i = 0; i < token.size(); ++i) {
    if (token[i] == '~' && i + 1 < token.size()) {
      out += token[i + 1] == '1' ? '/' : '~';
      ++i;
    } else {
      out += token[i];
    }
  }
  return out;
}

}  // namespace

SourceText::SourceText(std::string file, std::string text) : file_(std::move(file)), text_(std::make_shared<const std::string>(std::move(text))) {}

std::string SourceText::locate(std::string_view pointer, bool key) const {
  if (!text_ || text_->empty()) return file_;  // no text to point into (an imported ONNX model)
  const Scanner scanner(*text_);
  std::size_t pos = scanner.skip_ws(0);
  std::size_t start = 0;
  while (start < pointer.size() && pointer[start] == '/') {
    std::size_t end = pointer.find('/', start + 1);
    if (end == std::string_view::npos) end = pointer.size();
    const std::string token = unescape_token(pointer.substr(start + 1, end - start - 1));
    std::size_t next = std::string_view::npos;
    std::size_t key_pos = std::string_view::npos;
    if (pos < text_->size() && (*text_)[pos] == '[') {
      std::size_t index = 0;
      bool numeric = !token.empty() && token.size() < 19;
      for (char c : token) numeric = numeric && c >= '0' && c <= '9';
      if (numeric) {
        index = std::stoull(token);
        next = scanner.element(pos, index);
      }
    } else {
      next = scanner.member(pos, token, &key_pos);
    }
    if (next == std::string_view::npos) break;  // the nearest existing ancestor
    pos = key && end == pointer.size() && key_pos != std::string_view::npos ? key_pos : next;
    start = end;
  }
  return file_ + ":" + common::line_column(*text_, pos);
}

}  // namespace hwprof
