// SPDX-License-Identifier: Apache-2.0
#include "policies/gem/gem_placement.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <boost/random/uniform_real_distribution.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>

#include "core/error.hpp"

namespace epsim::policies {

double gem_score(const GemLayerProblem& p, std::span<const int> phy2log) {
  double score = 0.0;
  std::vector<double> n(static_cast<std::size_t>(p.gpus));
  std::vector<int> active(static_cast<std::size_t>(p.gpus));
  for (int t = 0; t < p.steps; ++t) {
    std::fill(n.begin(), n.end(), 0.0);
    std::fill(active.begin(), active.end(), 0);
    for (int s = 0; s < p.gpus * p.slots_per_gpu; ++s) {
      const int e = phy2log[static_cast<std::size_t>(s)];
      if (e >= 0) {
        const double x =
            p.loads[static_cast<std::size_t>(t) * static_cast<std::size_t>(p.experts) + static_cast<std::size_t>(e)];
        n[static_cast<std::size_t>(s / p.slots_per_gpu)] += x;
        active[static_cast<std::size_t>(s / p.slots_per_gpu)] += x > 0.0 ? 1 : 0;
      }
    }
    double slowest = 0.0;
    for (int g = 0; g < p.gpus; ++g) {
      const auto gi = static_cast<std::size_t>(g);
      slowest =
          std::max(slowest, p.curves->activation_aware() ? p.curves->ns(g, n[gi], active[gi]) : p.curves->ns(g, n[gi]));
    }
    score += slowest;
  }
  return score;
}

namespace {

// Experts per GPU: cap = ceil(E / G) (the papers' equal split; with slots to spare, e.g. redundant
// ones, the rest stay empty rather than letting fast GPUs hold more).
int experts_per_gpu(const GemLayerProblem& p) {
  return std::min(p.slots_per_gpu, (p.experts + p.gpus - 1) / p.gpus);
}

std::size_t activation_levels(const GemLayerProblem& p) {
  return p.curves->activation_aware() ? static_cast<std::size_t>(experts_per_gpu(p)) + 1 : 1;
}

// The search state of one layer. Loads are kept per expert (x[e][t]) with one extra all-zero row, the
// "empty expert" that fills free slots, so moving an expert to a free slot is an ordinary swap. Per step
// the three slowest GPUs are kept, enough to know the slowest of the others when any two GPUs change.
// With activation-aware curves, each GPU's activated experts per step (those with tokens) are kept too.
class Search {
 public:
  // Every GPU holds the same number of experts (experts_per_gpu). `table` holds C_g at whole token
  // counts for these curves and shape; the search grows it to this layer's reach.
  Search(const GemLayerProblem& p, GemCostTable& table)
      : p_(p),
        T_(static_cast<std::size_t>(p.steps)),
        empty_(p.experts),
        cap_(experts_per_gpu(p)),
        aware_(p.curves->activation_aware()),
        levels_(activation_levels(p)),
        table_(table) {
    const auto E = static_cast<std::size_t>(p.experts);
    x_.assign((E + 1) * T_, 0.0);
    for (std::size_t t = 0; t < T_; ++t) {
      for (std::size_t e = 0; e < E; ++e) {
        x_[e * T_ + t] = p.loads[t * E + e];
      }
    }
    const auto G = static_cast<std::size_t>(p.gpus);
    n_.assign(G * T_, 0.0);
    act_.assign(G * T_, 0);
    c_.assign(G * T_, 0.0);
    top_.assign(T_, {});
    mab_.assign(T_, 0.0);
    rest_.assign(T_ + 1, 0.0);
    order_.assign(T_, 0);
    slot_.assign(G * static_cast<std::size_t>(cap_), empty_);
    pairs_.reserve(G * (G - 1) / 2);
    build_table();
  }

  // Algorithm 2: heaviest first, each on the GPU (with a free slot) that minimises S of the partial map.
  void initial(std::span<const int> order) {
    std::fill(n_.begin(), n_.end(), 0.0);
    std::fill(act_.begin(), act_.end(), 0);
    std::fill(c_.begin(), c_.end(), 0.0);
    std::fill(slot_.begin(), slot_.end(), empty_);
    used_.assign(static_cast<std::size_t>(p_.gpus), 0);
    refresh_tops();
    for (const int e : order) {
      int best_g = -1;
      double best = std::numeric_limits<double>::infinity();
      double best_own = best;
      for (int g = 0; g < p_.gpus; ++g) {
        if (used_[static_cast<std::size_t>(g)] == cap_) {
          continue;
        }
        double s = 0.0;
        double own = 0.0;  // ties of S (the expert fits under every step's max): the GPU it costs least on
        for (std::size_t t = 0; t < T_; ++t) {
          const double mine = cost(g, n(g, t) + x(e, t), act(g, t) + on(e, t));
          s += std::max(slowest_without(t, g, g), mine);
          own += mine;
        }
        if (s < best || (s == best && own < best_own)) {
          best = s;
          best_own = own;
          best_g = g;
        }
      }
      const auto bg = static_cast<std::size_t>(best_g);
      slot_[bg * static_cast<std::size_t>(cap_) + static_cast<std::size_t>(used_[bg]++)] = e;
      for (std::size_t t = 0; t < T_; ++t) {
        n(best_g, t) += x(e, t);
        act(best_g, t) += on(e, t);
        c(best_g, t) = cost(best_g, n(best_g, t), act(best_g, t));
      }
      refresh_tops();
    }
  }

  // Algorithm 3: commit the best cross-GPU swap while any improves; stop after one that gains < min_gain.
  // The best swap is the largest drop, the first in (a, b, i, j) order among equal drops. Pairs are
  // searched by falling bound (the drop of a perfect swap between them), so the best is usually found
  // in the first pairs and the bound rules out the rest; a pair whose bound only ties the best is still
  // searched when it comes first in that order, so the answer is the one the plain order gives.
  int refine(double min_gain) {
    int swaps = 0;
    for (;;) {
      const double s_prev = score();
      pairs_.clear();
      for (int a = 0; a < p_.gpus; ++a) {
        for (int b = a + 1; b < p_.gpus; ++b) {
          if (prepare_pair(a, b) && s_prev - rest_[0] > 0.0) {
            pairs_.push_back({s_prev - rest_[0], a, b});
          }
        }
      }
      std::sort(pairs_.begin(), pairs_.end(), [](const PairBound& x, const PairBound& y) {
        return x.bound != y.bound ? x.bound > y.bound : std::pair(x.a, x.b) < std::pair(y.a, y.b);
      });
      Best best;
      for (const PairBound& pair : pairs_) {
        if (pair.bound < best.drop) {
          break;  // not even a perfect swap between a and b could match the best found
        }
        const bool ties = best.i < 0 || std::pair(pair.a, pair.b) < std::pair(best.i / cap_, best.j / cap_);
        if (pair.bound == best.drop && !ties) {
          continue;  // at best a tie that comes later in the order
        }
        prepare_pair(pair.a, pair.b);
        // The candidates' loop runs on local pointers: through the members the compiler kept
        // reloading them from memory (it cannot rule out aliasing).
        if (table_width_ > 0) {
          const TableCost cost_a{table_.gpu_rows(pair.a), table_.stride(), aware_, table_width_, this, pair.a};
          const TableCost cost_b{table_.gpu_rows(pair.b), table_.stride(), aware_, table_width_, this, pair.b};
          best_pair(pair.a, pair.b, s_prev, ties, cost_a, cost_b, best);
        } else {
          const CurveCost cost_a{this, pair.a};
          const CurveCost cost_b{this, pair.b};
          best_pair(pair.a, pair.b, s_prev, ties, cost_a, cost_b, best);
        }
      }
      if (best.i < 0) {
        break;  // no swap improves the score
      }
      apply_swap(best.i, best.j);
      ++swaps;
      if (best.drop / s_prev < min_gain) {
        break;
      }
    }
    return swaps;
  }

  // C_g(n, a) read from GPU g's rows of the cost table (the curves beyond its width).
  struct TableCost {
    const double* rows;
    std::size_t stride;
    bool aware;
    std::size_t width;
    const Search* search;
    int g;
    double operator()(double tokens, int active) const {
      if (tokens <= static_cast<double>(width - 1)) {
        return rows[(aware ? static_cast<std::size_t>(active) * stride : 0) + static_cast<std::size_t>(tokens)];
      }
      return search->cost(g, tokens, active);
    }
  };
  // C_g(n, a) from the curves (fractional loads).
  struct CurveCost {
    const Search* search;
    int g;
    double operator()(double tokens, int active) const { return search->cost(g, tokens, active); }
  };

  // The best swap found so far: slots i (on GPU i / cap) and j, and the score it drops.
  struct Best {
    double drop = 0.0;
    int i = -1;
    int j = -1;
  };
  struct PairBound {
    double bound;
    int a;
    int b;
  };

  // The slowest of the other GPUs bounds every step's max from below whatever a and b swap. Steps where
  // a or b is the straggler come first in order_: only there can a swap gain, so a losing candidate is
  // usually cut off after them; rest_[q] sums the bounds of order_[q..]. False when neither is ever
  // the straggler (no swap between them can lower any step's max).
  bool prepare_pair(int a, int b) {
    std::size_t k = 0;
    for (std::size_t t = 0; t < T_; ++t) {
      mab_[t] = slowest_without(t, a, b);
      if (mab_[t] < top_[t].v[0]) {
        order_[k++] = t;
      }
    }
    if (k == 0) {
      return false;
    }
    for (std::size_t t = 0; t < T_; ++t) {
      if (!(mab_[t] < top_[t].v[0])) {
        order_[k++] = t;
      }
    }
    rest_[T_] = 0.0;
    for (std::size_t q = T_; q-- > 0;) {
      rest_[q] = rest_[q + 1] + mab_[order_[q]];
    }
    return true;
  }

  // The swaps between GPUs a and b (prepare_pair done) that beat `best`, in (i, j) order. With `ties`
  // (this pair comes before best's in the plain order) one that equals best's drop replaces it too.
  template <class CostA, class CostB>
  void best_pair(int a, int b, double s_prev, bool ties, const CostA& cost_a, const CostB& cost_b, Best& best) const {
    const std::size_t T = T_;
    const double* n_a = n_.data() + static_cast<std::size_t>(a) * T;
    const double* n_b = n_.data() + static_cast<std::size_t>(b) * T;
    const double* c_a = c_.data() + static_cast<std::size_t>(a) * T;
    const double* c_b = c_.data() + static_cast<std::size_t>(b) * T;
    const int* act_a = act_.data() + static_cast<std::size_t>(a) * T;
    const int* act_b = act_.data() + static_cast<std::size_t>(b) * T;
    const double* mab = mab_.data();
    const double* rest = rest_.data();
    const std::size_t* order = order_.data();
    const int* slots = slot_.data();
    for (int i = a * cap_; i < (a + 1) * cap_; ++i) {
      const int ea = slots[i];
      const double* x_a = x_.data() + static_cast<std::size_t>(ea) * T;
      for (int j = b * cap_; j < (b + 1) * cap_; ++j) {
        const int eb = slots[j];
        if (ea == eb) {
          continue;  // two empty slots
        }
        const double* x_b = x_.data() + static_cast<std::size_t>(eb) * T;
        const double limit = s_prev - best.drop;
        double acc = 0.0;
        bool beaten = true;
        for (std::size_t q = 0; q < T; ++q) {
          const std::size_t t = order[q];
          const double d = x_b[t] - x_a[t];
          const int da = (x_b[t] > 0.0 ? 1 : 0) - (x_a[t] > 0.0 ? 1 : 0);  // 0 whenever d is
          const double ca = d == 0.0 ? c_a[t] : cost_a(n_a[t] + d, act_a[t] + da);
          const double cb = d == 0.0 ? c_b[t] : cost_b(n_b[t] - d, act_b[t] - da);
          acc += std::max({mab[t], ca, cb});
          if (ties ? acc + rest[q + 1] > limit : acc + rest[q + 1] >= limit) {
            beaten = false;
            break;
          }
        }
        const double drop = s_prev - acc;
        if (beaten && (drop > best.drop || (ties && drop == best.drop)) &&
            drop > 1e-12 * s_prev) {  // not a rounding artefact of a no-op
          best = {drop, i, j};
          ties = false;  // best is now this pair's: later candidates must beat it
        }
      }
    }
  }

  double score() const {
    double s = 0.0;
    for (const Top& top : top_) {
      s += top.v[0];
    }
    return s;
  }

  std::vector<int> phy2log() const {
    const auto S = static_cast<std::size_t>(p_.slots_per_gpu);
    const auto C = static_cast<std::size_t>(cap_);
    std::vector<int> out(static_cast<std::size_t>(p_.gpus) * S, -1);
    for (std::size_t g = 0; g < static_cast<std::size_t>(p_.gpus); ++g) {
      std::vector<int> mine(slot_.begin() + static_cast<std::ptrdiff_t>(g * C),
                            slot_.begin() + static_cast<std::ptrdiff_t>((g + 1) * C));
      std::sort(mine.begin(), mine.end());  // the empty expert (id E) sorts last
      for (std::size_t s = 0; s < C; ++s) {
        out[g * S + s] = mine[s] == empty_ ? -1 : mine[s];
      }
    }
    return out;
  }

 private:
  struct Top {
    std::array<double, 3> v{0.0, 0.0, 0.0};
    std::array<int, 3> g{-1, -1, -1};
  };

  // C_g(n, a). Window loads are usually whole tokens: then every load a GPU can reach is a whole number
  // no larger than the step's S heaviest experts together, a is at most the experts per GPU, and C_g is
  // read from the table (curve evaluation was over half of the search's time). The table holds exactly
  // the curves' values, so whether an entry comes from it or the curves cannot change the answer.
  double cost(int g, double tokens, int active) const {
    const std::size_t level = aware_ ? static_cast<std::size_t>(active) : 0;
    if (table_width_ > 0 && tokens <= static_cast<double>(table_width_ - 1)) {
      return table_.at(g, level, static_cast<std::size_t>(tokens));
    }
    return aware_ ? p_.curves->ns(g, tokens, active) : p_.curves->ns(g, tokens);
  }

  void build_table() {
    const auto E = static_cast<std::size_t>(p_.experts);
    double reach = 0.0;  // the most tokens any GPU can hold in one step
    std::vector<double> step(E);
    for (std::size_t t = 0; t < T_; ++t) {
      for (std::size_t e = 0; e < E; ++e) {
        step[e] = x(static_cast<int>(e), t);
        if (step[e] != std::floor(step[e]) || step[e] < 0.0) {
          return;  // fractional loads: evaluate the curves directly
        }
      }
      const auto S = std::min(E, static_cast<std::size_t>(cap_));
      std::partial_sort(step.begin(), step.begin() + static_cast<std::ptrdiff_t>(S), step.end(), std::greater<>());
      reach = std::max(reach, std::accumulate(step.begin(), step.begin() + static_cast<std::ptrdiff_t>(S), 0.0));
    }
    if (table_.cover(static_cast<std::size_t>(reach) + 1)) {  // else too large to be worth it
      table_width_ = table_.width();
    }
  }

  double& n(int g, std::size_t t) { return n_[static_cast<std::size_t>(g) * T_ + t]; }
  double n(int g, std::size_t t) const { return n_[static_cast<std::size_t>(g) * T_ + t]; }
  double& c(int g, std::size_t t) { return c_[static_cast<std::size_t>(g) * T_ + t]; }
  double c(int g, std::size_t t) const { return c_[static_cast<std::size_t>(g) * T_ + t]; }
  double x(int e, std::size_t t) const { return x_[static_cast<std::size_t>(e) * T_ + t]; }
  int on(int e, std::size_t t) const { return x(e, t) > 0.0 ? 1 : 0; }  // does e activate in step t
  int& act(int g, std::size_t t) { return act_[static_cast<std::size_t>(g) * T_ + t]; }
  int act(int g, std::size_t t) const { return act_[static_cast<std::size_t>(g) * T_ + t]; }

  // The slowest GPU time at step t among GPUs other than a and b (0 if there are none).
  double slowest_without(std::size_t t, int a, int b) const {
    const Top& top = top_[t];
    for (int k = 0; k < 3; ++k) {
      const int g = top.g[static_cast<std::size_t>(k)];
      if (g < 0) {
        return 0.0;
      }
      if (g != a && g != b) {
        return top.v[static_cast<std::size_t>(k)];
      }
    }
    return 0.0;
  }

  void refresh_tops() {
    for (std::size_t t = 0; t < T_; ++t) {
      Top top;
      for (int g = 0; g < p_.gpus; ++g) {
        const double v = c(g, t);
        // Insert keeping the three largest; ties keep the lower GPU id first.
        for (std::size_t k = 0; k < 3; ++k) {
          if (top.g[k] < 0 || v > top.v[k]) {
            for (std::size_t m = 2; m > k; --m) {
              top.v[m] = top.v[m - 1];
              top.g[m] = top.g[m - 1];
            }
            top.v[k] = v;
            top.g[k] = g;
            break;
          }
        }
      }
      top_[t] = top;
    }
  }

  void apply_swap(int i, int j) {
    const int a = i / cap_;
    const int b = j / cap_;
    const int ea = slot_[static_cast<std::size_t>(i)];
    const int eb = slot_[static_cast<std::size_t>(j)];
    std::swap(slot_[static_cast<std::size_t>(i)], slot_[static_cast<std::size_t>(j)]);
    for (std::size_t t = 0; t < T_; ++t) {
      const double d = x(eb, t) - x(ea, t);
      const int da = on(eb, t) - on(ea, t);
      n(a, t) += d;
      n(b, t) -= d;
      act(a, t) += da;
      act(b, t) -= da;
      c(a, t) = cost(a, n(a, t), act(a, t));
      c(b, t) = cost(b, n(b, t), act(b, t));
    }
    refresh_tops();
  }

  const GemLayerProblem& p_;
  std::size_t T_;
  int empty_;
  int cap_;             // experts per GPU
  bool aware_;          // the curves depend on activated experts
  std::size_t levels_;  // activation levels in table_ per GPU (cap_ + 1, or 1 for token-only curves)
  GemCostTable& table_;
  std::vector<double> x_, n_, c_, mab_, rest_;
  std::vector<int> act_;            // [g][t] experts of g with tokens in step t
  std::size_t table_width_ = 0;     // token counts table_ answers for in this layer (0 = none)
  std::vector<std::size_t> order_;  // step order of the pair under evaluation
  std::vector<Top> top_;
  std::vector<PairBound> pairs_;  // refine's pairs with their bounds
  std::vector<int> slot_, used_;
};

}  // namespace

GemCostTable gem_cost_table(const GemLayerProblem& p) {
  return {*p.curves, p.gpus, activation_levels(p)};
}

GemLayerResult gem_place_layer(const GemLayerProblem& p, const GemOptions& opt, core::Rng& rng, GemCostTable* table) {
  if (p.curves == nullptr || p.curves->num_gpus() < p.gpus) {
    throw core::Error(fmt::format("gem: cost curves for {} GPUs are needed", p.gpus));
  }
  if (static_cast<std::int64_t>(p.gpus) * p.slots_per_gpu < p.experts) {
    throw core::Error(fmt::format("gem: {} experts do not fit {} GPUs x {} slots", p.experts, p.gpus, p.slots_per_gpu));
  }
  // u: mean utilisation of each expert over the window.
  const auto E = static_cast<std::size_t>(p.experts);
  std::vector<double> u(E, 0.0);
  for (std::size_t t = 0; t < static_cast<std::size_t>(p.steps); ++t) {
    for (std::size_t e = 0; e < E; ++e) {
      u[e] += p.loads[t * E + e] / p.steps;
    }
  }
  std::optional<GemCostTable> own;
  if (table == nullptr || !table->serves(p.curves, p.gpus, activation_levels(p))) {
    table = &own.emplace(gem_cost_table(p));
  }
  Search search(p, *table);
  GemLayerResult best;
  best.score_ns = std::numeric_limits<double>::infinity();
  std::vector<double> key(E);
  std::vector<int> order(E);
  boost::random::uniform_real_distribution<double> noise(-1.0, 1.0);
  for (int r = 0; r < opt.restarts; ++r) {
    for (std::size_t e = 0; e < E; ++e) {
      // Restarts after the first perturb every utilisation by up to +-noise (relative).
      key[e] = r == 0 ? u[e] : u[e] * (1.0 + opt.noise * noise(rng));
    }
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return key[static_cast<std::size_t>(a)] > key[static_cast<std::size_t>(b)]; });
    search.initial(order);
    const int swaps = search.refine(opt.min_gain);
    if (const double s = search.score(); s < best.score_ns) {
      best.score_ns = s;
      best.phy2log = search.phy2log();
      best.restart = r;
      best.swaps = swaps;
    }
  }
  return best;
}

int gem_max_ep_size(const GemOptions& opt) {
  // GPUs^2 x restarts x steps held at the defaults' k_gem_max_ep_size^2 x 30 x 16.
  const double work = static_cast<double>(opt.restarts) * static_cast<double>(opt.window_steps);
  const double gpus = k_gem_max_ep_size * std::sqrt(30.0 * 16.0 / work);
  return std::clamp(static_cast<int>(gpus), 1, k_gem_max_ep_size);
}

Placement GemPlacement::place(const PlacementInput& in) {
  if (const int most = gem_max_ep_size(opt_); in.num_gpus > most) {
    throw core::Error(
        fmt::format("gem: an EP group of {} GPUs is over its bound of {} with restarts = {} and window_steps = {} (the "
                    "search grows with GPUs squared; docs/policies.md, Bounds)",
                    in.num_gpus, most, opt_.restarts, opt_.window_steps));
  }
  const LoadWindow& window = in.step_window();
  const CostCurves& curves = in.cost_curves();
  const int steps = std::min(opt_.window_steps, window.steps());
  const auto E = static_cast<std::size_t>(in.num_experts);
  std::vector<double> loads(static_cast<std::size_t>(steps) * E);
  Placement out;
  const core::RandomStreams streams(in.seed);
  std::optional<GemCostTable> table;  // one for every layer: it does not depend on the layer's loads
  for (int l = 0; l < in.num_layers; ++l) {
    for (int t = 0; t < steps; ++t) {
      for (int e = 0; e < in.num_experts; ++e) {
        loads[static_cast<std::size_t>(t) * E + static_cast<std::size_t>(e)] = window.step(t, l, e);
      }
    }
    const GemLayerProblem p{steps, in.num_experts, in.num_gpus, in.slots_per_gpu, loads, &curves};
    core::Rng rng = streams.stream("gem", static_cast<std::uint64_t>(l));
    if (!table) {
      table.emplace(gem_cost_table(p));
    }
    GemLayerResult r = gem_place_layer(p, opt_, rng, &*table);
    out.layers.push_back(make_layer_placement(in.num_experts, in.num_gpus, in.slots_per_gpu, std::move(r.phy2log)));
  }
  return out;
}

}  // namespace epsim::policies
