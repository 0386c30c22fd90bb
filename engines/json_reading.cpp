// SPDX-License-Identifier: Apache-2.0
#include "engines/json_reading.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_depth.hpp"
#include "core/message_text.hpp"

namespace epsim::engines {

nlohmann::json parse_json(const std::string& text, const std::string& where) {
  core::check_json_depth(text, where);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw core::Error(where + ": invalid JSON: " + e.what());
  }
}

const nlohmann::json& required_key(const nlohmann::json& j, const std::string& key, const std::string& what,
                                   const std::string& where) {
  if (!j.is_object() || !j.contains(key)) {
    throw core::Error(fmt::format("{}: expected a key \"{}\" ({})", where, key, what));
  }
  return j[key];
}

std::vector<int> int_list(const nlohmann::json& j, const std::string& path, const std::string& where) {
  if (!j.is_array()) {
    throw core::Error(fmt::format("{}: {}: expected a list of integers", where, path));
  }
  std::vector<int> out;
  out.reserve(j.size());
  for (std::size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_number_integer()) {
      throw core::Error(
          fmt::format("{}: {}[{}]: expected an integer, got {}", where, path, i, core::excerpt(j[i].dump())));
    }
    out.push_back(j[i].get<int>());
  }
  return out;
}

std::vector<std::vector<int>> int_rows(const nlohmann::json& j, const std::string& path, const std::string& where) {
  if (!j.is_array()) {
    throw core::Error(fmt::format("{}: {}: expected a list of lists of integers", where, path));
  }
  std::vector<std::vector<int>> out;
  out.reserve(j.size());
  for (std::size_t i = 0; i < j.size(); ++i) {
    out.push_back(int_list(j[i], fmt::format("{}[{}]", path, i), where));
  }
  return out;
}

}  // namespace epsim::engines
