// SPDX-License-Identifier: Apache-2.0
#pragma once
// Importer of Vidur's compute profiles (microsoft/vidur data/profiling/compute/<gpu>/<model>/), told apart
// by their columns; times are the `time_stats.<op>.median` columns (else `.mean`), in milliseconds.
// - mlp.csv (n_head, n_kv_head, n_embd, n_expanded_embd, use_gated_mlp, num_tokens,
//   num_tensor_parallel_workers = tp): dense_gemm rows, m = num_tokens and, with d = n_embd / n_head,
//   attn_pre_proj:  k = n_embd,               n = (n_head + 2 n_kv_head) d / tp   (fused QKV)
//   attn_post_proj: k = n_head d / tp,        n = n_embd
//   mlp_up_proj:    k = n_embd,               n = (2 if use_gated_mlp else 1) n_expanded_embd / tp
//   mlp_down_proj:  k = n_expanded_embd / tp, n = n_embd
//   (the norms, rope, activation and adds are no GEMMs: skipped).
// - attention.csv (n_embd, n_q_head, n_kv_head, num_tensor_parallel_workers, batch_size,
//   prefill_chunk_size, kv_cache_size, is_prefill): heads = n_q_head / tp, kv_heads = n_kv_head / tp (at
//   least 1), head_dim = n_embd / n_q_head; prefill rows (attn_prefill): q_tokens = prefill_chunk_size,
//   kv_tokens = kv_cache_size + prefill_chunk_size; decode rows (attn_decode): q_tokens = 1, kv_tokens =
//   kv_cache_size + 1; batch = batch_size.
// A time of 0 or an empty cell (Vidur's "not measured") is skipped.
#include <filesystem>
#include <span>

#include "calibration/import_options.hpp"
#include "calibration/measurement_table.hpp"

namespace epsim::calibration {

MeasurementTable import_vidur(std::span<const std::filesystem::path> files, const ImportOptions& o);

}  // namespace epsim::calibration
