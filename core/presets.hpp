// SPDX-License-Identifier: Apache-2.0
#pragma once
// A catalog of named TOML presets (models, GPUs, clusters...): shipped ones are embedded in the binary.
// Parsing is done once per preset and cached in the catalog.
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "core/embedded_file.hpp"
#include "core/params.hpp"

namespace toml {
inline namespace v3 {
class table;
}
}  // namespace toml

namespace epsim::core {

/// A preset "name" that ends in ".toml" is a file path (a calibrated GPU preset, a user's own cluster):
/// loaded on first use and cached, so a path works wherever a shipped preset's name does.
bool is_preset_path(const std::string& name);

class PresetCatalog {
 public:
  /// `kind` is the folder-like name used in messages, e.g. "models" or "gpus".
  PresetCatalog(std::string kind, std::span<const EmbeddedFile> files);
  ~PresetCatalog();

  std::vector<std::string> names() const;
  bool contains(const std::string& name) const;
  /// The parsed preset; throws ConfigError (naming `source`/`key` and listing valid names) if unknown.
  const toml::table& get(const std::string& name, const std::string& source, const std::string& key) const;
  /// Source label for messages about a preset's own values, e.g. "preset models/deepseek-v3" (a file
  /// preset: its path).
  std::string label(const std::string& name) const {
    return is_preset_path(name) ? name : "preset " + kind_ + "/" + name;
  }
  /// "unknown <kind> preset "x"; valid names are: ..." (empty if `name` exists).
  std::string unknown_message(const std::string& name) const;

 private:
  std::string kind_;
  std::map<std::string, std::unique_ptr<toml::table>> tables_;
  mutable std::mutex files_mutex_;  // sweeps' worker threads may load a file preset at the same time
  mutable std::map<std::string, std::unique_ptr<toml::table>> files_;
  const toml::table& file(const std::string& path) const;
};

/// The layer for preset `name` that `t`'s key `key` named; an unknown name fails on that key, so the
/// message names the file (or --set) the name came from.
ParamLayer preset_layer(const ParamTable& t, std::string_view key, const PresetCatalog& catalog,
                        const std::string& name);

}  // namespace epsim::core
