// SPDX-License-Identifier: Apache-2.0
#pragma once
// Typed reading of one JSON object of a Hugging Face config.json, by field name. Every field the reader
// maps or declares irrelevant is marked; what is left at the end is unknown and refused (unless the
// user accepted it by name), because epsim cannot tell whether it changes the cost. Errors are one
// line: the file, the field's JSON path ("text_config.num_hidden_layers") and what was expected.
#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace epsim::models {

inline constexpr std::int64_t k_max_hf_integer = std::int64_t{1} << 31;
/// The most layers a config.json may have (as [model] num_layers).
inline constexpr std::int64_t k_max_hf_layers = 1000;

class HfFields {
 public:
  /// `object` must outlive this reader; `prefix` is the object's JSON path ("" for the root, else
  /// "text_config." ...).
  HfFields(const nlohmann::json& object, std::string file, std::string prefix);

  const std::string& file() const { return file_; }
  /// The JSON path of field `key` of this object.
  std::string path(std::string_view key) const { return prefix_ + std::string(key); }
  /// Present and not null.
  bool has(std::string_view key) const;

  /// A required integer in [min, max] (no dimension is larger than 2^31).
  std::int64_t integer(std::string_view key, std::int64_t min = 1, std::int64_t max = k_max_hf_integer);
  /// An integer that may be absent or null.
  std::optional<std::int64_t> optional_integer(std::string_view key, std::int64_t min = 0,
                                               std::int64_t max = k_max_hf_integer);
  bool boolean(std::string_view key, bool absent);
  std::optional<std::string> optional_string(std::string_view key);
  /// A list of integers (absent or null: empty); at most `max_size` entries.
  std::vector<std::int64_t> integer_list(std::string_view key, std::size_t max_size = 4096);
  /// A list of strings (absent or null: empty).
  std::vector<std::string> string_list(std::string_view key, std::size_t max_size = 4096);
  /// An integer given either as one number or as a list of one number per layer, all equal (Hunyuan
  /// writes per-layer lists); `layers` entries when a list.
  std::int64_t uniform_integer(std::string_view key, std::int64_t layers, std::int64_t min = 1);
  /// A nested object (absent or null: nullopt), marked as read; its own fields are checked by the
  /// reader made from it.
  const nlohmann::json* object(std::string_view key);

  /// Marks fields as known not to change the cost: listed as ignored when present.
  void ignore(std::initializer_list<std::string_view> keys);
  /// Marks a field as read (its value was used by a caller that looked at it directly).
  void mark(std::string_view key);

  /// Throws core::Error: "FILE: PATH: WHAT".
  [[noreturn]] void fail(std::string_view key, const std::string& what) const;

  /// Refuses the first field neither read nor ignored unless its path is in `accepted` (then it is
  /// listed as ignored); appends the ignored fields' paths to `ignored`. `family` names the model
  /// family for the message.
  void finish(std::span<const std::string> accepted, std::string_view family, std::vector<std::string>& ignored) const;

 private:
  const nlohmann::json* find(std::string_view key) const;
  const nlohmann::json& object_;
  std::string file_;
  std::string prefix_;
  std::vector<std::string> read_;
  std::vector<std::string> ignored_;
};

}  // namespace epsim::models
