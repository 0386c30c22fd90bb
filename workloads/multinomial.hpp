#pragma once
// One multinomial draw of `picks` items over categories with probabilities `p`, by conditional binomials
// in the given `order` (most probable first stops early once every pick is placed). No category may
// exceed `cap` (a token picks distinct experts): any excess is passed to the next categories in order.
#include <cstdint>
#include <span>
#include <vector>

#include "sim/core/random_streams.hpp"

namespace epsim::workloads {

/// Walker/Vose alias table: O(n) build into reused buffers, O(1) draws. (Boost's discrete_distribution
/// implements the same method but allocates on every rebuild, and the step loop must not allocate.)
class AliasTable {
 public:
  void build(std::span<const double> p);
  int draw(core::Rng& rng) const;

 private:
  std::vector<double> prob_;
  std::vector<int> alias_;
  std::vector<int> small_;
  std::vector<int> large_;
};

/// Draws picks one by one from the alias table for small draws (picks <= 4 x categories) and by
/// conditional binomials otherwise; both are exact multinomial draws. `alias` is a reusable workspace.
/// With `approximate`, a conditional binomial B(n, q) whose variance n q (1 - q) is at least 25 is drawn as
/// round(N(n q, n q (1 - q))) clamped to [0, n] (moment-matched normal); smaller ones stay exact.
void multinomial_capped(core::Rng& rng, std::int64_t picks, std::int64_t cap, std::span<const double> p,
                        std::span<const int> order, std::span<std::int32_t> out, AliasTable& alias,
                        bool approximate = false);
void multinomial_capped(core::Rng& rng, std::int64_t picks, std::int64_t cap, std::span<const double> p,
                        std::span<const int> order, std::span<std::int32_t> out, bool approximate = false);

/// Caps probabilities at `cap` by water-filling (the excess is shared by the others in proportion to
/// their mass); `p` sums to 1 before and after. Needs cap * size >= 1.
void water_fill_cap(std::span<double> p, double cap);

}  // namespace epsim::workloads
