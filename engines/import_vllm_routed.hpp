// SPDX-License-Identifier: Apache-2.0
#pragma once
// vLLM's routed experts (--enable-return-routed-experts), one request per line of a JSON Lines file, into a
// per-token trace (every token's top-k ids, so co-activation comes with it). A line is a completion response
// or a bare record; routing is read from, in order, "prompt_routed_experts" (a response's prompt tokens,
// shared by its choices), then each "choices"[i]."routed_experts", or a top-level "routed_experts", or the line
// itself when it is a list. Each is [tokens][layers][top_k] as nested lists or as vLLM's base64 of np.save.
// Layers are the model's MoE layers, or all its hidden layers (dense rows then ignored). A token whose ids
// are all -1 was prefix-cached (not routed in that run) and is left out. Tokens are packed into steps of
// tokens_per_step (0: one request per step). One line is held at a time.
#include <filesystem>

#include "engines/recorded_routing.hpp"

namespace epsim::engines {

ImportSummary import_vllm_routed_experts(const std::filesystem::path& path, const RoutingImportOptions& o,
                                         StepSink& sink);

}  // namespace epsim::engines
