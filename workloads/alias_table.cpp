// SPDX-License-Identifier: Apache-2.0
#include "workloads/alias_table.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

#include "core/error.hpp"

namespace epsim::workloads {

AliasShape AliasShape::of(std::size_t categories) {
  if (categories > (std::size_t{1} << 16)) {
    throw core::Error("alias table: more than 65,536 categories");
  }
  AliasShape s;
  s.columns = std::max<std::size_t>(2, std::bit_ceil(categories));
  s.bits = std::countr_zero(s.columns);
  return s;
}

void AliasBuilder::build(std::span<const double> p, std::span<std::uint64_t> out) {
  const std::size_t n = out.size();  // a power of two >= p.size()
  const int bits = std::countr_zero(n);
  prob_.resize(n);
  small_.clear();
  large_.clear();
  double sum = 0.0;
  for (const double x : p) {
    sum += x;
  }
  // Padding columns have probability 0: always their alias.
  for (std::size_t i = 0; i < n; ++i) {
    prob_[i] = i < p.size() ? p[i] / sum * static_cast<double>(n) : 0.0;
    out[i] = i;  // own alias until paired
    (prob_[i] < 1.0 ? small_ : large_).push_back(static_cast<int>(i));
  }
  while (!small_.empty() && !large_.empty()) {
    const auto s = static_cast<std::size_t>(small_.back());
    small_.pop_back();
    const auto l = static_cast<std::size_t>(large_.back());
    out[s] = l;
    prob_[l] -= 1.0 - prob_[s];
    if (prob_[l] < 1.0) {
      large_.pop_back();
      small_.push_back(static_cast<int>(l));
    }
  }
  // Rounding leftovers are certain columns.
  for (const int i : large_) {
    prob_[static_cast<std::size_t>(i)] = 1.0;
  }
  for (const int i : small_) {
    prob_[static_cast<std::size_t>(i)] = 1.0;
  }
  const double scale = std::ldexp(1.0, 64 - bits);  // coins span [0, 2^(64 - bits))
  const std::uint64_t max_threshold = (~std::uint64_t{0}) >> bits;
  for (std::size_t i = 0; i < n; ++i) {
    // A certain column is its own alias: any threshold draws it. prob * 2^(64 - bits) < 2^63 is exact in a
    // double and truncates to the fixed point.
    const std::uint64_t threshold =
        prob_[i] >= 1.0 ? max_threshold : static_cast<std::uint64_t>(std::max(prob_[i], 0.0) * scale);
    if (prob_[i] >= 1.0) {
      out[i] = i;
    }
    out[i] |= threshold << bits;
  }
}

void AliasTable::build(std::span<const double> p) {
  shape_ = AliasShape::of(p.size());
  columns_.resize(shape_.columns);
  size_ = p.size();
  builder_.build(p, columns_);
}

void AliasTables::resize(std::size_t tables, std::size_t categories) {
  shape_ = AliasShape::of(categories);
  categories_ = categories;
  columns_.assign(tables * shape_.columns, 0);  // threshold 0, alias column 0
}

void AliasTables::set(std::size_t table, std::span<const double> p) {
  if (p.size() != categories_) {
    throw core::Error("alias tables: a distribution of the wrong size");
  }
  builder_.build(p, std::span<std::uint64_t>(columns_.data() + table * shape_.columns, shape_.columns));
}

}  // namespace epsim::workloads
