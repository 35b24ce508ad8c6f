#include "session/span_file.hpp"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include <unistd.h>

#include "common/stages.hpp"
#include "hwprof/atomic_file.hpp"
#include "session/region_spans.hpp"

namespace hwprof::session {
namespace {

void append_number(std::string& out, long long value) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
  out.append(digits, end);
}

void append_unsigned(std::string& out, unsigned long long value) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
  out.append(digits, end);
}

// A region name as one field: spaces, line breaks, control bytes, '%' and DEL as %HH.
void append_span_file_name(std::string& out, std::string_view name) {
  constexpr char kHex[] = "0123456789ABCDEF";
  for (const char c : name) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= ' ' || byte == '%' || byte == 0x7f) {
      out += '%';
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    } else {
      out += c;
    }
  }
}

Session* span_session = nullptr;
std::string* span_folder = nullptr;  // never destroyed: read by the at-exit handler

void write_spans_now() noexcept {
  if (span_session == nullptr || span_folder == nullptr) return;
  try {
    const long pid = static_cast<long>(::getpid());
    const std::string path = span_file_path(*span_folder, pid);
    if (auto error = write_file_atomically(path, span_file_text(span_session->snapshot(), pid))) {
      std::fprintf(stderr, "hwprof: %s: the regions' spans for hwprof record: %s\n", kRecordSpansVariable, error->message.c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hwprof: %s: the regions' spans could not be written: %s\n", kRecordSpansVariable, e.what());
  } catch (...) {
    std::fprintf(stderr, "hwprof: %s: the regions' spans could not be written\n", kRecordSpansVariable);
  }
}

}  // namespace

std::string span_file_path(const std::string& folder, long pid) {
  return folder + "/spans-" + std::to_string(pid) + ".txt";
}

std::string span_file_text(const SessionSnapshot& snapshot, long pid) {
  const std::vector<RegionSpan> spans = spans_of(snapshot);
  std::string out;
  out.reserve(64 + 48 * snapshot.regions.size() + 56 * spans.size());
  out += kSpanFileMagic;
  out += "\npid ";
  append_number(out, pid);
  out += "\ntimeline_dropped ";
  append_unsigned(out, snapshot.timeline_dropped);
  out += '\n';
  for (const RegionReport& r : snapshot.regions) {
    out += "region ";
    append_number(out, r.id);
    out += ' ';
    append_span_file_name(out, r.name);
    out += '\n';
  }
  for (const RegionSpan& s : spans) {
    out += "span ";
    append_number(out, s.tid);
    out += ' ';
    append_number(out, s.region);
    out += ' ';
    append_number(out, s.depth);
    out += ' ';
    append_unsigned(out, s.start_ns);
    out += ' ';
    append_unsigned(out, s.end_ns);
    out += '\n';
  }
  out += "end ";
  append_unsigned(out, snapshot.regions.size());
  out += ' ';
  append_unsigned(out, spans.size());
  out += '\n';
  return out;
}

void write_span_file_at_exit(Session& session, std::string folder) noexcept {
  try {
    if (span_folder != nullptr) return;
    span_folder = new std::string(std::move(folder));
    span_session = &session;
    std::atexit(write_spans_now);
  } catch (...) {
    std::fprintf(stderr, "hwprof: %s: out of memory; the regions' spans will not be written\n", kRecordSpansVariable);
  }
}

}  // namespace hwprof::session
