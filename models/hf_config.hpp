// SPDX-License-Identifier: Apache-2.0
#pragma once
// A Hugging Face config.json read into epsim [model] keys (docs/model.md, "Models from config.json"):
// the architecture's widths, layer counts and layouts, experts, attention shapes and weight formats.
// Only the families of hf_families.hpp are read; a field that neither maps to a key nor is known not to
// change the cost is refused, naming it, unless the user accepts it ([model] hf_ignore).
#include <toml++/toml.h>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace epsim::models {

/// The largest config.json read (the largest published ones, with per-layer quantisation lists, are a
/// few hundred KB).
inline constexpr std::size_t k_max_hf_config_bytes = std::size_t{4} << 20;

struct HfModelTable {
  std::string family;                ///< e.g. "DeepSeek-V3"
  toml::table model;                 ///< [model] keys, loadable as a layer under the user's
  std::vector<std::string> order;    ///< the keys of `model` in the order they are printed
  std::vector<std::string> ignored;  ///< JSON paths of the fields known not to change the cost
};

/// The [model] table derived from config.json text; `source` names the file in messages, `name` the
/// model (the table's `name`). `accepted` holds JSON paths of unknown fields the user accepts.
HfModelTable derive_hf_model(std::string_view json_text, const std::string& source, const std::string& name,
                             std::span<const std::string> accepted = {});

/// Reads the file at `path` (at most k_max_hf_config_bytes) and derives its table; the model is named
/// after the file's folder when the file is called config.json (a downloaded checkpoint), else after
/// the file.
HfModelTable read_hf_config(const std::string& path, std::span<const std::string> accepted = {});

/// The table as TOML text for a [model] section (keys in `order`), and the ignored fields as a comment.
std::string hf_model_toml(const HfModelTable& t);

}  // namespace epsim::models
