// The plain text tables of the profile reports (`hwprof profile`, `hwprof report`): columns two
// spaces apart, text left and numbers right, and the cells their numbers are written as.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/stages.hpp"
#include "hwprof/statistics.hpp"

namespace hwprof::report {

class TextTable {
 public:
  void column(std::string title, bool right) {
    const std::size_t w = width(title);
    columns_.push_back({std::move(title), right, w});
  }
  void row(std::vector<std::string> cells) {
    for (std::size_t k = 0; k < cells.size() && k < columns_.size(); ++k) columns_[k].width = std::max(columns_[k].width, width(cells[k]));
    rows_.push_back(std::move(cells));
  }
  void rule() { rows_.emplace_back(); }
  std::string render() const {
    std::string out = line_of([&](std::size_t k) { return columns_[k].title; });
    out += std::string(total_width(), '-') + "\n";
    for (const auto& r : rows_) {
      if (r.empty()) {
        out += std::string(total_width(), '-') + "\n";
        continue;
      }
      out += line_of([&](std::size_t k) { return k < r.size() ? r[k] : std::string(); });
    }
    return out;
  }

 private:
  struct Column {
    std::string title;
    bool right = false;
    std::size_t width = 0;
  };
  // Display width: UTF-8 continuation bytes take no column.
  static std::size_t width(const std::string& s) {
    return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
  }
  std::size_t total_width() const {
    std::size_t w = 0;
    for (const Column& c : columns_) w += c.width + 2;
    return w > 2 ? w - 2 : 0;
  }
  template <class CellOf>
  std::string line_of(CellOf cell_of) const {
    std::string s;
    for (std::size_t k = 0; k < columns_.size(); ++k) {
      const std::string text = cell_of(k);
      const std::size_t pad = columns_[k].width - std::min(columns_[k].width, width(text));
      if (k) s += "  ";
      s += columns_[k].right ? std::string(pad, ' ') + text : text + std::string(pad, ' ');
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  }
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

// The columns every profile table ends with: the row's rate and intensity, its bound and
// efficiency, its roof and win (where some row was placed), and why.
inline void add_rate_columns(TextTable& t, bool placed) {
  t.column("GFLOP/s", true);
  t.column("FLOP/B", true);
  t.column("Bound", false);
  t.column("Eff.", true);
  if (placed) {
    t.column("Roof ms", true);
    t.column("Win ms", true);
  }
  t.column("Why", false);
}

// Rates and ratios: three significant digits, no exponent below 0.001.
std::string rate_cell(double v);
std::string optional_rate_cell(const std::optional<double>& v);
// "±0.012" from the 95% confidence interval of the median; without one (fewer than 6
// samples), half the min–max range, marked with † (and `*used_range` set, for the note).
std::string median_uncertainty_cell(const Summary& s, bool* used_range);

// What the rows of a table were marked with, for the notes under it: each said once.
struct RowMarks {
  bool below_resolution = false;  // ~ a time below resolution
  bool used_range = false;        // † a ± from the min-max range
  bool lower_bound = false;       // ≥ a rate whose count leaves part of the row out
  bool impossible = false;        // a rate above anything the machine can do
};
std::string row_mark_notes(const RowMarks& marks);

}  // namespace hwprof::report
