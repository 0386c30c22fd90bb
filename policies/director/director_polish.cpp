// SPDX-License-Identifier: Apache-2.0
#include "policies/director/director_polish.hpp"

#include <algorithm>
#include <optional>
#include <vector>

#include "core/grid_view.hpp"
#include "policies/cost_curves.hpp"

namespace epsim::policies {

namespace {

// The polish's state for one layer: per pass kind q, each GPU's tokens lambda[q][g] and each origin's
// all-to-all time comm[q][origin], each expert's tokens n[q][i], and the experts per GPU; moves and
// swaps are priced incrementally from it.
class LayerPolish {
 public:
  LayerPolish(const DirectorProblem& p, int l, std::span<int> gpu_of)
      : p_(p),
        l_(l),
        gpu_of_(gpu_of),
        lambda_(static_cast<std::size_t>(p.passes * p.gpus), 0.0),
        comm_(static_cast<std::size_t>(p.passes * p.gpus), 0.0),
        active_(static_cast<std::size_t>(p.passes * p.gpus), 0.0),
        comp_(static_cast<std::size_t>(p.passes * p.gpus), 0.0),
        n_(static_cast<std::size_t>(p.passes * p.experts)),
        act_(static_cast<std::size_t>(p.passes * p.experts)),
        used_(static_cast<std::size_t>(p.gpus), 0) {
    const auto n = core::grid(n_, p.passes, p.experts);
    const auto act = core::grid(act_, p.passes, p.experts);
    wt_.resize(static_cast<std::size_t>(p.passes) * static_cast<std::size_t>(p.experts) *
               static_cast<std::size_t>(p.gpus));
    const auto wt = core::grid(wt_, p.passes, p.experts, p.gpus);
    for (int q = 0; q < p.passes; ++q) {
      for (int i = 0; i < p.experts; ++i) {
        n(q, i) = p.expert_tokens(l, i, q);
        act(q, i) = activation_probability(n(q, i));
        for (int g = 0; g < p.gpus; ++g) {
          wt(q, i, g) = p.w(l, g, i, q);
        }
      }
    }
    const auto G = static_cast<std::size_t>(p.gpus);
    ns_table_.resize(G * G);
    for (int j = 0; j < p.gpus; ++j) {
      for (int k = 0; k < p.gpus; ++k) {
        ns_table_[static_cast<std::size_t>(j) * G + static_cast<std::size_t>(k)] = p.ns_per_token(j, k);
      }
    }
    rebuild();
    current_ = director_layer_cost(p, l, gpu_of).total_ns();
  }

  // One sweep of improving single moves and swaps; returns how many it applied.
  int sweep_moves() {
    int applied = 0;
    for (int i = 0; i < p_.experts; ++i) {
      for (int b = 0; b < p_.gpus; ++b) {
        const int a = gpu_of_[static_cast<std::size_t>(i)];
        if (b == a) {
          continue;
        }
        prepare(i, a, b);
        if (used_[static_cast<std::size_t>(b)] < p_.capacity) {
          if (const std::optional<double> c = improved_cost(i, a, b, -1); c.has_value()) {
            apply(i, a, b);
            current_ = *c;
            ++applied;
            continue;
          }
        }
        // b's experts in ascending order, as a scan of all experts meets them (the first that improves is
        // taken; the loop ends right after the swap changes the list).
        for (const int i2 : members_[static_cast<std::size_t>(b)]) {
          if (const std::optional<double> c = improved_cost(i, a, b, i2); c.has_value()) {
            apply(i, a, b);
            apply(i2, b, a);
            current_ = *c;
            ++applied;
            break;
          }
        }
      }
    }
    return applied;
  }

  // Whole GPUs exchanging their experts: which GPU takes which group matters when GPUs or links differ,
  // and no sequence of improving single moves and swaps may get there. Returns how many it applied.
  int sweep_exchanges() {
    int applied = 0;
    price_fresh();
    for (int a = 0; a < p_.gpus; ++a) {
      for (int b = a + 1; b < p_.gpus; ++b) {
        const double c = exchange_cost(a, b);
        if (improves(c)) {
          for (int& g : gpu_of_) {
            g = g == a ? b : g == b ? a : g;
          }
          rebuild();
          price_fresh();
          current_ = c;
          ++applied;
        }
      }
    }
    return applied;
  }

 private:
  bool improves(double cost) const { return cost < current_ * (1.0 - 1e-12); }

  void rebuild() {
    std::fill(used_.begin(), used_.end(), 0);
    members_.resize(used_.size());
    for (std::vector<int>& m : members_) {
      m.clear();
    }
    for (int i = 0; i < p_.experts; ++i) {
      const auto g = static_cast<std::size_t>(gpu_of_[static_cast<std::size_t>(i)]);
      ++used_[g];
      members_[g].push_back(i);
    }
    const auto lambda = core::grid(lambda_, p_.passes, p_.gpus);
    const auto comm = core::grid(comm_, p_.passes, p_.gpus);
    const auto active = core::grid(active_, p_.passes, p_.gpus);
    for (int q = 0; q < p_.passes; ++q) {
      pass_loads(p_, l_, q, gpu_of_, lambda.row(q), comm.row(q), active.row(q));
      for (int g = 0; g < p_.gpus; ++g) {
        update_comp(q, g);
      }
    }
    move_ns_ = migration_ns(p_, l_, gpu_of_);
  }

  // The current layer priced from scratch, as director_layer_cost prices it (the moves' state is kept
  // incrementally, which may differ from it in the last bits): what exchange_cost starts from.
  void price_fresh() {
    const auto G = static_cast<std::size_t>(p_.gpus);
    const std::size_t n = static_cast<std::size_t>(p_.passes) * G;
    fresh_lambda_.resize(n);
    fresh_active_.resize(n);
    fresh_comp_.resize(n);
    exchange_comm_.resize(G);
    const auto lambda = core::grid(fresh_lambda_, p_.passes, p_.gpus);
    const auto active = core::grid(fresh_active_, p_.passes, p_.gpus);
    for (int q = 0; q < p_.passes; ++q) {
      pass_loads(p_, l_, q, gpu_of_, lambda.row(q), exchange_comm_, active.row(q));
      for (int g = 0; g < p_.gpus; ++g) {
        fresh_comp_[static_cast<std::size_t>(q) * G + static_cast<std::size_t>(g)] =
            p_.curves->ns(g, lambda(q, g), active(q, g));
      }
    }
  }

  // director_layer_cost of the layer with GPUs a and b exchanging their experts, bit for bit, without
  // pricing it from scratch (after price_fresh): a GPU's tokens and expected activated experts are sums
  // over its experts in expert order, so after the exchange a's are b's and b's are a's exactly; the other
  // GPUs' compute times are kept; only every origin's all-to-all time is summed again, in pass_loads' order.
  double exchange_cost(int a, int b) {
    const auto G = static_cast<std::size_t>(p_.gpus);
    const auto lambda = core::grid(fresh_lambda_, p_.passes, p_.gpus);
    const auto active = core::grid(fresh_active_, p_.passes, p_.gpus);
    const auto comp_of = core::grid(fresh_comp_, p_.passes, p_.gpus);
    DirectorCost c;
    for (int q = 0; q < p_.passes; ++q) {
      double comp = 0.0;
      for (int g = 0; g < p_.gpus; ++g) {
        const double v = g == a   ? p_.curves->ns(a, lambda(q, b), active(q, b))
                         : g == b ? p_.curves->ns(b, lambda(q, a), active(q, a))
                                  : comp_of(q, g);
        comp = std::max(comp, v);
      }
      std::fill(exchange_comm_.begin(), exchange_comm_.end(), 0.0);
      for (int i = 0; i < p_.experts; ++i) {
        const int k = gpu_of_[static_cast<std::size_t>(i)];
        const auto kx = static_cast<std::size_t>(k == a ? b : k == b ? a : k);
        for (int j = 0; j < p_.gpus; ++j) {
          exchange_comm_[static_cast<std::size_t>(j)] +=
              p_.w(l_, j, i, q) * ns_table_[static_cast<std::size_t>(j) * G + kx];
        }
      }
      double comm = 0.0;
      for (const double x : exchange_comm_) {
        comm = std::max(comm, x);
      }
      c.comp_ns += p_.weight(q) * comp;
      c.comm_ns += p_.weight(q) * comm;
    }
    if (p_.charges_moves()) {
      int moved = 0;
      for (int i = 0; i < p_.experts; ++i) {
        const int k = gpu_of_[static_cast<std::size_t>(i)];
        moved += (k == a ? b : k == b ? a : k) != p_.current_gpu(l_, i) ? 1 : 0;
      }
      c.move_ns = p_.move_ns * moved;
    }
    return c.total_ns();
  }

  // GPU g's compute time in pass q at its current load: a move changes only its two GPUs', so the
  // others' are kept rather than looked up again for every candidate.
  void update_comp(int q, int g) {
    const auto i = static_cast<std::size_t>(q) * static_cast<std::size_t>(p_.gpus) + static_cast<std::size_t>(g);
    comp_[i] = p_.curves->ns(g, lambda_[i], active_[i]);
  }

  // How the migration term changes when expert i moves from GPU a to GPU b.
  double move_delta(int i, int a, int b) const {
    if (!p_.charges_moves()) {
      return 0.0;
    }
    const int home = p_.current_gpu(l_, i);
    return p_.move_ns * ((b != home ? 1.0 : 0.0) - (a != home ? 1.0 : 0.0));
  }

  // The layer cost after moving expert i from a to b and expert i2 (or -1) from b to a, when it improves
  // on the current cost; nullopt otherwise. Only GPUs a and b change their compute time, so the others'
  // (kept in comp_) and every origin's all-to-all time give a lower bound first: the same sums with a's
  // and b's compute left out. Rounding keeps order (sums and products by the non-negative pass weights),
  // so the bound is <= the cost exactly, and a move the bound rules out is one the cost rules out: the
  // two curve lookups are skipped without changing which moves are taken.
  // What every candidate moving expert i from a to b shares, whatever expert comes back: per pass the
  // compute maximum of the GPUs other than a and b, and each origin's all-to-all time with i moved.
  void prepare(int i, int a, int b) {
    const auto comm = core::grid(comm_, p_.passes, p_.gpus);
    const auto comp = core::grid(comp_, p_.passes, p_.gpus);
    const auto P = static_cast<std::size_t>(p_.passes);
    const auto G = static_cast<std::size_t>(p_.gpus);
    others_.resize(2 * P);
    moved_comm_.resize(P * G);
    back_.resize(G);
    const double* ns = ns_table_.data();
    for (std::size_t g = 0; g < G; ++g) {
      back_[g] = ns[g * G + static_cast<std::size_t>(a)] - ns[g * G + static_cast<std::size_t>(b)];
    }
    for (int q = 0; q < p_.passes; ++q) {
      double others = 0.0;
      const double* wi =
          wt_.data() +
          (static_cast<std::size_t>(q) * static_cast<std::size_t>(p_.experts) + static_cast<std::size_t>(i)) * G;
      for (int g = 0; g < p_.gpus; ++g) {
        if (g != a && g != b) {
          others = std::max(others, comp(q, g));
        }
        const auto gi = static_cast<std::size_t>(g);
        moved_comm_[static_cast<std::size_t>(q) * G + gi] =
            comm(q, g) + wi[gi] * (ns[gi * G + static_cast<std::size_t>(b)] - ns[gi * G + static_cast<std::size_t>(a)]);
      }
      others_[static_cast<std::size_t>(q)] = others;
    }
  }

  // After prepare(i, a, b). The all-to-all term adds expert i2's change to i's in the order the whole
  // layer's cost sums them ((comm + i's) + i2's), so every value is bit for bit the one computed before.
  std::optional<double> improved_cost(int i, int a, int b, int i2) {
    const auto P = static_cast<std::size_t>(p_.passes);
    const auto G = static_cast<std::size_t>(p_.gpus);
    double bound = 0.0;
    for (int q = 0; q < p_.passes; ++q) {
      const double* moved = moved_comm_.data() + static_cast<std::size_t>(q) * G;
      double comm_ns = 0.0;
      if (i2 >= 0) {
        const double* w2 =
            wt_.data() +
            (static_cast<std::size_t>(q) * static_cast<std::size_t>(p_.experts) + static_cast<std::size_t>(i2)) * G;
        for (int g = 0; g < p_.gpus; ++g) {
          comm_ns = std::max(comm_ns, moved[g] + w2[g] * back_[static_cast<std::size_t>(g)]);
        }
      } else {
        for (int g = 0; g < p_.gpus; ++g) {
          comm_ns = std::max(comm_ns, moved[g]);
        }
      }
      others_[P + static_cast<std::size_t>(q)] = comm_ns;
      bound += p_.weight(q) * (others_[static_cast<std::size_t>(q)] + comm_ns);
    }
    // Summed in the order the whole layer's cost always was, so the value taken is bit for bit the same.
    const double move_i_ns = move_delta(i, a, b);
    const double move_i2_ns = i2 >= 0 ? move_delta(i2, b, a) : 0.0;
    if (!improves(bound + move_ns_ + move_i_ns + move_i2_ns)) {
      return std::nullopt;
    }
    const auto lambda = core::grid(lambda_, p_.passes, p_.gpus);
    const auto n = core::grid(n_, p_.passes, p_.experts);
    const auto act = core::grid(act_, p_.passes, p_.experts);
    const auto active = core::grid(active_, p_.passes, p_.gpus);
    double total = 0.0;
    for (int q = 0; q < p_.passes; ++q) {
      const double d = n(q, i) - (i2 >= 0 ? n(q, i2) : 0.0);
      const double da = act(q, i) - (i2 >= 0 ? act(q, i2) : 0.0);
      const double comp_a = p_.curves->ns(a, lambda(q, a) - d, active(q, a) - da);
      const double comp_b = p_.curves->ns(b, lambda(q, b) + d, active(q, b) + da);
      const double comp_ns = std::max({others_[static_cast<std::size_t>(q)], comp_a, comp_b});
      total += p_.weight(q) * (comp_ns + others_[P + static_cast<std::size_t>(q)]);
    }
    const double c = total + move_ns_ + move_i_ns + move_i2_ns;
    return improves(c) ? std::optional<double>(c) : std::nullopt;
  }

  void apply(int i, int a, int b) {
    move_ns_ += move_delta(i, a, b);
    const auto lambda = core::grid(lambda_, p_.passes, p_.gpus);
    const auto comm = core::grid(comm_, p_.passes, p_.gpus);
    const auto n = core::grid(n_, p_.passes, p_.experts);
    const auto act = core::grid(act_, p_.passes, p_.experts);
    const auto active = core::grid(active_, p_.passes, p_.gpus);
    for (int q = 0; q < p_.passes; ++q) {
      lambda(q, a) -= n(q, i);
      lambda(q, b) += n(q, i);
      active(q, a) -= act(q, i);
      active(q, b) += act(q, i);
      update_comp(q, a);
      update_comp(q, b);
      for (int g = 0; g < p_.gpus; ++g) {
        comm(q, g) += p_.w(l_, g, i, q) * (p_.ns_per_token(g, b) - p_.ns_per_token(g, a));
      }
    }
    --used_[static_cast<std::size_t>(a)];
    ++used_[static_cast<std::size_t>(b)];
    std::vector<int>& from = members_[static_cast<std::size_t>(a)];
    from.erase(std::find(from.begin(), from.end(), i));
    std::vector<int>& to = members_[static_cast<std::size_t>(b)];
    to.insert(std::lower_bound(to.begin(), to.end(), i), i);
    gpu_of_[static_cast<std::size_t>(i)] = b;
  }

  const DirectorProblem& p_;
  int l_;
  std::span<int> gpu_of_;
  std::vector<double> lambda_;      // [pass][gpu]
  std::vector<double> comm_;        // [pass][origin]
  std::vector<double> active_;      // [pass][gpu] expected activated experts
  std::vector<double> comp_;        // [pass][gpu] compute time at lambda_ and active_
  double move_ns_ = 0.0;            // the layer's migration term
  std::vector<double> n_;           // [pass][expert]
  std::vector<double> act_;         // [pass][expert] activation_probability(n_)
  std::vector<double> others_;      // per pass the others' compute max (prepare), then comm max (improved_cost)
  std::vector<double> moved_comm_;  // [pass][origin] all-to-all time with the prepared expert moved
  std::vector<double> back_;        // [origin] ns per token to a less to b: an expert coming back from b to a
  std::vector<int> used_;
  std::vector<std::vector<int>> members_;  // [gpu] its experts, ascending
  std::vector<double> wt_;                 // [pass][expert][origin] W of the layer, an expert's origins together
  std::vector<double> ns_table_;           // [origin][gpu] ns_per_token, for exchange_cost
  std::vector<double> fresh_lambda_;       // [pass][gpu] lambda priced from scratch (price_fresh)
  std::vector<double> fresh_active_;       // [pass][gpu] expected activated experts, likewise
  std::vector<double> fresh_comp_;         // [pass][gpu] compute time at those
  std::vector<double> exchange_comm_;      // [origin] all-to-all time with two GPUs exchanged
  double current_ = 0.0;
};

}  // namespace

int polish_layer(const DirectorProblem& p, int l, std::span<int> gpu_of, int sweeps) {
  LayerPolish polish(p, l, gpu_of);
  int applied = 0;
  for (int sweep = 0; sweep < sweeps; ++sweep) {
    const int moved = polish.sweep_moves() + polish.sweep_exchanges();
    applied += moved;
    if (moved == 0) {
      break;
    }
  }
  return applied;
}

}  // namespace epsim::policies
