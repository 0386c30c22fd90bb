// SPDX-License-Identifier: Apache-2.0
#pragma once
// Walker/Vose alias tables with one packed 64-bit entry per column, for the step loop's per-token picks.
#include <cstdint>
#include <span>
#include <vector>

#include "core/random_streams.hpp"

namespace epsim::workloads {

/// The columns of alias tables over `n` categories: the table is padded with impossible columns to a power
/// of two, 2^bits columns (bits >= 1), so one 64-bit output draws a pick: its top `bits` bits choose the
/// column, its low 64 - bits bits are the coin. A column's entry holds the coin's threshold in its high
/// 64 - bits bits (the column keeps its own index when coin < threshold) and the alias in its low `bits`
/// bits; a column of probability 1 is its own alias, so no case needs a branch. The threshold is
/// floor(probability x 2^(64 - bits)), so every column's probability is exact to 2^-(64 - bits): 2^-54 for
/// up to 1,024 categories, 2^-48 at the 65,536 the model files allow (finer than the doubles the
/// probabilities came in, for probabilities of 1/2 or more).
struct AliasShape {
  int bits = 1;
  std::size_t columns = 2;  // 2^bits
  static AliasShape of(std::size_t categories);
};

/// One pick from packed columns (`shape.columns` of them) with one 64-bit output `u`: one load and a
/// branch-free select.
inline int alias_pick(const std::uint64_t* columns, int bits, std::uint64_t u) {
  const std::uint64_t column = u >> (64 - bits);
  const std::uint64_t entry = columns[column];
  const std::uint64_t coin = (u << bits) >> bits;
  const std::uint64_t alias = entry & ((std::uint64_t{1} << bits) - 1);
  const std::uint64_t take_alias = std::uint64_t{0} - static_cast<std::uint64_t>(coin >= (entry >> bits));
  return static_cast<int>(column ^ ((column ^ alias) & take_alias));
}

/// Builds packed alias columns; reuses its buffers, so rebuilding allocates nothing once they are sized.
class AliasBuilder {
 public:
  /// Writes the columns of `p` (non-negative, not all zero; any sum) into `out` (AliasShape::of(p.size())
  /// columns).
  void build(std::span<const double> p, std::span<std::uint64_t> out);

 private:
  std::vector<double> prob_;
  std::vector<int> small_;
  std::vector<int> large_;
};

/// One alias table: O(n) build into reused buffers, O(1) draws of one 64-bit output each. (Boost's
/// discrete_distribution implements the same method but allocates on every rebuild, and the step loop
/// must not allocate.)
class AliasTable {
 public:
  void build(std::span<const double> p);
  int draw(core::Rng& rng) const { return alias_pick(columns_.data(), shape_.bits, rng()); }
  std::size_t size() const { return size_; }

 private:
  AliasBuilder builder_;
  std::vector<std::uint64_t> columns_;
  AliasShape shape_;
  std::size_t size_ = 0;
};

/// Many alias tables over the same categories in one contiguous buffer (table k's columns follow table
/// k - 1's), so the tables a step draws from share cache lines and pages.
class AliasTables {
 public:
  /// `tables` tables over `categories` categories, all impossible until set.
  void resize(std::size_t tables, std::size_t categories);
  void set(std::size_t table, std::span<const double> p);
  const std::uint64_t* columns(std::size_t table) const { return columns_.data() + table * shape_.columns; }
  int bits() const { return shape_.bits; }
  int draw(std::size_t table, core::Rng& rng) const { return alias_pick(columns(table), shape_.bits, rng()); }

 private:
  AliasBuilder builder_;
  std::vector<std::uint64_t> columns_;
  AliasShape shape_;
  std::size_t categories_ = 0;
};

}  // namespace epsim::workloads
