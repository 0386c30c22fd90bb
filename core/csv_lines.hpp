// SPDX-License-Identifier: Apache-2.0
#pragma once
// Reading text inputs: line by line for small CSV inputs (arrival replays, load tables, trace imports),
// one place for skipping blank lines, '#' comments and the header, counting lines for error messages, and
// strict number parsing (a cell must be a whole number, not a number's prefix); and whole, for the inputs
// parsed at once. Both are bounded, so an endless input ends in an error, not in all memory taken.
#include <array>
#include <cstddef>
#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

namespace epsim::core {

/// The longest line a CSV input may have: no table epsim reads comes near it, and the bound keeps an
/// endless line (/dev/zero given as a file) from taking all memory.
inline constexpr std::size_t k_max_csv_line_bytes = std::size_t{1} << 20;

/// The largest input epsim reads whole (configs, studies, placement files, measurement tables, load CSVs):
/// far above any of them, and a bound for an endless one.
inline constexpr std::size_t k_max_text_input_bytes = std::size_t{256} << 20;

/// The whole of `in`, opened from `source`; throws core::Error naming `source` when it holds more than
/// `max_bytes` or cannot be read.
std::string read_whole_input(std::istream& in, const std::string& source,
                             std::size_t max_bytes = k_max_text_input_bytes);

class CsvLines {
 public:
  /// The first line that is neither blank nor a '#' comment is the header, and is skipped, when it starts
  /// with `header_prefix`; `source` names the input in errors.
  CsvLines(std::istream& in, std::string header_prefix, std::string source);
  /// Moves to the next data line; false at the end of the input. Throws core::Error naming the source and
  /// the line when a line is longer than k_max_csv_line_bytes or the input cannot be read.
  bool next();
  const std::string& line() const { return line_; }
  /// 1-based number of the current line in the input (blank, comment and header lines counted).
  std::int64_t line_no() const { return line_no_; }

 private:
  std::istream& in_;
  std::string header_prefix_;
  std::string source_;
  std::string line_;
  std::array<char, 4096> chunk_{};  // istream::getline's bounded destination
  std::int64_t line_no_ = 0;
  bool past_header_ = false;  // a line that could be the header has been seen
  /// The next line into line_, bounded; false at the end of the input.
  bool read_line();
};

/// Splits `line` at commas into `cells` (cleared first) as std::getline(.., ',') would: an empty line
/// gives no cells, a trailing comma no empty last cell.
void split_csv(std::string_view line, std::vector<std::string>& cells);

/// A text cell as RFC 4180 writes it: unchanged unless it holds a comma, a quote or a line break, then
/// in double quotes with its quotes doubled.
std::string csv_quote(std::string_view text);

/// Splits a line whose cells may be quoted as csv_quote writes them into `cells` (cleared first), every
/// cell kept (a trailing comma is an empty last cell). False when a quoted cell is not closed on the line:
/// it continues on the next one (append "\n" and that line, then split again).
bool split_csv_quoted(std::string_view line, std::vector<std::string>& cells);

/// Parses `cell` into `value`; false when it is not wholly a number of that type.
bool parse_number(const std::string& cell, double& value);
bool parse_number(const std::string& cell, long long& value);

/// Parses every comma-separated cell of `line` into `values` (cleared first). False when a cell is not
/// wholly a number of that type (e.g. "12abc", or "1.5" for an integer).
bool parse_csv_numbers(std::string_view line, std::vector<double>& values);
bool parse_csv_numbers(std::string_view line, std::vector<long long>& values);

}  // namespace epsim::core
