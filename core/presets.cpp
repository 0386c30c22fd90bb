// SPDX-License-Identifier: Apache-2.0
#include "core/presets.hpp"

#include <fmt/format.h>

#include <toml++/toml.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/csv_lines.hpp"
#include "core/error.hpp"
#include "core/toml_guard.hpp"

namespace epsim::core {

PresetCatalog::PresetCatalog(std::string kind, std::span<const EmbeddedFile> files) : kind_(std::move(kind)) {
  for (const EmbeddedFile& f : files) {
    const std::string name(f.name);
    try {
      tables_[name] = std::make_unique<toml::table>(toml::parse(f.content, label(name)));
    } catch (const toml::parse_error& e) {
      throw Error(fmt::format("{}: line {}: {}", label(name), e.source().begin.line, e.description()));
    }
  }
}

PresetCatalog::~PresetCatalog() = default;

std::vector<std::string> PresetCatalog::names() const {
  std::vector<std::string> out;
  out.reserve(tables_.size());
  for (const auto& [name, table] : tables_) {
    out.push_back(name);
  }
  return out;
}

bool is_preset_path(const std::string& name) {
  return name.size() > 5 && name.ends_with(".toml");
}

bool PresetCatalog::contains(const std::string& name) const {
  return tables_.count(name) > 0 || (is_preset_path(name) && std::filesystem::is_regular_file(name));
}

const toml::table& PresetCatalog::file(const std::string& path) const {
  const std::lock_guard<std::mutex> lock(files_mutex_);
  auto& slot = files_[path];
  if (!slot) {
    try {
      std::ifstream in(path, std::ios::binary);
      if (!in) {
        throw Error(path + ": cannot read");
      }
      const std::string text = read_whole_input(in, path);
      check_toml_key_depth(text, path);
      slot = std::make_unique<toml::table>(toml::parse(text, path));
    } catch (const toml::parse_error& e) {
      files_.erase(path);
      throw Error(fmt::format("{}: line {}: {}", path, e.source().begin.line, e.description()));
    }
  }
  return *slot;
}

std::string PresetCatalog::unknown_message(const std::string& name) const {
  if (contains(name)) {
    return {};
  }
  if (is_preset_path(name)) {
    return fmt::format("{} preset file \"{}\" not found", kind_, name);
  }
  return fmt::format("unknown {} preset \"{}\"; valid names are: {} (or a .toml file's path)", kind_, name,
                     fmt::join(names(), ", "));
}

ParamLayer preset_layer(const ParamTable& t, std::string_view key, const PresetCatalog& catalog,
                        const std::string& name) {
  if (const std::string unknown = catalog.unknown_message(name); !unknown.empty()) {
    t.fail(key, unknown);
  }
  return ParamLayer{&catalog.get(name, "", ""), catalog.label(name)};
}

const toml::table& PresetCatalog::get(const std::string& name, const std::string& source,
                                      const std::string& key) const {
  if (is_preset_path(name) && tables_.count(name) == 0) {
    if (!std::filesystem::is_regular_file(name)) {
      throw ConfigError(source, key, unknown_message(name));
    }
    return file(name);
  }
  auto it = tables_.find(name);
  if (it == tables_.end()) {
    throw ConfigError(source, key, unknown_message(name));
  }
  return *it->second;
}

}  // namespace epsim::core
