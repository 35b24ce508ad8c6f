#include "profile/span_file_reader.hpp"

#include <charconv>
#include <limits>
#include <optional>
#include <unordered_set>

#include "common/input_file.hpp"
#include "common/stages.hpp"
#include "session/span_file.hpp"

namespace hwprof::profile {
namespace {

// The fields of one line, split at single spaces (an empty field is an error of the caller's).
std::vector<std::string_view> span_line_fields(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t space = line.find(' ', start);
    out.push_back(line.substr(start, space == std::string_view::npos ? std::string_view::npos : space - start));
    if (space == std::string_view::npos) return out;
    start = space + 1;
  }
}

// A decimal without a sign, leading '+' or spaces, at most `most`.
std::optional<std::uint64_t> span_file_unsigned(std::string_view field, std::uint64_t most) {
  if (field.empty() || field.front() < '0' || field.front() > '9') return std::nullopt;
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (error != std::errc() || end != field.data() + field.size() || value > most) return std::nullopt;
  return value;
}

// %HH back to its byte; nullopt where a '%' is not followed by two hex digits.
std::optional<std::string> span_file_name(std::string_view field) {
  std::string out;
  out.reserve(field.size());
  for (std::size_t i = 0; i < field.size(); ++i) {
    if (field[i] != '%') {
      out += field[i];
      continue;
    }
    unsigned value = 0;
    if (i + 2 >= field.size()) return std::nullopt;
    const auto [end, error] = std::from_chars(field.data() + i + 1, field.data() + i + 3, value, 16);
    if (error != std::errc() || end != field.data() + i + 3) return std::nullopt;
    out += static_cast<char>(value);
    i += 2;
  }
  return out;
}

class SpanFileParser {
 public:
  SpanFileParser(const std::string& path, const SpanFileLimits& limits) : path_(path), limits_(limits) {}

  Result<RecordedSpans> parse(std::string_view text) {
    if (text.size() > limits_.max_bytes) return fail(0, "the file is larger than " + std::to_string(limits_.max_bytes) + " bytes");
    std::size_t at = 0;
    bool ended = false;
    while (at < text.size()) {
      const std::size_t newline = text.find('\n', at);
      if (newline == std::string_view::npos) return fail(line_ + 1, "the last line has no line break: the file was cut short");
      ++line_;
      if (ended) return fail(line_, "a line after 'end'");
      if (auto error = line(text.substr(at, newline - at), ended)) return *error;
      at = newline + 1;
    }
    if (line_ == 0) return fail(0, "the file is empty");
    if (!ended) return fail(line_, "no 'end' line: the file was cut short");
    return std::move(out_);
  }

 private:
  Error fail(std::size_t line, const std::string& problem) const {
    return Error{path_ + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " + problem +
                 " (a span file of hwprof record; the program's regions are not attributed)"};
  }

  std::optional<Error> line(std::string_view text, bool& ended) {
    if (line_ == 1) {
      if (text != kSpanFileMagic) return fail(line_, "not a span file: expected '" + std::string(kSpanFileMagic) + "'");
      return std::nullopt;
    }
    const std::vector<std::string_view> f = span_line_fields(text);
    const std::string_view kind = f.front();
    const auto count = [&](std::size_t n) -> std::optional<Error> {
      if (f.size() != n)
        return fail(line_, "'" + std::string(kind) + "' takes " + std::to_string(n - 1) + " fields, this line has " + std::to_string(f.size() - 1));
      return std::nullopt;
    };
    const auto number = [&](std::size_t i, std::uint64_t most, const char* what) -> std::optional<std::uint64_t> {
      const auto value = span_file_unsigned(f[i], most);
      if (!value)
        bad_ = fail(line_, std::string(what) + " '" + std::string(f[i].substr(0, 32)) + "' is not a number from 0 to " + std::to_string(most));
      return value;
    };
    if (kind == "pid") {
      if (auto e = count(2)) return e;
      const auto pid = number(1, std::numeric_limits<std::int32_t>::max(), "the pid");
      if (!pid) return bad_;
      out_.pid = static_cast<long>(*pid);
      return std::nullopt;
    }
    if (kind == "timeline_dropped") {
      if (auto e = count(2)) return e;
      const auto n = number(1, std::numeric_limits<std::uint64_t>::max(), "timeline_dropped");
      if (!n) return bad_;
      out_.timeline_dropped = *n;
      return std::nullopt;
    }
    if (kind == "region") return region(f, count);
    if (kind == "span") return span(count, number);
    if (kind == "end") {
      if (auto e = count(3)) return e;
      const auto regions = number(1, std::numeric_limits<std::uint64_t>::max(), "the region count");
      const auto spans = regions ? number(2, std::numeric_limits<std::uint64_t>::max(), "the span count") : std::nullopt;
      if (!spans) return bad_;
      if (*regions != out_.regions.size() || *spans != out_.spans.size())
        return fail(line_, "'end' counts " + std::to_string(*regions) + " regions and " + std::to_string(*spans) + " spans, the file has " +
                               std::to_string(out_.regions.size()) + " and " + std::to_string(out_.spans.size()));
      if (out_.pid <= 0) return fail(line_, "no 'pid' line");
      ended = true;
      return std::nullopt;
    }
    return fail(line_, "unknown line '" + std::string(kind.substr(0, 32)) + "' (expected pid, timeline_dropped, region, span or end)");
  }

  template <class Count>
  std::optional<Error> region(const std::vector<std::string_view>& f, const Count& count) {
    if (auto e = count(3)) return e;
    if (out_.regions.size() >= limits_.max_regions) return fail(line_, "more than " + std::to_string(limits_.max_regions) + " regions");
    const auto id = span_file_unsigned(f[1], std::numeric_limits<std::int32_t>::max());
    if (!id) return fail(line_, "the region id '" + std::string(f[1].substr(0, 32)) + "' is not a number from 0 to 2147483647");
    auto name = span_file_name(f[2]);
    if (!name) return fail(line_, "the region name has a '%' without two hex digits after it");
    if (!ids_.insert(static_cast<int>(*id)).second) return fail(line_, "region " + std::to_string(*id) + " is listed twice");
    out_.regions.push_back({static_cast<int>(*id), std::move(*name)});
    return std::nullopt;
  }

  template <class Count, class Number>
  std::optional<Error> span(const Count& count, const Number& number) {
    if (auto e = count(6)) return e;
    if (out_.spans.size() >= limits_.max_spans) return fail(line_, "more than " + std::to_string(limits_.max_spans) + " spans");
    const auto tid = number(1, std::numeric_limits<std::int32_t>::max(), "the thread id");
    const auto region = tid ? number(2, std::numeric_limits<std::int32_t>::max(), "the region") : std::nullopt;
    const auto depth = region ? number(3, static_cast<std::uint64_t>(limits_.max_depth), "the depth") : std::nullopt;
    const auto start = depth ? number(4, std::numeric_limits<std::int64_t>::max(), "the start") : std::nullopt;
    const auto end = start ? number(5, std::numeric_limits<std::int64_t>::max(), "the end") : std::nullopt;
    if (!end) return bad_;
    if (*tid == 0) return fail(line_, "thread id 0");
    if (!ids_.contains(static_cast<int>(*region))) return fail(line_, "region " + std::to_string(*region) + " is not listed before it");
    if (*end < *start) return fail(line_, "the span ends (" + std::to_string(*end) + ") before it starts (" + std::to_string(*start) + ")");
    out_.spans.push_back({static_cast<std::int64_t>(*tid), static_cast<int>(*region), static_cast<int>(*depth), *start, *end});
    return std::nullopt;
  }

  const std::string& path_;
  const SpanFileLimits& limits_;
  std::size_t line_ = 0;
  RecordedSpans out_;
  std::unordered_set<int> ids_;
  Error bad_;
};

}  // namespace

Result<RecordedSpans> parse_span_file(std::string_view text, const std::string& path, const SpanFileLimits& limits) {
  return SpanFileParser(path, limits).parse(text);
}

Result<RecordedSpans> read_span_file(const std::string& path, const SpanFileLimits& limits) {
  auto text = read_input_file(path, "span file", limits.max_bytes, InputKinds::regular_file);
  if (!text) return text.error();
  return parse_span_file(*text, path, limits);
}

}  // namespace hwprof::profile
