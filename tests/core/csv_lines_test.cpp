// SPDX-License-Identifier: Apache-2.0
#include "core/csv_lines.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <sstream>
#include <streambuf>
#include <string>

using namespace epsim::core;

TEST_CASE("CsvLines skips blank lines, comments and a first-line header, and counts every line") {
  std::istringstream in("step,layer\n\n# note\n1,2\nstep,3\n");
  CsvLines lines(in, "step", "t.csv");
  REQUIRE(lines.next());
  CHECK(lines.line() == "1,2");
  CHECK(lines.line_no() == 4);
  REQUIRE(lines.next());  // a header-like line after the first is data
  CHECK(lines.line() == "step,3");
  CHECK(lines.line_no() == 5);
  CHECK_FALSE(lines.next());
}

TEST_CASE("CsvLines finds the header after leading comments and blank lines") {
  std::istringstream in("# written by a tool\n\nstep,layer\n1,2\n");
  CsvLines lines(in, "step", "t.csv");
  REQUIRE(lines.next());
  CHECK(lines.line() == "1,2");
  CHECK(lines.line_no() == 4);
  CHECK_FALSE(lines.next());
}

TEST_CASE("CsvLines keeps a first line that is not the header") {
  std::istringstream in("7,8\n");
  CsvLines lines(in, "step", "t.csv");
  REQUIRE(lines.next());
  CHECK(lines.line() == "7,8");
  CHECK(lines.line_no() == 1);
}

TEST_CASE("split_csv cuts cells as std::getline does") {
  std::vector<std::string> cells{"stale"};
  split_csv("", cells);
  CHECK(cells.empty());
  split_csv("a,,b", cells);
  CHECK(cells == std::vector<std::string>{"a", "", "b"});
  split_csv("a,b,", cells);
  CHECK(cells == std::vector<std::string>{"a", "b"});
  split_csv(",", cells);
  CHECK(cells == std::vector<std::string>{""});
}

TEST_CASE("parse_csv_numbers accepts whole numbers only") {
  std::vector<double> d;
  REQUIRE(parse_csv_numbers("0,1.5,-2e3", d));
  CHECK(d == std::vector<double>{0.0, 1.5, -2000.0});
  CHECK_FALSE(parse_csv_numbers("1,2x", d));
  CHECK_FALSE(parse_csv_numbers("1,,2", d));
  CHECK_FALSE(parse_csv_numbers("abc", d));

  std::vector<long long> i;
  REQUIRE(parse_csv_numbers("3,40,9000000000", i));
  CHECK(i == std::vector<long long>{3, 40, 9000000000LL});
  CHECK_FALSE(parse_csv_numbers("1.5", i));
  CHECK_FALSE(parse_csv_numbers("99999999999999999999", i));  // out of range

  long long one = 0;
  REQUIRE(parse_number("12", one));
  CHECK(one == 12);
  CHECK_FALSE(parse_number("12abc", one));
  CHECK_FALSE(parse_number("", one));
}

TEST_CASE("csv_quote and split_csv_quoted round-trip cells with commas, quotes and line breaks") {
  const std::vector<std::string> original{"plain", "a, b", "say \"hi\"", "", "two\nlines"};
  std::string line;
  for (const std::string& c : original) {
    if (!line.empty()) {
      line += ',';
    }
    line += csv_quote(c);
  }
  REQUIRE(line == "plain,\"a, b\",\"say \"\"hi\"\"\",,\"two\nlines\"");
  std::vector<std::string> cells;
  REQUIRE(split_csv_quoted(line, cells));
  REQUIRE(cells == original);
  // A trailing comma is an empty last cell; an unclosed quote asks for the next line.
  REQUIRE(split_csv_quoted("a,", cells));
  REQUIRE(cells == std::vector<std::string>{"a", ""});
  REQUIRE_FALSE(split_csv_quoted("a,\"open", cells));
}

namespace {

// An endless input of one byte (what /dev/zero gives a reader), holding no memory of its own.
class Endless : public std::streambuf {
 public:
  explicit Endless(char c) { buffer_.fill(c); }

 protected:
  int_type underflow() override {
    setg(buffer_.data(), buffer_.data(), buffer_.data() + buffer_.size());
    return traits_type::to_int_type(buffer_[0]);
  }

 private:
  std::array<char, 4096> buffer_{};
};

}  // namespace

TEST_CASE("an endless input ends in an error naming it, not in all memory taken") {
  Endless zeros('\0');
  std::istream endless(&zeros);
  CsvLines lines(endless, "arrival", "/dev/zero");
  CHECK_THROWS_WITH(lines.next(), "/dev/zero: line 1 is longer than 1048576 bytes (not a table epsim reads)");

  Endless letters('x');
  std::istream endless_text(&letters);
  CHECK_THROWS_WITH(read_whole_input(endless_text, "big.toml", 100000),
                    "big.toml: larger than 100000 bytes (not an input epsim reads whole)");
}

TEST_CASE("lines at the bound, without a final line break, and whole inputs at the bound read as they are") {
  const std::string longest(k_max_csv_line_bytes, '7');
  std::istringstream in("1,2\n" + longest + "\n\n3,4");  // the last line has no line break
  CsvLines lines(in, "", "t.csv");
  REQUIRE(lines.next());
  CHECK(lines.line() == "1,2");
  REQUIRE(lines.next());
  CHECK(lines.line() == longest);
  REQUIRE(lines.next());
  CHECK(lines.line() == "3,4");
  CHECK(lines.line_no() == 4);
  CHECK_FALSE(lines.next());

  // Lines around the reader's 4,096-byte chunks: just under, at, just over and twice, with and without a
  // final line break.
  for (const std::size_t n : {4094, 4095, 4096, 4097, 8190, 8191, 8192}) {
    for (const char* end : {"\n", ""}) {
      std::istringstream edge("a,b\n" + std::string(n, 'x') + end);
      CsvLines l(edge, "", "t.csv");
      INFO(n << " bytes" << (*end ? " and a line break" : ""));
      REQUIRE(l.next());
      REQUIRE(l.next());
      CHECK(l.line() == std::string(n, 'x'));
      CHECK_FALSE(l.next());
    }
  }

  std::istringstream whole(std::string(100000, 'a'));
  CHECK(read_whole_input(whole, "t.toml", 100000).size() == 100000);
}
