// SPDX-License-Identifier: Apache-2.0
#pragma once
// Splits one line of the simple CSV files epsim writes (no quoting) into its cells.
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

}  // namespace epsim::test
