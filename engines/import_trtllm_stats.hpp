// SPDX-License-Identifier: Apache-2.0
#pragma once
// TensorRT-LLM's expert statistics (EXPERT_STATISTIC_PATH, EXPERT_STATISTIC_ITER_RANGE; written by
// tensorrt_llm/_torch/expert_statistic.py, docs/engines.md names the commit): a directory of
//   meta_info.json                  {"num_experts": E, "num_experts_per_token": k}
//   rank{r}.safetensors             "{iteration}_{layer}" -> tokens per expert routed by rank r's own tokens
//   cooccurrence_rank{r}.safetensors (optional) "{iteration}_{layer}" -> [E][E] co-selections, diagonal included
// Layers are hidden-layer ids (3..60 on DeepSeek-V3; ids past the last hidden layer are MTP draft layers, left
// out). Each iteration is one trace step, its counts summed over the ranks; only one iteration's tensors are
// read at a time.
#include <filesystem>
#include <vector>

#include "engines/recorded_routing.hpp"

namespace epsim::engines {

ImportSummary import_trtllm_expert_stats(const std::filesystem::path& dir, const RoutingImportOptions& o,
                                         StepSink& sink);
/// The co-occurrence files summed over iterations and ranks, [MoE layer][expert][expert] with a zero
/// diagonal (co-selections of two different experts); empty when the directory has none.
std::vector<double> trtllm_coactivation(const std::filesystem::path& dir, const RoutingImportOptions& o);

}  // namespace epsim::engines
