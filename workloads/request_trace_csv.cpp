// SPDX-License-Identifier: Apache-2.0
// epsim's own replay CSV: arrival_s[,prompt_tokens,output_tokens] per line.
#include <fmt/format.h>

#include "core/csv_lines.hpp"
#include "core/error.hpp"
#include "workloads/request_trace_readers.hpp"

namespace epsim::workloads {

namespace {

class CsvRows final : public TraceRowReader {
 public:
  CsvRows(std::istream& in, const std::string& source) : source_(source), lines_(in, "arrival", source) {}

  bool next(TraceRow& row) override {
    if (!lines_.next()) {
      return false;
    }
    const std::string& line = lines_.line();
    const auto fail = [&](const std::string& what) {
      return core::Error(fmt::format("{}: line {}: {}", source_, lines_.line_no(), what));
    };
    core::split_csv(line, cells_);
    if (cells_.empty() || cells_.size() == 2 || cells_.size() > 3) {
      throw fail("expected arrival_s or arrival_s,prompt_tokens,output_tokens, got \"" + line + "\"");
    }
    double arrival_s = 0.0;
    long long prompt = 0;
    long long output = 0;
    const bool numbers =
        core::parse_number(cells_[0], arrival_s) &&
        (cells_.size() == 1 || (core::parse_number(cells_[1], prompt) && core::parse_number(cells_[2], output)));
    if (!numbers) {
      throw fail("not a number in \"" + line + "\"");  // "100abc" or "100.5" tokens too, not just 100
    }
    if (cells_.size() == 3 &&
        (prompt < 1 || output < 1 || prompt > k_max_request_tokens || output > k_max_request_tokens)) {
      throw fail(fmt::format("prompt_tokens and output_tokens must be in [1, {}]", k_max_request_tokens));
    }
    row = TraceRow{};
    row.time_s = arrival_s;
    row.prompt_tokens = prompt;  // 0 and 0 for an arrival-only row: the generator draws the lengths
    row.output_tokens = output;
    return true;
  }

  std::int64_t line_no() const override { return lines_.line_no(); }

 private:
  std::string source_;
  core::CsvLines lines_;
  std::vector<std::string> cells_;
};

}  // namespace

std::unique_ptr<TraceRowReader> open_csv_rows(std::istream& in, const std::string& source, const ReplayOptions& /*o*/) {
  return std::make_unique<CsvRows>(in, source);
}

}  // namespace epsim::workloads
