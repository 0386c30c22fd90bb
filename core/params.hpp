// SPDX-License-Identifier: Apache-2.0
#pragma once
// Typed, validated, self-documenting reading of one TOML table (SST's SST_ELI_DOCUMENT_PARAMS, ns-3's
// AddAttribute): the code that reads a key also states its default, range and one-line description.
// A ParamTable looks a key up in a chain of layers (e.g. --set overrides, the user's file, a preset);
// errors name the layer the value came from, the full dotted key and what was expected. Built with no
// layers it is in documentation mode: every getter returns its default and records the key's doc, so
// `epsim list` prints parameters from the same code that parses them.
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/time.hpp"

namespace toml {
inline namespace v3 {
class table;
class node;
}  // namespace v3
}  // namespace toml

namespace epsim::core {

/// One documented parameter, as `epsim list` prints it.
struct ParamDoc {
  std::string key;            ///< full dotted key, e.g. "cluster.intra_node.bw_gbps"
  std::string type;           ///< "integer", "number", "bool", "string", "one of: a, b", "list of numbers"
  std::string bounds;         ///< accepted range, e.g. "in [0, 1]", ">= 1", "> 0"; "" if unbounded
  std::string default_value;  ///< "" if required
  std::string description;
};

/// One layer of the lookup chain: a TOML table and the name of where it came from.
struct ParamLayer {
  const toml::table* table = nullptr;
  std::string source;  ///< file path, "preset gpus/h200", "--set"
};

struct RealBounds {
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool min_exclusive = false;
};
inline constexpr RealBounds k_positive{0.0, std::numeric_limits<double>::infinity(), true};
inline constexpr RealBounds k_non_negative{0.0, std::numeric_limits<double>::infinity(), false};
inline constexpr RealBounds k_unit_interval{0.0, 1.0, false};
/// Seconds of simulated time (time.hpp's k_max_time_s at most).
inline constexpr RealBounds k_time_s{0.0, k_max_time_s, false};
inline constexpr RealBounds k_positive_time_s{0.0, k_max_time_s, true};

/// One named value of a typed choice (ParamTable::choice<E>).
template <class E>
struct Choice {
  std::string_view name;
  E value;
};

/// The name of `value` among `choices` ("" when absent): for messages, echoes and `epsim list`.
template <class E>
std::string_view choice_name(std::span<const Choice<E>> choices, E value) {
  for (const Choice<E>& c : choices) {
    if (c.value == value) {
      return c.name;
    }
  }
  return {};
}

struct IntBounds {
  std::int64_t min = std::numeric_limits<std::int64_t>::min();
  std::int64_t max = std::numeric_limits<std::int64_t>::max();
};

class ParamTable {
 public:
  /// Documentation mode: getters return defaults and only record docs.
  explicit ParamTable(std::string path);
  ParamTable(std::vector<ParamLayer> layers, std::string path);
  ~ParamTable();
  ParamTable(ParamTable&&) noexcept;
  ParamTable& operator=(ParamTable&&) noexcept;

  bool documenting() const { return documenting_; }
  const std::string& path() const { return path_; }
  bool contains(std::string_view key) const;
  /// The source of the highest layer that gives `key` ("" when none does).
  std::string source_of(std::string_view key) const;
  /// The priority of the layer named `source` among this table's layers (0 = the highest); -1 when none.
  int rank_of(std::string_view source) const;

  double real(std::string_view key, double def, std::string_view doc, RealBounds b = {});
  double real_required(std::string_view key, std::string_view doc, RealBounds b = {});
  /// A number that may be absent (nullopt), where absence means something other than any value (no
  /// sentinel numbers for "not given"); `absent` says what, for the docs.
  std::optional<double> optional_real(std::string_view key, std::string_view absent, std::string_view doc,
                                      RealBounds b = {});
  std::int64_t integer(std::string_view key, std::int64_t def, std::string_view doc, IntBounds b = {});
  /// An integer that may be absent, like optional_real.
  std::optional<std::int64_t> optional_integer(std::string_view key, std::string_view absent, std::string_view doc,
                                               IntBounds b = {});
  std::int64_t integer_required(std::string_view key, std::string_view doc, IntBounds b = {});
  bool boolean(std::string_view key, bool def, std::string_view doc);
  std::string string(std::string_view key, std::string_view def, std::string_view doc);
  /// A string that must be one of `choices` (an unknown value lists the valid ones).
  std::string choice(std::string_view key, std::string_view def, std::string_view doc,
                     std::span<const std::string_view> choices);
  /// A typed choice: the string must name one of `choices`, whose value is returned (an unknown name
  /// lists the valid ones). Modes stay strings only in the config file, never after parsing.
  template <class E>
  E choice(std::string_view key, E def, std::string_view doc, std::span<const Choice<E>> choices) {
    std::vector<std::string_view> names;
    names.reserve(choices.size());
    std::string_view def_name;
    for (const Choice<E>& c : choices) {
      names.push_back(c.name);
      def_name = c.value == def ? c.name : def_name;
    }
    const std::string picked = choice(key, def_name, doc, names);
    for (const Choice<E>& c : choices) {
      if (c.name == picked) {
        return c.value;
      }
    }
    return def;
  }
  /// A list of numbers; missing gives an empty list.
  std::vector<double> real_list(std::string_view key, std::string_view doc, RealBounds b = {});
  /// A list of strings (empty when absent).
  std::vector<std::string> string_list(std::string_view key, std::string_view doc);
  /// Appends a lowest-priority layer (e.g. the preset a section names).
  void add_layer(ParamLayer layer) {
    if (layer.table) {
      layers_.push_back(std::move(layer));
    }
  }
  /// A nested table (missing gives an empty one); its keys are checked by its own finish(). With
  /// `shorthand_key`, a layer may give the table as a plain string: `key = "x"` reads as
  /// `[key] shorthand_key = "x"` (e.g. `policy.rebalance = "periodic"`).
  ParamTable table(std::string_view key, std::string_view doc, std::string_view shorthand_key = {});
  /// An array of tables (`[[key]]`), taken whole from the highest layer that has it (arrays do not merge
  /// across layers); each entry reads as a table named "key[i]". Missing gives none; in documentation
  /// mode one table named `key`, so its entries' keys are documented once.
  std::vector<ParamTable> table_array(std::string_view key, std::string_view doc);
  /// Appends `lower`'s layers below this table's own: a table that overrides another key by key (a
  /// pool's [pool.policy] over [policy]).
  void add_layers_below(const ParamTable& lower) {
    layers_.insert(layers_.end(), lower.layers_.begin(), lower.layers_.end());
  }
  /// The nested table `key` of every layer merged into one owned table (higher layers win, tables
  /// recursively): for options kept past parsing and read again later (a policy built per EP group).
  std::shared_ptr<const toml::table> merged_table(std::string_view key) const;

  /// Throws a ConfigError for `key`, naming the layer that supplied it (or the top layer).
  [[noreturn]] void fail(std::string_view key, const std::string& what) const;
  /// Throws on any key present in a layer but never read: "unknown key 'x'; valid keys are: ...".
  void finish() const;

  /// Docs recorded by this table and every nested table taken from it.
  const std::vector<ParamDoc>& docs() const { return shared_->docs; }

 private:
  struct Shared {
    std::vector<ParamDoc> docs;
    std::vector<std::shared_ptr<const toml::table>> owned;  // tables made from shorthand strings
  };
  const toml::node* find(std::string_view key, const ParamLayer** from) const;
  std::string full_key(std::string_view key) const;
  void record(std::string_view key, std::string type, std::string bounds, std::string def, std::string_view doc);
  void mark_read(std::string_view key);
  std::optional<double> read_real(std::string_view key, RealBounds b);
  std::optional<std::int64_t> read_integer(std::string_view key, IntBounds b);

  std::vector<ParamLayer> layers_;
  std::string path_;
  bool documenting_ = false;
  std::vector<std::string> read_keys_;
  std::shared_ptr<Shared> shared_;
};

/// Merges `src` into `dst`: tables recursively, any other value replaced (a layer over another).
void merge_tables(toml::table& dst, const toml::table& src);

/// Source name of a table for messages: the file a node came from if toml++ knows it, else `fallback`.
std::string describe_source(const toml::node& node, const std::string& fallback);

}  // namespace epsim::core
