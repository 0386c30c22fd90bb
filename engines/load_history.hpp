// SPDX-License-Identifier: Apache-2.0
#pragma once
// EPLB load histories as vLLM and SGLang users share them (the layout of the public EPLB benchmark data):
// {"load_history": [{"logical_expert_load": [[tokens per logical expert] per MoE layer], ...}, ...]}.
// Streamed through a SAX parser: one entry is held at a time, whatever the file's size. Other keys of the
// file and of each entry are skipped.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <vector>

namespace epsim::engines {

/// One entry's loads, [MoE layer][logical expert].
using LoadMatrix = std::vector<std::vector<double>>;

/// Calls `on_entry(index, load)` for each entry in order; returns the entries read. Throws core::Error
/// naming the file and the byte offset (malformed JSON) or the entry, layer and expert (a load that is not
/// a non-negative number, a ragged matrix, an entry without logical_expert_load, no load_history at all).
std::int64_t read_load_history(const std::filesystem::path& path,
                               const std::function<void(std::int64_t, const LoadMatrix&)>& on_entry);

}  // namespace epsim::engines
