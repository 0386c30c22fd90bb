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

std::string csv_cell(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) {
    return text;
  }
  std::string q = "\"";
  for (const char c : text) {
    if (c == '"') {
      q += '"';
    }
    q += c;
  }
  q += '"';
  return q;
}

std::string csv_number(double v) {
  return fmt::format("{}", v);
}

}  // namespace epsim::report
