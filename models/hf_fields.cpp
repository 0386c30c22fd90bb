// SPDX-License-Identifier: Apache-2.0
#include "models/hf_fields.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace epsim::models {
namespace {

// How a JSON value reads in a message: its type, and the value itself when short.
std::string describe(const nlohmann::json& v) {
  std::string text = v.dump();
  if (text.size() > 40) {
    text = text.substr(0, 37) + "...";
  }
  return fmt::format("{} {}", v.type_name(), text);
}

bool contains(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

HfFields::HfFields(const nlohmann::json& object, std::string file, std::string prefix)
    : object_(object), file_(std::move(file)), prefix_(std::move(prefix)) {}

const nlohmann::json* HfFields::find(std::string_view key) const {
  const auto it = object_.find(std::string(key));
  return it == object_.end() ? nullptr : &*it;
}

bool HfFields::has(std::string_view key) const {
  const nlohmann::json* v = find(key);
  return v != nullptr && !v->is_null();
}

void HfFields::mark(std::string_view key) {
  if (!contains(read_, key)) {
    read_.emplace_back(key);
  }
}

void HfFields::fail(std::string_view key, const std::string& what) const {
  throw core::Error(fmt::format("{}: {}: {}", file_, path(key), what));
}

std::optional<std::int64_t> HfFields::optional_integer(std::string_view key, std::int64_t min, std::int64_t max) {
  mark(key);
  const nlohmann::json* v = find(key);
  if (v == nullptr || v->is_null()) {
    return std::nullopt;
  }
  if (!v->is_number_integer()) {
    fail(key, fmt::format("expected an integer, got {}", describe(*v)));
  }
  // An unsigned value above int64's range reads as negative through get<int64_t>: test the sign first.
  if (v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(max)) {
    fail(key, fmt::format("expected an integer in [{}, {}], got {}", min, max, v->dump()));
  }
  const auto value = v->get<std::int64_t>();
  if (value < min || value > max) {
    fail(key, fmt::format("expected an integer in [{}, {}], got {}", min, max, value));
  }
  return value;
}

std::int64_t HfFields::integer(std::string_view key, std::int64_t min, std::int64_t max) {
  if (const std::optional<std::int64_t> v = optional_integer(key, min, max)) {
    return *v;
  }
  fail(key, find(key) == nullptr ? "missing; expected an integer" : "expected an integer, got null");
}

bool HfFields::boolean(std::string_view key, bool absent) {
  mark(key);
  const nlohmann::json* v = find(key);
  if (v == nullptr || v->is_null()) {
    return absent;
  }
  if (!v->is_boolean()) {
    fail(key, fmt::format("expected true or false, got {}", describe(*v)));
  }
  return v->get<bool>();
}

std::optional<std::string> HfFields::optional_string(std::string_view key) {
  mark(key);
  const nlohmann::json* v = find(key);
  if (v == nullptr || v->is_null()) {
    return std::nullopt;
  }
  if (!v->is_string()) {
    fail(key, fmt::format("expected a string, got {}", describe(*v)));
  }
  return v->get<std::string>();
}

std::vector<std::int64_t> HfFields::integer_list(std::string_view key, std::size_t max_size) {
  mark(key);
  const nlohmann::json* v = find(key);
  std::vector<std::int64_t> out;
  if (v == nullptr || v->is_null()) {
    return out;
  }
  if (!v->is_array() || v->size() > max_size) {
    fail(key, fmt::format("expected a list of at most {} integers, got {}", max_size, describe(*v)));
  }
  for (const nlohmann::json& e : *v) {
    if (!e.is_number_integer() || e.get<std::int64_t>() < 0 || e.get<std::int64_t>() > k_max_hf_integer) {
      fail(key,
           fmt::format("expected a list of integers in [0, {}], got an element {}", k_max_hf_integer, describe(e)));
    }
    out.push_back(e.get<std::int64_t>());
  }
  return out;
}

std::vector<std::string> HfFields::string_list(std::string_view key, std::size_t max_size) {
  mark(key);
  const nlohmann::json* v = find(key);
  std::vector<std::string> out;
  if (v == nullptr || v->is_null()) {
    return out;
  }
  if (!v->is_array() || v->size() > max_size) {
    fail(key, fmt::format("expected a list of at most {} strings, got {}", max_size, describe(*v)));
  }
  for (const nlohmann::json& e : *v) {
    if (!e.is_string()) {
      fail(key, fmt::format("expected a list of strings, got an element {}", describe(e)));
    }
    out.push_back(e.get<std::string>());
  }
  return out;
}

std::int64_t HfFields::uniform_integer(std::string_view key, std::int64_t layers, std::int64_t min) {
  const nlohmann::json* v = find(key);
  if (v == nullptr || !v->is_array()) {
    return integer(key, min);
  }
  const std::vector<std::int64_t> values = integer_list(key);
  if (static_cast<std::int64_t>(values.size()) != layers) {
    fail(key, fmt::format("expected one value per layer ({}), got {}", layers, values.size()));
  }
  for (const std::int64_t x : values) {
    if (x != values.front()) {
      fail(key, fmt::format("differs between layers ({} and {}): epsim gives every MoE layer the same shape",
                            values.front(), x));
    }
  }
  if (values.front() < min) {
    fail(key, fmt::format("expected values >= {}, got {}", min, values.front()));
  }
  return values.front();
}

const nlohmann::json* HfFields::object(std::string_view key) {
  mark(key);
  const nlohmann::json* v = find(key);
  if (v == nullptr || v->is_null()) {
    return nullptr;
  }
  if (!v->is_object()) {
    fail(key, fmt::format("expected an object, got {}", describe(*v)));
  }
  return v;
}

void HfFields::ignore(std::initializer_list<std::string_view> keys) {
  for (const std::string_view k : keys) {
    if (find(k) != nullptr && !contains(ignored_, k)) {
      ignored_.emplace_back(k);
    }
  }
}

void HfFields::finish(std::span<const std::string> accepted, std::string_view family,
                      std::vector<std::string>& ignored) const {
  std::vector<std::string> accepted_here;
  for (const auto& [key, value] : object_.items()) {
    if (contains(read_, key) || contains(ignored_, key)) {
      continue;
    }
    if (std::find(accepted.begin(), accepted.end(), path(key)) == accepted.end()) {
      fail(key, fmt::format("unknown field of a {} config: epsim cannot tell whether it changes the cost; if it "
                            "does not, accept it with [model] hf_ignore = [\"{}\"]",
                            family, path(key)));
    }
    accepted_here.push_back(key);
  }
  // Ignored fields in the file's order of keys (nlohmann's objects are sorted by key).
  for (const auto& [key, value] : object_.items()) {
    if (!contains(read_, key) && (contains(ignored_, key) || contains(accepted_here, key))) {
      ignored.push_back(path(key));
    }
  }
}

}  // namespace epsim::models
