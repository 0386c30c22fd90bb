#pragma once
// Line-by-line reading of small CSV inputs (arrival replays, load tables, trace imports): one place for
// skipping blank lines, '#' comments and the header, counting lines for error messages, and strict
// number parsing (a cell must be a whole number, not a number's prefix).
#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

namespace epsim::core {

class CsvLines {
 public:
  /// A first line that starts with `header_prefix` is the header and is skipped.
  CsvLines(std::istream& in, std::string header_prefix);
  /// Moves to the next data line; false at the end of the input.
  bool next();
  const std::string& line() const { return line_; }
  /// 1-based number of the current line in the input (blank, comment and header lines counted).
  std::int64_t line_no() const { return line_no_; }

 private:
  std::istream& in_;
  std::string header_prefix_;
  std::string line_;
  std::int64_t line_no_ = 0;
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
