// SPDX-License-Identifier: Apache-2.0
#include "policies/director/routing_predictor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <boost/random/bernoulli_distribution.hpp>
#include <boost/random/discrete_distribution.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <cctype>
#include <string>

#include "core/error.hpp"
#include "core/grid_view.hpp"

namespace epsim::policies {

void validate(const TokenRouting& r) {
  if (r.layers <= 0 || r.experts <= 0 || r.gpus <= 0 || r.top_k <= 0 || r.top_k > r.experts) {
    throw core::Error(fmt::format(
        "routing predictor: expected positive layers, experts, GPUs and 0 < top_k <= experts, got {}, {}, {}, {}",
        r.layers, r.experts, r.gpus, r.top_k));
  }
  if (r.choice.size() != r.tokens() * static_cast<std::size_t>(r.layers) * static_cast<std::size_t>(r.top_k)) {
    throw core::Error(fmt::format("routing predictor: expected tokens x layers x top_k = {} choices, got {}",
                                  r.tokens() * static_cast<std::size_t>(r.layers * r.top_k), r.choice.size()));
  }
  for (const int g : r.origin) {
    if (g < 0 || g >= r.gpus) {
      throw core::Error(fmt::format("routing predictor: expected origin GPUs in [0, {}), got {}", r.gpus, g));
    }
  }
  for (const int e : r.choice) {
    if (e < 0 || e >= r.experts) {
      throw core::Error(fmt::format("routing predictor: expected experts in [0, {}), got {}", r.experts, e));
    }
  }
}

std::vector<double> workload_matrix(const TokenRouting& r) {
  validate(r);
  const auto E = static_cast<std::size_t>(r.experts);
  const auto G = static_cast<std::size_t>(r.gpus);
  std::vector<double> w(static_cast<std::size_t>(r.layers) * G * E, 0.0);
  const auto grid = core::grid(w, r.layers, G, E);  // [layer][origin][expert]
  for (std::size_t t = 0; t < r.tokens(); ++t) {
    for (int l = 0; l < r.layers; ++l) {
      for (int k = 0; k < r.top_k; ++k) {
        grid(l, r.origin[t], r.at(t, l, k)) += 1.0;
      }
    }
  }
  return w;
}

std::vector<double> expert_popularity(const TokenRouting& r) {
  validate(r);
  std::vector<double> pop(static_cast<std::size_t>(r.layers) * static_cast<std::size_t>(r.experts), 0.0);
  for (std::size_t t = 0; t < r.tokens(); ++t) {
    for (int l = 0; l < r.layers; ++l) {
      for (int k = 0; k < r.top_k; ++k) {
        pop[static_cast<std::size_t>(l) * static_cast<std::size_t>(r.experts) +
            static_cast<std::size_t>(r.at(t, l, k))] += 1.0;
      }
    }
  }
  return pop;
}

double predictor_accuracy(PredictorKind kind, std::string_view model) {
  struct Row {
    std::string_view model;
    double cascade;
    double quantized;
  };
  // Table II (top-k match rate, %/100).
  static constexpr std::array<Row, 4> k_table{{{"mixtral-8x7b", 0.9144, 0.9410},
                                               {"deepseek-moe-16b", 0.8481, 0.9098},
                                               {"deepseek-v2-lite", 0.8462, 0.9568},
                                               {"qwen3-30b-a3b", 0.7699, 0.9436}}};
  if (kind == PredictorKind::oracle) {
    return 1.0;
  }
  const bool cascade = kind == PredictorKind::cascade;
  // Names compare by letters and digits only, case-blind: "DeepSeekMoE-16B" is "deepseek-moe-16b".
  const auto key = [](std::string_view s) {
    std::string k;
    for (const char c : s) {
      if (std::isalnum(static_cast<unsigned char>(c)) != 0) {
        k.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
      }
    }
    return k;
  };
  for (const Row& r : k_table) {
    if (key(r.model) == key(model)) {
      return cascade ? r.cascade : r.quantized;
    }
  }
  // Median of the four models: the middle of the reported range, not its best or worst case.
  return cascade ? (0.8462 + 0.8481) / 2.0 : (0.9410 + 0.9436) / 2.0;
}

TokenRouting predict_routing(const TokenRouting& truth, double accuracy, std::span<const double> popularity,
                             core::Rng& rng) {
  validate(truth);
  if (!(accuracy >= 0.0 && accuracy <= 1.0)) {
    throw core::Error(fmt::format("routing predictor: expected an accuracy in [0, 1], got {}", accuracy));
  }
  const auto E = static_cast<std::size_t>(truth.experts);
  std::vector<double> pop;
  if (popularity.empty()) {
    pop = expert_popularity(truth);
  } else if (popularity.size() == static_cast<std::size_t>(truth.layers) * E) {
    pop.assign(popularity.begin(), popularity.end());
  } else {
    throw core::Error(fmt::format("routing predictor: expected a popularity of layers x experts = {} values, got {}",
                                  static_cast<std::size_t>(truth.layers) * E, popularity.size()));
  }
  std::vector<boost::random::discrete_distribution<int, double>> wrong;
  for (int l = 0; l < truth.layers; ++l) {
    std::vector<double> w(pop.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(l) * E),
                          pop.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(l + 1) * E));
    double sum = 0.0;
    for (const double v : w) {
      if (!(v >= 0.0)) {
        throw core::Error("routing predictor: expected non-negative popularity");
      }
      sum += v;
    }
    const double floor = sum > 0.0 ? 1e-3 * sum / static_cast<double>(E) : 1.0;  // every expert stays drawable
    for (double& v : w) {
      v += floor;
    }
    wrong.emplace_back(w.begin(), w.end());
  }
  TokenRouting pred = truth;
  if (accuracy >= 1.0) {
    return pred;
  }
  boost::random::bernoulli_distribution<double> keep(accuracy);
  boost::random::uniform_int_distribution<int> any(0, truth.experts - 1);
  const auto K = static_cast<std::size_t>(truth.top_k);
  std::vector<char> taken(E);
  for (std::size_t t = 0; t < truth.tokens(); ++t) {
    for (int l = 0; l < truth.layers; ++l) {
      const std::size_t base = (t * static_cast<std::size_t>(truth.layers) + static_cast<std::size_t>(l)) * K;
      std::fill(taken.begin(), taken.end(), 0);
      for (std::size_t k = 0; k < K; ++k) {
        taken[static_cast<std::size_t>(truth.choice[base + k])] = 1;
      }
      for (std::size_t k = 0; k < K; ++k) {
        if (keep(rng)) {
          continue;
        }
        if (std::count(taken.begin(), taken.end(), 0) == 0) {  // every expert selected: no wrong one
          continue;
        }
        int e = -1;
        for (int tries = 0; tries < 64 && e < 0; ++tries) {  // popularity-weighted, rejecting taken experts
          const int c = wrong[static_cast<std::size_t>(l)](rng);
          if (!taken[static_cast<std::size_t>(c)]) {
            e = c;
          }
        }
        while (e < 0) {  // the popular experts are all taken: uniform over the rest
          const int c = any(rng);
          if (!taken[static_cast<std::size_t>(c)]) {
            e = c;
          }
        }
        taken[static_cast<std::size_t>(e)] = 1;
        pred.choice[base + k] = e;
      }
    }
  }
  return pred;
}

double topk_accuracy(const TokenRouting& truth, const TokenRouting& predicted) {
  validate(truth);
  validate(predicted);
  if (truth.tokens() != predicted.tokens() || truth.layers != predicted.layers || truth.top_k != predicted.top_k) {
    throw core::Error("routing predictor: expected a prediction of the truth's shape");
  }
  std::size_t hits = 0;
  for (std::size_t t = 0; t < truth.tokens(); ++t) {
    for (int l = 0; l < truth.layers; ++l) {
      for (int k = 0; k < truth.top_k; ++k) {
        const int e = predicted.at(t, l, k);
        for (int k2 = 0; k2 < truth.top_k; ++k2) {
          if (truth.at(t, l, k2) == e) {
            ++hits;
            break;
          }
        }
      }
    }
  }
  const std::size_t total = truth.tokens() * static_cast<std::size_t>(truth.layers * truth.top_k);
  return total ? static_cast<double>(hits) / static_cast<double>(total) : 1.0;
}

}  // namespace epsim::policies
