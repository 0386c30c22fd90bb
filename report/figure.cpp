// SPDX-License-Identifier: Apache-2.0
#include "report/figure.hpp"

#include <fmt/format.h>

namespace epsim::report {

std::string figure_id(const std::string& raw) {
  std::string id;
  id.reserve(raw.size());
  for (const char c : raw) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    if (keep) {
      id += c;
    } else if (c >= 'A' && c <= 'Z') {
      id += static_cast<char>(c - 'A' + 'a');
    } else {
      id += '_';
    }
  }
  return id;
}

std::string csv_number(double v) {
  return fmt::format("{}", v);
}

}  // namespace epsim::report
