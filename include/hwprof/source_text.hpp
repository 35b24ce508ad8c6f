// The text of an input file (a model spec, a machine report, a profile) kept beside what was
// parsed from it, so that a message about a value can say "file:line:column": a JSON pointer
// is mapped back to where its value starts in the text, on the error path only.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "hwprof/export.hpp"

HWPROF_API_BEGIN
namespace hwprof {

class SourceText {
 public:
  SourceText() = default;
  SourceText(std::string file, std::string text);
  const std::string& file() const noexcept { return file_; }
  // "file:line:col" of the value at `pointer`, or of its nearest existing ancestor; with
  // `key`, of the member's key rather than its value (for unknown or duplicate keys).
  std::string locate(std::string_view pointer, bool key = false) const;

 private:
  std::string file_;
  std::shared_ptr<const std::string> text_;
};

}  // namespace hwprof
HWPROF_API_END
