// SPDX-License-Identifier: Apache-2.0
#pragma once
// The configuration behind an epsim.Config: where it came from (a file, TOML text or the embedded demo)
// and its "key=value" overrides, loaded by the CLI's own loader, so it fails with the CLI's messages.
// Overrides apply at load time (as --set does), so adding some reloads the source with the longer list.
#include <optional>
#include <string>
#include <vector>

#include "experiments/assembly/experiment_config.hpp"

namespace epsim::python {

class ConfigHandle {
 public:
  /// A TOML file, its path relative to the working directory as `epsim run CONFIG` reads it.
  static ConfigHandle file(std::string path, std::vector<std::string> sets);
  /// TOML text, named `source` in messages; the files it names are relative to the working directory.
  static ConfigHandle text(std::string text, std::string source, std::vector<std::string> sets);
  /// The demo shipped in the module, what `epsim run` runs without a CONFIG.
  static ConfigHandle demo(std::vector<std::string> sets);

  /// The same source with `more` overrides after these (a later value of a key wins).
  ConfigHandle with_sets(const std::vector<std::string>& more) const;

  const experiments::ExperimentConfig& config() const { return cfg_; }
  const std::vector<std::string>& sets() const { return sets_; }
  /// The file, for a configuration loaded from one.
  std::optional<std::string> path() const;
  /// TOML text given as such (empty otherwise).
  const std::string& toml_text() const { return kind_ == Kind::text ? what_ : k_none; }
  /// The name the CLI gives its default results directory: the file's stem, "demo" for the demo.
  std::string stem() const;

 private:
  enum class Kind { file, text, demo };
  static const std::string k_none;
  ConfigHandle(Kind kind, std::string what, std::string source, std::vector<std::string> sets);

  Kind kind_;
  std::string what_;    // the path or the text
  std::string source_;  // the text's name in messages
  std::vector<std::string> sets_;
  experiments::ExperimentConfig cfg_;
};

}  // namespace epsim::python
