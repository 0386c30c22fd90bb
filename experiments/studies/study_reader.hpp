// SPDX-License-Identifier: Apache-2.0
#pragma once
// Reads a study file's tables with errors that name the file, the key and what was expected
// (study_spec.cpp, study_axis.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <toml++/toml.h>

#include "core/error.hpp"

namespace epsim::experiments {

// Reads one study file with errors that name it and the key.
class StudyReader {
 public:
  explicit StudyReader(std::string source) : source_(std::move(source)) {}
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw core::ConfigError(source_, key, what);
  }
  const std::string& source() const { return source_; }

  template <class T>
  std::optional<T> get(const toml::table& t, const std::string& prefix, std::string_view key, std::string_view type) {
    const toml::node* n = t.get(key);
    if (!n) {
      return std::nullopt;
    }
    if constexpr (std::is_same_v<T, double>) {
      if (const auto v = n->value<double>()) {
        return *v;
      }
    } else if (const auto v = n->value_exact<T>()) {
      return *v;
    }
    fail(prefix + std::string(key), fmt::format("expected {}", type));
  }

  std::vector<std::string> strings(const toml::table& t, const std::string& prefix, std::string_view key) {
    std::vector<std::string> out;
    const toml::node* n = t.get(key);
    if (!n) {
      return out;
    }
    const toml::array* a = n->as_array();
    if (!a) {
      fail(prefix + std::string(key), "expected a list of strings");
    }
    for (const toml::node& item : *a) {
      const auto s = item.value_exact<std::string>();
      if (!s) {
        fail(prefix + std::string(key), "expected a list of strings");
      }
      out.push_back(*s);
    }
    return out;
  }

  // Every key of `t` must be one of `known`.
  void only(const toml::table& t, const std::string& prefix, std::initializer_list<std::string_view> known) const {
    for (const auto& [k, v] : t) {
      if (std::find(known.begin(), known.end(), k.str()) == known.end()) {
        fail(prefix + std::string(k.str()),
             fmt::format("unknown key; valid keys are: {}", fmt::join(known.begin(), known.end(), ", ")));
      }
    }
  }

 private:
  std::string source_;
};

}  // namespace epsim::experiments
