// SPDX-License-Identifier: Apache-2.0
// BurstGPT (github.com/HPMLL/BurstGPT, data/BurstGPT_*.csv): Timestamp (s from the trace's start),
// Model, Request tokens, Response tokens, Total tokens, Log Type. A row with 0 response tokens is a
// failed request (the BurstGPT_without_fails files leave them out): skipped and counted, as are rows
// with 0 request tokens and, with replay_model, the other models' rows. Total tokens is not used.
#include <fmt/format.h>

#include <array>

#include "core/csv_lines.hpp"
#include "core/error.hpp"
#include "workloads/request_trace_readers.hpp"

namespace epsim::workloads {

namespace {

constexpr std::array<std::string_view, 6> k_columns{"Timestamp",       "Model",        "Request tokens",
                                                    "Response tokens", "Total tokens", "Log Type"};
constexpr const char* k_row = "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type";

class BurstGptRows final : public TraceRowReader {
 public:
  BurstGptRows(std::istream& in, const std::string& source, std::string model)
      : source_(source), lines_(in, "", source), model_(std::move(model)) {}

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
      if (!seen_row_ && !cells_.empty() && cells_[0] == k_columns[0]) {  // the header, checked
        if (!std::equal(cells_.begin(), cells_.end(), k_columns.begin(), k_columns.end())) {
          throw fail(fmt::format("expected the header {}, got \"{}\"", k_row, line));
        }
        seen_row_ = true;
        continue;
      }
      seen_row_ = true;
      if (cells_.size() != k_columns.size() && cells_.size() != k_columns.size() - 1) {  // Log Type may be empty
        throw fail(fmt::format("expected {}, got \"{}\"", k_row, line));
      }
      double at_s = 0.0;
      long long request = 0;
      long long response = 0;
      long long total = 0;
      if (!core::parse_number(cells_[0], at_s) || !core::parse_number(cells_[2], request) ||
          !core::parse_number(cells_[3], response) || !core::parse_number(cells_[4], total)) {
        throw fail("Timestamp must be a number and the token columns whole numbers, got \"" + std::string(line) + "\"");
      }
      if (request < 0 || response < 0 || request > k_max_request_tokens || response > k_max_request_tokens) {
        throw fail(fmt::format("Request tokens and Response tokens must be in [0, {}]", k_max_request_tokens));
      }
      if (!model_.empty() && cells_[1] != model_) {
        ++other_models_;
        continue;
      }
      if (request == 0 || response == 0) {  // a failure (0 response tokens), or nothing to prefill
        ++failed_;
        continue;
      }
      row = TraceRow{};
      row.time_s = at_s;  // RequestTrace checks the range and the order
      row.prompt_tokens = request;
      row.output_tokens = response;
      return true;
    }
    return false;
  }

  std::int64_t line_no() const override { return lines_.line_no(); }
  std::int64_t skipped_rows() const override { return failed_ + other_models_; }
  std::string skipped_what() const override {
    return model_.empty() ? fmt::format("{} failed (0 response or request tokens)", failed_)
                          : fmt::format("{} failed (0 response or request tokens), {} of other models than {}", failed_,
                                        other_models_, model_);
  }

 private:
  std::string source_;
  core::CsvLines lines_;
  std::string model_;
  std::vector<std::string> cells_;
  std::int64_t failed_ = 0;
  std::int64_t other_models_ = 0;
  bool seen_row_ = false;
};

}  // namespace

std::unique_ptr<TraceRowReader> open_burstgpt_rows(std::istream& in, const std::string& source,
                                                   const ReplayOptions& o) {
  return std::make_unique<BurstGptRows>(in, source, o.model);
}

}  // namespace epsim::workloads
