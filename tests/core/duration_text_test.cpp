// SPDX-License-Identifier: Apache-2.0
// Durations are rounded before they are split: the sweep's ETA printed "2m60s" (minutes floored, the
// seconds rounded on their own). Every tenth of a second up to three hours is checked against the text
// built from integer arithmetic on the tenths.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>

#include "core/duration_text.hpp"

using epsim::core::duration_text;

namespace {
std::string two(long long v) {
  std::string out = std::to_string(v);
  if (v < 10) {
    out.insert(out.begin(), '0');
  }
  return out;
}
}  // namespace

TEST_CASE("duration_text is exact at every tenth of a second across the minute and hour boundaries") {
  for (long long tenths = 0; tenths <= 3 * 36000; ++tenths) {
    const double s = static_cast<double>(tenths) / 10.0;
    const long long whole_s = (tenths + 5) / 10;  // half up, as llround for positive values
    std::string want;
    if (whole_s < 60) {
      want = std::to_string(whole_s) + "s";
    } else if (whole_s < 3600) {
      want = std::to_string(whole_s / 60) + "m" + two(whole_s % 60) + "s";
    } else {
      const long long whole_min = (tenths + 300) / 600;
      want = std::to_string(whole_min / 60) + "h" + two(whole_min % 60) + "m";
    }
    INFO("tenths " << tenths);
    REQUIRE(duration_text(s) == want);
  }
}

TEST_CASE("duration_text at the reported case and for values that are no duration") {
  CHECK(duration_text(179.6) == "3m00s");  // was "2m60s"
  CHECK(duration_text(59.4) == "59s");
  CHECK(duration_text(59.5) == "1m00s");
  CHECK(duration_text(3599.4) == "59m59s");
  CHECK(duration_text(3599.5) == "1h00m");
  CHECK(duration_text(7199.0) == "2h00m");
  CHECK(duration_text(-1.0) == "?");
  CHECK(duration_text(std::numeric_limits<double>::quiet_NaN()) == "?");
  CHECK(duration_text(std::numeric_limits<double>::infinity()) == "?");
}
