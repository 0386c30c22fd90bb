// SPDX-License-Identifier: Apache-2.0
#pragma once
// An exact multinomial draw of many picks by Poissonisation, for layers whose picks far outnumber the
// experts (prefill steps): independent X_e ~ Poisson(m p_e) with m = N - 2 sqrt(N) a little under the N
// picks, drawn in vector lanes (workloads/poisson_draws.hpp); redrawn whole when their sum S
// passes N (about 2 % of the time); then the N - S picks left are drawn the same way (or one by one from
// an alias table once few are left) and added. Given S = s the X_e are Multinomial(s, p), and the sum of
// independent multinomials over the same p is Multinomial(N, p): exact, like the conditional binomials it
// replaces (docs/workloads.md, routing.sampling = "poisson"), with other random numbers.
#include <cstdint>
#include <span>
#include <vector>

#include "core/isa.hpp"
#include "core/random_streams.hpp"
#include "workloads/alias_table.hpp"
#include "workloads/multinomial.hpp"
#include "workloads/poisson_draws.hpp"

namespace epsim::workloads {

class PoissonMultinomial {
 public:
  explicit PoissonMultinomial(core::Isa isa = core::active_isa()) : isa_(isa) {}
  /// For a routing source drawing as `sampling` says: the instruction set (and EPSIM_ISA) is read only when
  /// it is "poisson", so other runs never depend on it.
  explicit PoissonMultinomial(RoutingSampling sampling)
      : PoissonMultinomial(sampling == RoutingSampling::poisson ? core::active_isa() : core::Isa::baseline) {}
  /// Multinomial(picks, p / sum p) into `out` (p non-negative with a positive sum; out.size() == p.size()).
  void draw(core::Rng& rng, std::int64_t picks, std::span<const double> p, std::span<std::int32_t> out);
  /// The same draw with every count clipped at `cap` and the clipped picks placed as multinomial_capped
  /// places them (on the earliest categories of `order` with room).
  void draw_capped(core::Rng& rng, std::int64_t picks, std::int64_t cap, std::span<const double> p,
                   std::span<const int> order, std::span<std::int32_t> out);
  /// Poisson rounds drawn, and rounds redrawn because their sum passed the picks left.
  std::int64_t rounds() const { return rounds_; }
  std::int64_t redraws() const { return redraws_; }

 private:
  core::Isa isa_;
  PoissonDraws draws_;
  AliasTable alias_;
  std::vector<double> mean_;
  std::vector<std::int64_t> counts_;
  std::int64_t rounds_ = 0;
  std::int64_t redraws_ = 0;
};

}  // namespace epsim::workloads
