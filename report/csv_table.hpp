// SPDX-License-Identifier: Apache-2.0
#pragma once
// A CSV file epsim wrote (runs.csv, points.csv, requests.csv, steps.csv...), read whole for a report:
// the header names the columns; numbers are parsed on request, and every error names the file, the line
// and the column.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace epsim::report {

class CsvTable {
 public:
  /// Reads `path`; throws core::Error naming the file when it is missing, empty or has ragged rows.
  static CsvTable load(const std::filesystem::path& path);
  /// The same from text (`source` names it in errors).
  static CsvTable parse(const std::string& text, const std::string& source);

  const std::vector<std::string>& header() const { return header_; }
  std::size_t rows() const { return cells_.size(); }
  bool has(const std::string& column) const { return find(column).has_value(); }
  std::optional<std::size_t> find(const std::string& column) const;
  /// The column's index; throws naming the file and the column when it is absent.
  std::size_t column(const std::string& name) const;
  const std::string& text(std::size_t row, std::size_t col) const { return cells_[row][col]; }
  /// The cell as a number; throws naming file, line and column when it is not one.
  double number(std::size_t row, std::size_t col) const;
  /// As number(), but an empty cell is nullopt.
  std::optional<double> maybe_number(std::size_t row, std::size_t col) const;
  const std::string& source() const { return source_; }

 private:
  std::string source_;
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> cells_;
  std::vector<std::size_t> line_of_row_;
};

}  // namespace epsim::report
