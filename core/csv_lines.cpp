// SPDX-License-Identifier: Apache-2.0
#include "core/csv_lines.hpp"

#include <fmt/format.h>

#include <array>
#include <exception>
#include <utility>

#include "core/error.hpp"

namespace epsim::core {

std::string read_whole_input(std::istream& in, const std::string& source, std::size_t max_bytes) {
  std::string text;
  std::array<char, 1 << 16> chunk{};
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (got > max_bytes - text.size()) {  // checked before the string grows past the bound
      throw Error(fmt::format("{}: larger than {} bytes (not an input epsim reads whole)", source, max_bytes));
    }
    text.append(chunk.data(), got);
  }
  if (in.bad()) {
    throw Error(source + ": read error");
  }
  return text;
}

CsvLines::CsvLines(std::istream& in, std::string header_prefix, std::string source)
    : in_(in), header_prefix_(std::move(header_prefix)), source_(std::move(source)) {}

bool CsvLines::next() {
  for (;;) {
    if (!read_line()) {
      return false;
    }
    ++line_no_;
    if (line_.empty() || line_[0] == '#') {
      continue;
    }
    const bool header = !past_header_ && !header_prefix_.empty() && line_.rfind(header_prefix_, 0) == 0;
    past_header_ = true;
    if (!header) {
      return true;
    }
  }
}

bool CsvLines::read_line() {
  // istream::getline into a small chunk, as often as a line needs: it stops at the chunk's end with
  // failbit instead of growing anything, so the line grows here, under the bound.
  line_.clear();
  for (;;) {
    in_.getline(chunk_.data(), static_cast<std::streamsize>(chunk_.size()));
    const auto got = static_cast<std::size_t>(in_.gcount());
    if (in_.bad()) {
      throw Error(fmt::format("{}: line {}: read error", source_, line_no_ + 1));
    }
    const bool full = in_.fail() && got + 1 == chunk_.size();  // the chunk is full and the line goes on
    if (in_.fail() && !full) {  // nothing was left: the end, or the end of a line that filled whole chunks
      return !line_.empty();
    }
    // A line break, when there was one, is counted by gcount but not stored.
    line_.append(chunk_.data(), full || in_.eof() ? got : got - 1);
    if (line_.size() > k_max_csv_line_bytes) {
      throw Error(fmt::format("{}: line {} is longer than {} bytes (not a table epsim reads)", source_, line_no_ + 1,
                              k_max_csv_line_bytes));
    }
    if (!full) {
      return true;
    }
    in_.clear(in_.rdstate() & ~std::ios::failbit);
  }
}

std::string csv_quote(std::string_view text) {
  if (text.find_first_of(",\"\n\r") == std::string_view::npos) {
    return std::string(text);
  }
  std::string out = "\"";
  for (const char c : text) {
    out += c;
    if (c == '"') {
      out += '"';
    }
  }
  out += '"';
  return out;
}

bool split_csv_quoted(std::string_view line, std::vector<std::string>& cells) {
  cells.clear();
  std::string cell;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c != '"') {
        cell += c;
      } else if (i + 1 < line.size() && line[i + 1] == '"') {
        cell += '"';  // a doubled quote inside quotes
        ++i;
      } else {
        quoted = false;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      cells.push_back(std::move(cell));
      cell.clear();
    } else {
      cell += c;
    }
  }
  cells.push_back(std::move(cell));
  return !quoted;
}

void split_csv(std::string_view line, std::vector<std::string>& cells) {
  cells.clear();
  if (line.empty()) {
    return;
  }
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = line.find(',', start);
    cells.emplace_back(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    start = comma + 1;
    if (comma == std::string_view::npos || start == line.size()) {
      return;  // like std::getline: a trailing comma ends the line without an empty cell
    }
  }
}

namespace {

template <typename T, typename Parse>
bool parse_whole(const std::string& cell, T& value, Parse parse) {
  try {
    std::size_t used = 0;
    value = parse(cell, &used);
    return used == cell.size();
  } catch (const std::exception&) {
    return false;  // std::invalid_argument or std::out_of_range from the std::sto* family
  }
}

template <typename T>
bool parse_cells(std::string_view line, std::vector<T>& values) {
  values.clear();
  std::vector<std::string> cells;
  split_csv(line, cells);
  for (const std::string& cell : cells) {
    if (!parse_number(cell, values.emplace_back())) {
      return false;
    }
  }
  return true;
}

}  // namespace

bool parse_number(const std::string& cell, double& value) {
  return parse_whole(cell, value, [](const std::string& s, std::size_t* used) { return std::stod(s, used); });
}

bool parse_number(const std::string& cell, long long& value) {
  return parse_whole(cell, value, [](const std::string& s, std::size_t* used) { return std::stoll(s, used); });
}

bool parse_csv_numbers(std::string_view line, std::vector<double>& values) {
  return parse_cells(line, values);
}

bool parse_csv_numbers(std::string_view line, std::vector<long long>& values) {
  return parse_cells(line, values);
}

}  // namespace epsim::core
