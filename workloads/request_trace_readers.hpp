// SPDX-License-Identifier: Apache-2.0
#pragma once
// One reader per request-trace format, each in its own file (request_trace_<format>.cpp), each streamed
// over core::CsvLines (bounded lines, '#' comments and blank lines skipped, line numbers for errors).
#include <istream>
#include <memory>
#include <string>

#include "workloads/request_trace.hpp"

namespace epsim::workloads {

/// epsim's CSV: arrival_s[,prompt_tokens,output_tokens] (an optional header starting with "arrival").
std::unique_ptr<TraceRowReader> open_csv_rows(std::istream& in, const std::string& source, const ReplayOptions& o);
/// Mooncake's JSONL (FAST'25 traces): {"timestamp": ms, "input_length", "output_length", "hash_ids": [...]}.
std::unique_ptr<TraceRowReader> open_mooncake_rows(std::istream& in, const std::string& source, const ReplayOptions& o);
/// Azure's LLM inference traces (2023, 2024): TIMESTAMP (a date and time), ContextTokens, GeneratedTokens.
std::unique_ptr<TraceRowReader> open_azure_rows(std::istream& in, const std::string& source, const ReplayOptions& o);
/// BurstGPT: Timestamp (s), Model, Request tokens, Response tokens, Total tokens, Log Type.
std::unique_ptr<TraceRowReader> open_burstgpt_rows(std::istream& in, const std::string& source, const ReplayOptions& o);

}  // namespace epsim::workloads
