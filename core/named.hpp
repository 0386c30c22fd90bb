// SPDX-License-Identifier: Apache-2.0
#pragma once
// The entry called `name` of a static table of named entries (the importer and format registries), or
// null: the one lookup those tables share.
#include <span>
#include <string_view>

namespace epsim::core {

template <class T>
const T* find_named(std::span<const T> entries, std::string_view name) {
  for (const T& e : entries) {
    if (e.name == name) {
      return &e;
    }
  }
  return nullptr;
}

}  // namespace epsim::core
