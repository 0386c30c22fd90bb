// SPDX-License-Identifier: Apache-2.0
// Azure's LLM inference traces (github.com/Azure/AzurePublicDataset: AzureLLMInferenceTrace_code/conv.csv
// of 2023, the *_1week.csv of 2024): TIMESTAMP,ContextTokens,GeneratedTokens, the timestamp a date and
// time ("2023-11-16 18:15:46.6805900", optionally "T" for the space and a "Z" or "+hh:mm" zone). A
// row's trace time is its timestamp minus the first row's. No prefix information: content stays empty.
#include <fmt/format.h>

#include <array>
#include <cctype>

#include "core/csv_lines.hpp"
#include "core/error.hpp"
#include "workloads/request_trace_readers.hpp"

namespace epsim::workloads {

namespace {

// Days from 1970-01-01 to year y, month m, day d of the proleptic Gregorian calendar (H. Hinnant's
// days_from_civil).
std::int64_t days_from_civil(std::int64_t y, std::int64_t m, std::int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const std::int64_t yoe = y - era * 400;
  const std::int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// Reads `n` digits at `pos` into `value`; false when they are not all digits.
bool digits(std::string_view s, std::size_t& pos, std::size_t n, std::int64_t& value) {
  if (pos + n > s.size()) {
    return false;
  }
  value = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const char c = s[pos + i];
    if (c < '0' || c > '9') {
      return false;
    }
    value = value * 10 + (c - '0');
  }
  pos += n;
  return true;
}

bool expect(std::string_view s, std::size_t& pos, char c) {
  if (pos < s.size() && s[pos] == c) {
    ++pos;
    return true;
  }
  return false;
}

// A point in time: whole seconds since 1970-01-01 UTC and nanoseconds into the second (kept apart: int64
// nanoseconds end 292 years from 1970, and a fuzzer found a year 4046 row overflowing them).
struct Instant {
  std::int64_t s = 0;
  std::int64_t ns = 0;
};

// "YYYY-MM-DD HH:MM:SS[.fraction][Z|+hh:mm|-hh:mm]"; false when malformed.
bool parse_timestamp(std::string_view s, Instant& at) {
  std::size_t p = 0;
  std::int64_t y = 0;
  std::int64_t mo = 0;
  std::int64_t d = 0;
  std::int64_t h = 0;
  std::int64_t mi = 0;
  std::int64_t sec = 0;
  if (!(digits(s, p, 4, y) && expect(s, p, '-') && digits(s, p, 2, mo) && expect(s, p, '-') && digits(s, p, 2, d))) {
    return false;
  }
  if (!(expect(s, p, ' ') || expect(s, p, 'T'))) {
    return false;
  }
  if (!(digits(s, p, 2, h) && expect(s, p, ':') && digits(s, p, 2, mi) && expect(s, p, ':') && digits(s, p, 2, sec))) {
    return false;
  }
  static constexpr std::array<int, 12> k_month_days{31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (mo < 1 || mo > 12 || d < 1 || d > k_month_days[static_cast<std::size_t>(mo - 1)] || h > 23 || mi > 59 ||
      sec > 60) {
    return false;
  }
  std::int64_t frac_ns = 0;
  if (expect(s, p, '.')) {
    std::int64_t scale = 100000000;  // the first digit is tenths of a second
    std::size_t n = 0;
    for (; p < s.size() && std::isdigit(static_cast<unsigned char>(s[p])) != 0; ++p, ++n) {
      frac_ns += (s[p] - '0') * scale;  // digits past nanoseconds add nothing (scale 0)
      scale /= 10;
    }
    if (n == 0 || n > 12) {
      return false;
    }
  }
  std::int64_t zone_s = 0;
  if (expect(s, p, 'Z')) {
  } else if (p < s.size() && (s[p] == '+' || s[p] == '-')) {
    const std::int64_t sign = s[p] == '-' ? -1 : 1;
    ++p;
    std::int64_t zh = 0;
    std::int64_t zm = 0;
    if (!digits(s, p, 2, zh)) {
      return false;
    }
    expect(s, p, ':');  // +hh:mm or +hhmm
    if (!digits(s, p, 2, zm) || zh > 23 || zm > 59) {
      return false;
    }
    zone_s = sign * (zh * 3600 + zm * 60);
  }
  if (p != s.size()) {
    return false;
  }
  at.s = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - zone_s;  // years 0000-9999: +-3e11 s
  at.ns = frac_ns;
  return true;
}

class AzureRows final : public TraceRowReader {
 public:
  AzureRows(std::istream& in, const std::string& source) : source_(source), lines_(in, "", source) {}

  bool next(TraceRow& row) override {
    while (lines_.next()) {
      std::string_view line = lines_.line();
      if (line.back() == '\r') {
        line.remove_suffix(1);
      }
      const auto fail = [&](const std::string& what) {
        return core::Error(fmt::format("{}: line {}: {}", source_, lines_.line_no(), what));
      };
      core::split_csv(line, cells_);
      if (!seen_row_ && !cells_.empty() && cells_[0] == "TIMESTAMP") {  // the header, checked
        if (cells_.size() != 3 || cells_[1] != "ContextTokens" || cells_[2] != "GeneratedTokens") {
          throw fail("expected the header TIMESTAMP,ContextTokens,GeneratedTokens, got \"" + std::string(line) + "\"");
        }
        seen_row_ = true;
        continue;
      }
      seen_row_ = true;
      if (cells_.size() != 3) {
        throw fail("expected TIMESTAMP,ContextTokens,GeneratedTokens, got \"" + std::string(line) + "\"");
      }
      Instant at;
      if (!parse_timestamp(cells_[0], at)) {
        throw fail("expected a TIMESTAMP like 2023-11-16 18:15:46.6805900, got \"" + cells_[0] + "\"");
      }
      long long context = 0;
      long long generated = 0;
      if (!core::parse_number(cells_[1], context) || !core::parse_number(cells_[2], generated)) {
        throw fail("ContextTokens and GeneratedTokens must be whole numbers, got \"" + std::string(line) + "\"");
      }
      if (context < 0 || generated < 0 || context > k_max_request_tokens || generated > k_max_request_tokens) {
        throw fail(fmt::format("ContextTokens and GeneratedTokens must be in [0, {}]", k_max_request_tokens));
      }
      if (!have_first_) {
        first_ = at;
        have_first_ = true;
      }
      if (context == 0 || generated == 0) {  // nothing to prefill or nothing generated: no request to serve
        ++skipped_;
        continue;
      }
      row = TraceRow{};
      // Negative when out of order, past 1e9 s when years apart: RequestTrace refuses both.
      row.time_s = static_cast<double>(at.s - first_.s) + static_cast<double>(at.ns - first_.ns) * 1e-9;
      row.prompt_tokens = context;
      row.output_tokens = generated;
      return true;
    }
    return false;
  }

  std::int64_t line_no() const override { return lines_.line_no(); }
  std::int64_t skipped_rows() const override { return skipped_; }
  std::string skipped_what() const override {
    return fmt::format("{} with 0 ContextTokens or 0 GeneratedTokens", skipped_);
  }

 private:
  std::string source_;
  core::CsvLines lines_;
  std::vector<std::string> cells_;
  Instant first_;  // the first row's timestamp: the trace's origin
  bool have_first_ = false;
  std::int64_t skipped_ = 0;
  bool seen_row_ = false;
};

}  // namespace

std::unique_ptr<TraceRowReader> open_azure_rows(std::istream& in, const std::string& source,
                                                const ReplayOptions& /*o*/) {
  return std::make_unique<AzureRows>(in, source);
}

}  // namespace epsim::workloads
