// SPDX-License-Identifier: Apache-2.0
#include "python/config_handle.hpp"

#include <filesystem>

#include "experiments/cli/command_line.hpp"

namespace epsim::python {

const std::string ConfigHandle::k_none;

ConfigHandle::ConfigHandle(Kind kind, std::string what, std::string source, std::vector<std::string> sets)
    : kind_(kind), what_(std::move(what)), source_(std::move(source)), sets_(std::move(sets)) {
  switch (kind_) {
    case Kind::file:
      cfg_ = experiments::load_experiment(what_, sets_);
      break;
    case Kind::text:
      cfg_ = experiments::load_config_text(what_, source_, sets_);
      break;
    case Kind::demo:
      cfg_ = experiments::load_experiment(std::nullopt, sets_);
      break;
  }
}

ConfigHandle ConfigHandle::file(std::string path, std::vector<std::string> sets) {
  return {Kind::file, std::move(path), "", std::move(sets)};
}

ConfigHandle ConfigHandle::text(std::string text, std::string source, std::vector<std::string> sets) {
  return {Kind::text, std::move(text), std::move(source), std::move(sets)};
}

ConfigHandle ConfigHandle::demo(std::vector<std::string> sets) {
  return {Kind::demo, "", "", std::move(sets)};
}

ConfigHandle ConfigHandle::with_sets(const std::vector<std::string>& more) const {
  std::vector<std::string> all = sets_;
  all.insert(all.end(), more.begin(), more.end());
  return {kind_, what_, source_, std::move(all)};
}

std::optional<std::string> ConfigHandle::path() const {
  return kind_ == Kind::file ? std::optional<std::string>(what_) : std::nullopt;
}

std::string ConfigHandle::stem() const {
  switch (kind_) {
    case Kind::file:
      return std::filesystem::path(what_).stem().string();
    case Kind::text:
      return std::filesystem::path(source_).stem().string();
    case Kind::demo:
      break;
  }
  return "demo";
}

}  // namespace epsim::python
