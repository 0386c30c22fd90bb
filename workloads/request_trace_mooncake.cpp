// SPDX-License-Identifier: Apache-2.0
// Mooncake's request traces (github.com/kvcache-ai/Mooncake, FAST25-release/traces): one JSON object per
// line, {"timestamp": ms since the trace's start, "input_length", "output_length", "hash_ids": [...]},
// each hash id a block of the prompt (512 tokens in the released traces, the last block the remainder),
// an id standing for the block and every block before it, so equal leading ids are a shared prefix.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/csv_lines.hpp"
#include "core/error.hpp"
#include "core/json_depth.hpp"
#include "workloads/request_trace_readers.hpp"

namespace epsim::workloads {

namespace {

class MooncakeRows final : public TraceRowReader {
 public:
  MooncakeRows(std::istream& in, const std::string& source, std::int64_t block_tokens)
      : source_(source), lines_(in, "", source), block_tokens_(block_tokens) {}

  bool next(TraceRow& row) override {
    if (!lines_.next()) {
      return false;
    }
    std::string_view line = lines_.line();
    if (line.back() == '\r') {  // a file saved with Windows line ends
      line.remove_suffix(1);
    }
    const auto fail = [&](const std::string& what) {
      return core::Error(fmt::format("{}: line {}: {}", source_, lines_.line_no(), what));
    };
    // A row is an object holding one array: anything nested deeper is no row (and is never parsed).
    if (core::json_nesting_depth(line, 3) > 2) {
      throw fail("expected a JSON object of numbers and one array (hash_ids), got deeper nesting");
    }
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      throw fail(
          "expected one JSON object per line: {\"timestamp\": ms, \"input_length\": n, \"output_length\": n, "
          "\"hash_ids\": [...]}");
    }
    const auto count = [&](const char* key) -> std::int64_t {
      const auto it = j.find(key);
      if (it == j.end() || !it->is_number_unsigned() || it->get<std::uint64_t>() < 1 ||
          it->get<std::uint64_t>() > static_cast<std::uint64_t>(k_max_request_tokens)) {
        throw fail(fmt::format("\"{}\" must be a whole number in [1, {}]", key, k_max_request_tokens));
      }
      return static_cast<std::int64_t>(it->get<std::uint64_t>());
    };
    const auto ts = j.find("timestamp");
    if (ts == j.end() || !ts->is_number()) {
      throw fail("\"timestamp\" (ms since the trace's start) must be a number");
    }
    row = TraceRow{};
    row.time_s = ts->get<double>() / 1000.0;  // RequestTrace checks the range and the order
    row.prompt_tokens = count("input_length");
    row.output_tokens = count("output_length");
    const auto ids = j.find("hash_ids");
    if (ids == j.end() || !ids->is_array()) {
      throw fail("\"hash_ids\" must be an array of block ids");
    }
    // One id per block_tokens of the prompt, the last block partial: a row whose ids disagree with its
    // length is refused, not clamped (no released row disagrees; a wrong replay_block_tokens would).
    const std::int64_t blocks = (row.prompt_tokens + block_tokens_ - 1) / block_tokens_;
    if (static_cast<std::int64_t>(ids->size()) != blocks) {
      throw fail(
          fmt::format("input_length {} in blocks of {} tokens (replay_block_tokens) needs {} hash_ids, the "
                      "row has {}",
                      row.prompt_tokens, block_tokens_, blocks, ids->size()));
    }
    if (ids->size() > k_max_content_segments) {
      throw fail(fmt::format("{} hash_ids: more than the {} segments a prompt may have (raise replay_block_tokens)",
                             ids->size(), k_max_content_segments));
    }
    row.content.reserve(ids->size());
    std::int64_t left = row.prompt_tokens;
    for (const nlohmann::json& id : *ids) {
      if (!id.is_number_unsigned()) {
        throw fail("\"hash_ids\" must hold non-negative whole numbers");
      }
      const std::int64_t tokens = std::min(left, block_tokens_);
      row.content.push_back(ContentSegment{id.get<std::uint64_t>(), tokens});
      left -= tokens;
    }
    return true;
  }

  std::int64_t line_no() const override { return lines_.line_no(); }

 private:
  std::string source_;
  core::CsvLines lines_;
  std::int64_t block_tokens_;
};

}  // namespace

std::unique_ptr<TraceRowReader> open_mooncake_rows(std::istream& in, const std::string& source,
                                                   const ReplayOptions& o) {
  if (o.block_tokens < 1) {
    throw core::Error(source + ": replay_block_tokens must be >= 1");
  }
  return std::make_unique<MooncakeRows>(in, source, o.block_tokens);
}

}  // namespace epsim::workloads
