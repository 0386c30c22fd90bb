// SPDX-License-Identifier: Apache-2.0
#pragma once
// A named registry of policy factories with descriptions and documented parameters (SimGrid's
// ModuleGroup): configs name an entry, `epsim list policies` prints every entry with its parameters,
// and an unknown name answers with the valid ones. Each registry is a function-local static.
#include <fmt/format.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/params.hpp"

namespace epsim::policies {

template <class Interface>
class Registry {
 public:
  /// Parses its parameters from the table (and calls finish()), then builds the policy.
  using Factory = std::function<std::unique_ptr<Interface>(core::ParamTable&)>;
  struct Entry {
    std::string name;
    std::string description;
    Factory make;
  };

  explicit Registry(std::string kind) : kind_(std::move(kind)) {}
  void add(std::string name, std::string description, Factory make) {
    entries_.push_back(Entry{std::move(name), std::move(description), std::move(make)});
  }
  /// An entry a policy's own file provides (e.g. a trigger's `..._entry()`): one registry line.
  void add(Entry e) { entries_.push_back(std::move(e)); }
  const std::string& kind() const { return kind_; }
  const std::vector<Entry>& entries() const { return entries_; }

  const Entry* find(const std::string& name) const {
    for (const Entry& e : entries_) {
      if (e.name == name) {
        return &e;
      }
    }
    return nullptr;
  }

  std::vector<std::string> names() const {
    std::vector<std::string> out;
    out.reserve(entries_.size());
    for (const Entry& e : entries_) {
      out.push_back(e.name);
    }
    return out;
  }

  /// "unknown <kind> policy "x"; valid values are: a, b" for an unknown name, else "".
  std::string unknown_message(const std::string& name) const {
    return find(name)
               ? std::string()
               : fmt::format("unknown {} policy \"{}\"; valid values are: {}", kind_, name, fmt::join(names(), ", "));
  }

  /// Builds `name` with `params` (its options table); throws core::Error for an unknown name.
  std::unique_ptr<Interface> create(const std::string& name, core::ParamTable& params) const {
    const Entry* e = find(name);
    if (!e) {
      throw core::Error(unknown_message(name));
    }
    return e->make(params);
  }

  /// The documented parameters of an entry (its factory run in documentation mode).
  std::vector<core::ParamDoc> docs(const Entry& e) const {
    core::ParamTable t(std::string{});
    e.make(t);
    return t.docs();
  }

 private:
  std::string kind_;
  std::vector<Entry> entries_;
};

class PlacementPolicy;
class RoutingPolicy;
class TriggerFactory;
const Registry<PlacementPolicy>& placement_registry();
const Registry<RoutingPolicy>& routing_registry();
/// Rebalance triggers ([policy.rebalance] trigger = NAME); "none" makes a null factory (static placement).
const Registry<TriggerFactory>& trigger_registry();

}  // namespace epsim::policies
