#include "sim/core/presets.hpp"

#include <fmt/format.h>

#include <toml++/toml.h>

#include "sim/core/error.hpp"

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

bool PresetCatalog::contains(const std::string& name) const {
  return tables_.count(name) > 0;
}

std::string PresetCatalog::unknown_message(const std::string& name) const {
  return contains(name)
             ? std::string()
             : fmt::format("unknown {} preset \"{}\"; valid names are: {}", kind_, name, fmt::join(names(), ", "));
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
  auto it = tables_.find(name);
  if (it == tables_.end()) {
    throw ConfigError(
        source, key,
        fmt::format("unknown {} preset \"{}\"; valid names are: {}", kind_, name, fmt::join(names(), ", ")));
  }
  return *it->second;
}

}  // namespace epsim::core
