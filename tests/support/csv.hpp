// SPDX-License-Identifier: Apache-2.0
#pragma once
// Splits one line of the simple CSV files epsim writes (no quoting) into its cells, or a whole file into
// rows of cells.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace epsim::test {

inline std::vector<std::string> csv_cells(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream ss(line);
  std::string cell;
  while (std::getline(ss, cell, ',')) {
    cells.push_back(cell);
  }
  return cells;
}

/// Every line of `file`, header first, as cells.
inline std::vector<std::vector<std::string>> csv_file_rows(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::vector<std::vector<std::string>> out;
  std::string line;
  while (std::getline(in, line)) {
    out.push_back(csv_cells(line));
  }
  return out;
}

}  // namespace epsim::test
