// SPDX-License-Identifier: Apache-2.0
#pragma once
// Making and converting routing traces: synthesise steps from the synthetic generator (optionally with
// per-origin counts and per-token expert ids), import `step,layer,expert,tokens` CSV and per-token JSON
// dumps, export CSV. Everything streams except the JSON import (JSON has no streaming form here).
#include <cstdint>
#include <filesystem>
#include <string>

#include "workloads/routing_trace.pb.h"
#include "workloads/synthetic_router.hpp"

namespace epsim::workloads {

struct SynthesisOptions {
  std::int64_t steps = 100;
  std::int64_t tokens = 256;             ///< tokens per step
  double prefill_share = 0.0;            ///< share of each step's tokens that are prefill (the rest decode)
  double step_ms = 50.0;                 ///< simulated time between steps (drives topic drift)
  int origin_gpus = 0;                   ///< > 0: record tokens per (origin GPU, expert), tokens split in blocks
  bool token_experts = false;            ///< record every token's top-k expert ids
  std::int64_t tokens_per_request = 64;  ///< requests (and so topics) are blocks of this many tokens
  /// Group-limited routing (the model's expert_groups / topk_group): with token ids or origins asked for,
  /// every token is drawn on its own within its groups (topics included) and the counts tally them.
  int expert_groups = 1;
  int topk_group = 1;
  std::uint64_t token_seed = 0;  ///< seeds those per-token draws
};

/// One step drawn from `router`; origins and token ids, when asked, are derived consistently from the
/// counts (tokens dealt round-robin to experts by decreasing load, so each token's experts are distinct),
/// or, for a group-limited model, drawn token by token and tallied into the counts.
trace::Step synthesize_step(SyntheticRouter& router, std::int64_t index, const SynthesisOptions& o);
/// Writes `o.steps` synthesised steps to `path`; returns the header written.
trace::Header generate_trace(const std::filesystem::path& path, SyntheticRouter& router, const std::string& model,
                             const SynthesisOptions& o);

/// CSV rows `step,layer,expert,tokens` (header line optional; rows grouped by step, any order inside a
/// step; missing experts have 0 tokens) -> trace. The step's token count is layer 0's sum / top_k.
/// Errors name the file and line. Returns the steps written.
std::int64_t import_csv(const std::filesystem::path& csv, trace::Header header, const std::filesystem::path& out);
/// JSON per-token dump: {"model": "...", "experts": E, "top_k": k, "steps": [ {"layers": [ [[e, ...] per
/// token], ... per layer ] }, ... ]} (nested arrays as numpy's tolist() writes them) -> trace with
/// per-token ids. Returns the steps written.
std::int64_t import_token_json(const std::filesystem::path& json, const std::filesystem::path& out);
/// Trace -> CSV `step,layer,expert,tokens` (zero counts omitted). Returns the steps exported.
std::int64_t export_csv(const std::filesystem::path& trace_path, const std::filesystem::path& csv);

}  // namespace epsim::workloads
