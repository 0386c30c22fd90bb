// SPDX-License-Identifier: Apache-2.0
#pragma once
// Reading engines' JSON placement files with errors that name the file and the key path
// ("FILE: physical_to_logical_map[3][17]: expected an integer").
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace epsim::engines {

/// Parses `text`; throws core::Error "`where`: invalid JSON: ..." on a syntax error.
nlohmann::json parse_json(const std::string& text, const std::string& where);
/// `j[key]`, which must exist; `what` says what was expected there.
const nlohmann::json& required_key(const nlohmann::json& j, const std::string& key, const std::string& what,
                                   const std::string& where);
/// A list of integers at `path` (named in errors).
std::vector<int> int_list(const nlohmann::json& j, const std::string& path, const std::string& where);
/// A list of lists of integers at `path`.
std::vector<std::vector<int>> int_rows(const nlohmann::json& j, const std::string& path, const std::string& where);

}  // namespace epsim::engines
