// SPDX-License-Identifier: Apache-2.0
// What epsim prints from user input: control characters (ANSI escapes, bells, carriage returns, C1
// controls in UTF-8) shown as visible escapes, other UTF-8 left alone, long values cut.
#include <catch2/catch.hpp>
#include <string>

#include "core/message_text.hpp"

using epsim::core::excerpt;
using epsim::core::has_control_characters;
using epsim::core::terminal_safe;

TEST_CASE("terminal_safe escapes every control character and only those") {
  CHECK(terminal_safe("\x1b[31mred\x1b[0m") == "\\x1b[31mred\\x1b[0m");
  CHECK(terminal_safe("a\rb\nc\td\x07\x7f") == "a\\x0db\\x0ac\\x09d\\x07\\x7f");
  CHECK(terminal_safe("\xc2\x9b"
                      "2J") == "\\u009b2J");                                                             // C1 CSI
  CHECK(terminal_safe("EP16 \xc3\xa9t\xc3\xa9 \xe2\x86\x92") == "EP16 \xc3\xa9t\xc3\xa9 \xe2\x86\x92");  // é, →
  CHECK(terminal_safe(std::string("a\0b", 3)) == "a\\x00b");
  for (int c = 0; c < 0x20; ++c) {
    const std::string s(1, static_cast<char>(c));
    CHECK(has_control_characters(s));
    CHECK(!has_control_characters(terminal_safe(s)));
  }
  CHECK(!has_control_characters("plain label, 16.0 req/s \xc2\xa0"));  // U+00A0 is no control
}

TEST_CASE("excerpt keeps short text and cuts long text at a character boundary") {
  CHECK(excerpt("short", 10) == "short");
  CHECK(excerpt(std::string(1000, 'x'), 4) == "xxxx... (1000 bytes)");
  // "é" is two bytes: a cut after 3 bytes of "aéé" would split the second one.
  CHECK(excerpt("a\xc3\xa9\xc3\xa9", 4) == "a\xc3\xa9... (5 bytes)");
}
