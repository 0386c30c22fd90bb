// SPDX-License-Identifier: Apache-2.0
#include "core/params.hpp"

#include <fmt/format.h>

#include <toml++/toml.h>
#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace epsim::core {
namespace {

std::string format_real(double v) {
  if (std::isinf(v)) {
    return v > 0 ? "inf" : "-inf";
  }
  return fmt::format("{}", v);
}

std::string describe_bounds(RealBounds b) {
  const bool has_min = std::isfinite(b.min);
  const bool has_max = std::isfinite(b.max);
  if (has_min && has_max) {
    return fmt::format("in {}{}, {}]", b.min_exclusive ? "(" : "[", format_real(b.min), format_real(b.max));
  }
  if (has_min) {
    return fmt::format("{} {}", b.min_exclusive ? ">" : ">=", format_real(b.min));
  }
  if (has_max) {
    return fmt::format("<= {}", format_real(b.max));
  }
  return "";
}

std::string describe_bounds(IntBounds b) {
  const bool has_min = b.min != std::numeric_limits<std::int64_t>::min();
  const bool has_max = b.max != std::numeric_limits<std::int64_t>::max();
  if (has_min && has_max) {
    return fmt::format("in [{}, {}]", b.min, b.max);
  }
  if (has_min) {
    return fmt::format(">= {}", b.min);
  }
  if (has_max) {
    return fmt::format("<= {}", b.max);
  }
  return "";
}

// A bound as the docs print it: powers of two and of ten far from 1 as 2^k and 1ek, which read (and
// compare) more easily than their digits; error messages keep the digits of describe_bounds.
std::string readable_number(double v) {
  const double a = std::fabs(v);
  if (!std::isfinite(v) || a == 0.0 || (a > 1.0 / 512.0 && a < 65536.0)) {
    return format_real(v);
  }
  const std::string_view sign = v < 0 ? "-" : "";
  if (const int two = std::ilogb(a); std::ldexp(1.0, two) == a) {
    return fmt::format("{}2^{}", sign, two);
  }
  if (const double ten = std::round(std::log10(a)); std::pow(10.0, ten) == a) {
    return fmt::format("{}1e{}", sign, ten);
  }
  return format_real(v);
}

std::string readable_bounds(double min, bool min_exclusive, bool has_min, double max, bool has_max) {
  if (has_min && has_max) {
    return fmt::format("in {}{}, {}]", min_exclusive ? "(" : "[", readable_number(min), readable_number(max));
  }
  if (has_min) {
    return fmt::format("{} {}", min_exclusive ? ">" : ">=", readable_number(min));
  }
  if (has_max) {
    return fmt::format("<= {}", readable_number(max));
  }
  return "";
}

std::string readable_bounds(RealBounds b) {
  return readable_bounds(b.min, b.min_exclusive, std::isfinite(b.min), b.max, std::isfinite(b.max));
}

std::string readable_bounds(IntBounds b) {
  return readable_bounds(static_cast<double>(b.min), false, b.min != std::numeric_limits<std::int64_t>::min(),
                         static_cast<double>(b.max), b.max != std::numeric_limits<std::int64_t>::max());
}

std::string type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return fmt::format("the string \"{}\"", n.value_or(std::string()));
    case toml::node_type::integer:
      return fmt::format("the integer {}", n.value_or(std::int64_t{0}));
    case toml::node_type::floating_point:
      return fmt::format("the number {}", n.value_or(0.0));
    case toml::node_type::boolean:
      return n.value_or(false) ? "true" : "false";
    default:
      return "a date/time";
  }
}

// The value of a TOML integer or float as a double; nullopt for any other type.
std::optional<double> number_of(const toml::node& n) {
  if (n.is_floating_point() || n.is_integer()) {
    return n.value<double>();
  }
  return std::nullopt;
}

bool in_bounds(double v, RealBounds b) {
  if (std::isnan(v)) {
    return false;
  }
  const bool above = b.min_exclusive ? v > b.min : v >= b.min;
  return above && v <= b.max;
}

}  // namespace

std::string describe_source(const toml::node& node, const std::string& fallback) {
  const auto& src = node.source();
  if (src.path && !src.path->empty()) {
    return *src.path;
  }
  return fallback;
}

ParamTable::ParamTable(std::string path)
    : path_(std::move(path)), documenting_(true), shared_(std::make_shared<Shared>()) {}

ParamTable::ParamTable(std::vector<ParamLayer> layers, std::string path)
    : layers_(std::move(layers)), path_(std::move(path)), shared_(std::make_shared<Shared>()) {
  std::erase_if(layers_, [](const ParamLayer& l) { return l.table == nullptr; });
}

ParamTable::~ParamTable() = default;
ParamTable::ParamTable(ParamTable&&) noexcept = default;
ParamTable& ParamTable::operator=(ParamTable&&) noexcept = default;

std::string ParamTable::full_key(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

bool ParamTable::contains(std::string_view key) const {
  return find(key, nullptr) != nullptr;
}

std::string ParamTable::source_of(std::string_view key) const {
  const ParamLayer* from = nullptr;
  return find(key, &from) != nullptr ? from->source : std::string();
}

int ParamTable::rank_of(std::string_view source) const {
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    if (layers_[i].source == source) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

const toml::node* ParamTable::find(std::string_view key, const ParamLayer** from) const {
  for (const ParamLayer& layer : layers_) {
    if (const toml::node* n = layer.table->get(key)) {
      if (from) {
        *from = &layer;
      }
      return n;
    }
  }
  return nullptr;
}

void ParamTable::fail(std::string_view key, const std::string& what) const {
  const ParamLayer* from = nullptr;
  find(key, &from);
  std::string source = from ? from->source : (layers_.empty() ? std::string("config") : layers_.front().source);
  throw ConfigError(source, full_key(key), what);
}

void ParamTable::record(std::string_view key, std::string type, std::string bounds, std::string def,
                        std::string_view doc) {
  mark_read(key);
  const std::string k = full_key(key);
  auto& docs = shared_->docs;
  if (std::none_of(docs.begin(), docs.end(), [&](const ParamDoc& d) { return d.key == k; })) {
    docs.push_back(ParamDoc{k, std::move(type), std::move(bounds), std::move(def), std::string(doc)});
  }
}

void ParamTable::mark_read(std::string_view key) {
  if (std::find(read_keys_.begin(), read_keys_.end(), key) == read_keys_.end()) {
    read_keys_.emplace_back(key);
  }
}

std::optional<double> ParamTable::read_real(std::string_view key, RealBounds b) {
  const toml::node* n = find(key, nullptr);
  if (!n) {
    return std::nullopt;
  }
  const std::optional<double> v = number_of(*n);
  const std::string range = describe_bounds(b);
  if (!v.has_value()) {
    fail(key, fmt::format("expected a number{}{}, got {}", range.empty() ? "" : " ", range, type_name(*n)));
  }
  const double x = v.value_or(0.0);
  if (!std::isfinite(x)) {
    fail(key, fmt::format("expected a finite number{}{}, got {}", range.empty() ? "" : " ", range, format_real(x)));
  }
  if (!in_bounds(x, b)) {
    fail(key, fmt::format("expected a number {}, got {}", range, format_real(x)));
  }
  return x;
}

std::optional<std::int64_t> ParamTable::read_integer(std::string_view key, IntBounds b) {
  const toml::node* n = find(key, nullptr);
  if (!n) {
    return std::nullopt;
  }
  const std::string range = describe_bounds(b);
  if (!n->is_integer()) {
    fail(key, fmt::format("expected an integer{}{}, got {}", range.empty() ? "" : " ", range, type_name(*n)));
  }
  const std::int64_t v = n->value_or(std::int64_t{0});
  if (v < b.min || v > b.max) {
    fail(key, fmt::format("expected an integer {}, got {}", range, v));
  }
  return v;
}

double ParamTable::real(std::string_view key, double def, std::string_view doc, RealBounds b) {
  record(key, "number", readable_bounds(b), format_real(def), doc);
  return read_real(key, b).value_or(def);
}

std::optional<double> ParamTable::optional_real(std::string_view key, std::string_view absent, std::string_view doc,
                                                RealBounds b) {
  record(key, "number", readable_bounds(b), fmt::format("none ({})", absent), doc);
  return read_real(key, b);
}

std::optional<std::int64_t> ParamTable::optional_integer(std::string_view key, std::string_view absent,
                                                         std::string_view doc, IntBounds b) {
  record(key, "integer", readable_bounds(b), fmt::format("none ({})", absent), doc);
  return read_integer(key, b);
}

double ParamTable::real_required(std::string_view key, std::string_view doc, RealBounds b) {
  record(key, "number", readable_bounds(b), "", doc);
  if (documenting_) {
    return 0.0;
  }
  if (auto v = read_real(key, b)) {
    return *v;
  }
  fail(key, "missing required key (" + std::string(doc) + ")");
}

std::int64_t ParamTable::integer(std::string_view key, std::int64_t def, std::string_view doc, IntBounds b) {
  record(key, "integer", readable_bounds(b), std::to_string(def), doc);
  return read_integer(key, b).value_or(def);
}

std::int64_t ParamTable::integer_required(std::string_view key, std::string_view doc, IntBounds b) {
  record(key, "integer", readable_bounds(b), "", doc);
  if (documenting_) {
    return 0;
  }
  if (auto v = read_integer(key, b)) {
    return *v;
  }
  fail(key, "missing required key (" + std::string(doc) + ")");
}

bool ParamTable::boolean(std::string_view key, bool def, std::string_view doc) {
  record(key, "bool", "", def ? "true" : "false", doc);
  const toml::node* n = find(key, nullptr);
  if (!n) {
    return def;
  }
  if (!n->is_boolean()) {
    fail(key, "expected true or false, got " + type_name(*n));
  }
  return n->value_or(false);
}

std::string ParamTable::string(std::string_view key, std::string_view def, std::string_view doc) {
  record(key, "string", "", fmt::format("\"{}\"", def), doc);
  const toml::node* n = find(key, nullptr);
  if (!n) {
    return std::string(def);
  }
  if (!n->is_string()) {
    fail(key, "expected a string, got " + type_name(*n));
  }
  return n->value_or(std::string());
}

std::string ParamTable::choice(std::string_view key, std::string_view def, std::string_view doc,
                               std::span<const std::string_view> choices) {
  const std::string valid = fmt::format("{}", fmt::join(choices, ", "));
  record(key, "one of: " + valid, "", fmt::format("\"{}\"", def), doc);
  const toml::node* n = find(key, nullptr);
  if (!n) {
    return std::string(def);
  }
  if (!n->is_string()) {
    fail(key, "expected one of " + valid + ", got " + type_name(*n));
  }
  std::string v = n->value_or(std::string());
  if (std::find(choices.begin(), choices.end(), v) == choices.end()) {
    fail(key, fmt::format("unknown value \"{}\"; valid values are: {}", v, valid));
  }
  return v;
}

std::vector<double> ParamTable::real_list(std::string_view key, std::string_view doc, RealBounds b) {
  const std::string range = describe_bounds(b);
  record(key, "list of numbers", readable_bounds(b), "[]", doc);
  const toml::node* n = find(key, nullptr);
  std::vector<double> out;
  if (!n) {
    return out;
  }
  const toml::array* arr = n->as_array();
  if (!arr) {
    fail(key, "expected a list of numbers, got " + type_name(*n));
  }
  for (std::size_t i = 0; i < arr->size(); ++i) {
    const toml::node& e = *arr->get(i);
    const std::optional<double> v = number_of(e);
    if (!v.has_value() || !in_bounds(v.value_or(0.0), b)) {
      fail(key,
           fmt::format("element {}: expected a number{}{}, got {}", i, range.empty() ? "" : " ", range, type_name(e)));
    }
    out.push_back(v.value_or(0.0));
  }
  return out;
}

std::vector<std::string> ParamTable::string_list(std::string_view key, std::string_view doc) {
  record(key, "list of strings", "", "[]", doc);
  const toml::node* n = find(key, nullptr);
  std::vector<std::string> out;
  if (!n) {
    return out;
  }
  const toml::array* arr = n->as_array();
  if (!arr) {
    fail(key, "expected a list of strings, got " + type_name(*n));
  }
  out.reserve(arr->size());
  for (std::size_t i = 0; i < arr->size(); ++i) {
    const toml::node& e = *arr->get(i);
    if (!e.is_string()) {
      fail(key, fmt::format("element {}: expected a string, got {}", i, type_name(e)));
    }
    out.push_back(e.as_string()->get());
  }
  return out;
}

ParamTable ParamTable::table(std::string_view key, std::string_view doc, std::string_view shorthand_key) {
  mark_read(key);
  ParamTable child(full_key(key));
  child.documenting_ = documenting_;
  child.shared_ = shared_;
  for (const ParamLayer& layer : layers_) {
    if (const toml::node* n = layer.table->get(key)) {
      if (n->is_string() && !shorthand_key.empty()) {
        auto made = std::make_shared<toml::table>();
        made->insert_or_assign(shorthand_key, *n->as_string());
        shared_->owned.push_back(made);
        child.layers_.push_back(ParamLayer{made.get(), layer.source});
        continue;
      }
      if (!n->is_table()) {
        throw ConfigError(
            layer.source, full_key(key),
            fmt::format("expected a table{}, got {}",
                        shorthand_key.empty() ? "" : fmt::format(" (or the {} as a string)", shorthand_key),
                        type_name(*n)));
      }
      child.layers_.push_back(ParamLayer{n->as_table(), layer.source});
    }
  }
  (void)doc;
  return child;
}

std::vector<ParamTable> ParamTable::table_array(std::string_view key, std::string_view doc) {
  mark_read(key);
  (void)doc;
  std::vector<ParamTable> out;
  if (documenting_) {
    out.emplace_back(full_key(key));
    out.back().shared_ = shared_;
    return out;
  }
  const ParamLayer* from = nullptr;
  const toml::node* n = find(key, &from);
  if (n == nullptr) {
    return out;
  }
  const toml::array* entries = n->as_array();
  if (entries == nullptr || !entries->is_array_of_tables()) {
    fail(key, fmt::format("expected an array of tables ([[{}]] entries), got {}", key, type_name(*n)));
  }
  for (std::size_t i = 0; i < entries->size(); ++i) {
    ParamTable entry({ParamLayer{entries->get(i)->as_table(), from->source}}, fmt::format("{}[{}]", full_key(key), i));
    entry.shared_ = shared_;
    out.push_back(std::move(entry));
  }
  return out;
}

void merge_tables(toml::table& dst, const toml::table& src) {
  for (const auto& [k, v] : src) {
    if (v.is_table() && dst.contains(k) && dst.get(k)->is_table()) {
      merge_tables(*dst.get(k)->as_table(), *v.as_table());
    } else {
      dst.insert_or_assign(k, v);
    }
  }
}

std::shared_ptr<const toml::table> ParamTable::merged_table(std::string_view key) const {
  auto out = std::make_shared<toml::table>();
  for (std::size_t i = layers_.size(); i-- > 0;) {  // lowest priority first
    if (const toml::table* t = layers_[i].table->get_as<toml::table>(key)) {
      merge_tables(*out, *t);
    }
  }
  return out;
}

void ParamTable::finish() const {
  if (documenting_) {
    return;
  }
  for (const ParamLayer& layer : layers_) {
    for (const auto& [k, v] : *layer.table) {
      const std::string_view key = k.str();
      if (std::find(read_keys_.begin(), read_keys_.end(), key) == read_keys_.end()) {
        std::vector<std::string> valid = read_keys_;
        std::sort(valid.begin(), valid.end());
        throw ConfigError(layer.source, full_key(key),
                          fmt::format("unknown key; valid keys here are: {}", fmt::join(valid, ", ")));
      }
    }
  }
}

}  // namespace epsim::core
