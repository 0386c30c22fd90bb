// SPDX-License-Identifier: Apache-2.0
#pragma once
// DIRECTOR's routing predictor as a model (paper 002, Section V-A, Table II): from the true top-k
// routing of the queued tokens, a prediction in which each true (token, expert) selection is kept with
// probability p (the top-k accuracy) and otherwise replaced by a wrong expert, drawn from the layer's
// popularity (a mistaken predictor names popular experts, not uniform ones) among the experts neither
// truly selected nor already predicted for that token; so the expected top-k match rate is exactly p.
// The prediction gives the workload matrix W[l][origin_gpu][expert] the optimiser consumes.
#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/params.hpp"
#include "core/random_streams.hpp"

namespace epsim::policies {

/// Top-k routing of a set of tokens: token t sits on GPU origin[t] and selects, at MoE layer l,
/// experts choice[(t * layers + l) * top_k + k], k < top_k, all distinct.
struct TokenRouting {
  int layers = 0;
  int experts = 0;
  int gpus = 0;
  int top_k = 0;
  std::vector<int> origin;
  std::vector<int> choice;
  std::size_t tokens() const { return origin.size(); }
  int at(std::size_t t, int l, int k) const {
    return choice[(t * static_cast<std::size_t>(layers) + static_cast<std::size_t>(l)) *
                      static_cast<std::size_t>(top_k) +
                  static_cast<std::size_t>(k)];
  }
};

/// Throws core::Error naming what was expected when shapes or ids are malformed.
void validate(const TokenRouting& r);

/// W[l][origin_gpu][expert]: tokens of each GPU routed to each expert.
std::vector<double> workload_matrix(const TokenRouting& r);
/// Selections per expert, [layer][expert].
std::vector<double> expert_popularity(const TokenRouting& r);

/// The routing predictors of the paper's Table II, and the perfect one.
enum class PredictorKind : std::uint8_t { oracle, cascade, quantized };
inline constexpr std::array<core::Choice<PredictorKind>, 3> k_predictor_kinds{
    {{"oracle", PredictorKind::oracle}, {"cascade", PredictorKind::cascade}, {"quantized", PredictorKind::quantized}}};

/// Table II of the paper: oracle -> 1; cascade and quantized -> the accuracy reported for `model`
/// ("mixtral-8x7b", "deepseek-moe-16b", "deepseek-v2-lite", "qwen3-30b-a3b"), else the median of the four
/// models (cascade 0.8472, quantized 0.9423; the range is 0.77-0.91 and 0.91-0.96).
double predictor_accuracy(PredictorKind kind, std::string_view model = "");

/// The predicted routing of `truth` with top-k accuracy `accuracy` in [0, 1]. `popularity` ([layer]
/// [expert], non-negative) weights the wrong experts; empty = the truth's own popularity. A small floor
/// keeps every expert drawable.
TokenRouting predict_routing(const TokenRouting& truth, double accuracy, std::span<const double> popularity,
                             core::Rng& rng);

/// Fraction of predicted (token, layer) selections that are in the true top-k (the paper's metric).
double topk_accuracy(const TokenRouting& truth, const TokenRouting& predicted);

}  // namespace epsim::policies
