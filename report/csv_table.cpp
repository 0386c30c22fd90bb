// SPDX-License-Identifier: Apache-2.0
#include "report/csv_table.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "core/csv_lines.hpp"
#include "core/error.hpp"
#include "core/file_kind.hpp"

namespace epsim::report {

CsvTable CsvTable::load(const std::filesystem::path& path) {
  core::check_input_file(path);  // a FIFO would block the report forever
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw core::Error(fmt::format("{}: cannot open", path.string()));
  }
  return parse(core::read_whole_input(in, path.string()), path.string());
}

CsvTable CsvTable::parse(const std::string& text, const std::string& source) {
  CsvTable t;
  t.source_ = source;
  std::istringstream in(text);
  std::string line;
  std::size_t line_no = 0;
  std::vector<std::string> cells;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') {
      line.pop_back();
    }
    if (line.empty()) {
      continue;
    }
    // Labels with commas are quoted (study outputs); a quoted line break continues on the next line.
    const std::size_t first_line = line_no;
    while (!core::split_csv_quoted(line, cells)) {
      std::string more;
      if (!std::getline(in, more)) {
        throw core::Error(fmt::format("{}:{}: a quoted cell is never closed", source, first_line));
      }
      ++line_no;
      line += '\n';
      line += more;
    }
    if (t.header_.empty()) {
      t.header_ = cells;
      continue;
    }
    if (cells.size() != t.header_.size()) {
      throw core::Error(fmt::format("{}:{}: {} cells, the header has {} columns", source, first_line, cells.size(),
                                    t.header_.size()));
    }
    t.cells_.push_back(cells);
    t.line_of_row_.push_back(first_line);
  }
  if (t.header_.empty()) {
    throw core::Error(fmt::format("{}: empty, expected a header line", source));
  }
  return t;
}

std::optional<std::size_t> CsvTable::find(const std::string& column) const {
  for (std::size_t i = 0; i < header_.size(); ++i) {
    if (header_[i] == column) {
      return i;
    }
  }
  return std::nullopt;
}

std::size_t CsvTable::column(const std::string& name) const {
  const auto c = find(name);
  if (!c.has_value()) {
    throw core::Error(fmt::format("{}: no column \"{}\" in the header", source_, name));
  }
  return *c;
}

double CsvTable::number(std::size_t row, std::size_t col) const {
  const auto v = maybe_number(row, col);
  if (!v.has_value()) {
    throw core::Error(
        fmt::format("{}:{}: column \"{}\" is empty, expected a number", source_, line_of_row_[row], header_[col]));
  }
  return *v;
}

std::optional<double> CsvTable::maybe_number(std::size_t row, std::size_t col) const {
  const std::string& cell = cells_[row][col];
  if (cell.empty()) {
    return std::nullopt;
  }
  double v = 0.0;
  if (!core::parse_number(cell, v)) {
    throw core::Error(fmt::format("{}:{}: column \"{}\" is \"{}\", expected a number", source_, line_of_row_[row],
                                  header_[col], cell));
  }
  return v;
}

}  // namespace epsim::report
