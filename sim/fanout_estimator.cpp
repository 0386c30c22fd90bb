// SPDX-License-Identifier: Apache-2.0
#include "sim/fanout_estimator.hpp"

#include <algorithm>
#include <cmath>

namespace epsim::serving {

FanoutEstimator::FanoutEstimator(const models::ModelSpec& model, const hardware::Topology& group, int samples,
                                 int refresh_steps, core::Rng rng)
    : top_k_(static_cast<int>(model.top_k)),
      gpus_(group.num_gpus()),
      gpus_per_node_(group.gpus_per_node()),
      samples_(samples),
      refresh_steps_(refresh_steps),
      rng_(rng),
      sampler_(static_cast<int>(model.routed_experts), static_cast<int>(model.top_k),
               static_cast<int>(model.expert_groups), static_cast<int>(model.topk_group)) {
  const auto layers = static_cast<std::size_t>(model.num_moe_layers());
  gpu_weight_.resize(layers);
  node_weight_.resize(layers);
  refreshed_at_.assign(layers, -1);
  placed_.resize(layers);
  weights_.assign(static_cast<std::size_t>(model.routed_experts), 0.0);
  tokens_.assign(static_cast<std::size_t>(samples) * static_cast<std::size_t>(top_k_), 0);
  for (Eigen::ArrayXd* a : {&gpu_fanout_, &miss_gpu_, &mult_gpu_}) {
    a->setOnes(gpus_);
  }
  for (Eigen::ArrayXd* a : {&node_fanout_, &miss_node_, &mult_node_}) {
    a->setOnes(group.nodes());
  }
  touched_gpus_.reserve(static_cast<std::size_t>(gpus_));
  touched_nodes_.reserve(static_cast<std::size_t>(group.nodes()));
}

void FanoutEstimator::update(int moe_layer, std::int64_t step, std::span<const std::int32_t> slot_tokens,
                             std::span<const std::int32_t> expert_tokens, const policies::LayerPlacement& placement,
                             workloads::RoutingSource& source) {
  const auto l = static_cast<std::size_t>(moe_layer);
  std::int64_t total = 0;
  for (const std::int32_t n : expert_tokens) {
    total += n;
  }
  const bool moved = placed_[l] != placement.phy2log;
  const bool due = refreshed_at_[l] < 0 || step - refreshed_at_[l] >= refresh_steps_;
  if ((moved || due) && total > 0) {
    if (leader_ != nullptr && leader_->model_sampled_at_[l] == step && leader_->rng_before_[l] == rng_ &&
        leader_->placed_[l] == placement.phy2log) {
      // The very tokens the leader drew (same generator state, same source step, same placement): its
      // weights, and the generator where the draw would have left it.
      gpu_weight_[l] = leader_->gpu_weight_[l];  // same size after the first time: no allocation
      node_weight_[l] = leader_->node_weight_[l];
      placed_[l] = placement.phy2log;
      rng_ = leader_->rng_after_[l];
      refreshed_at_[l] = step;
      apply(moe_layer, slot_tokens, placement);
      return;
    }
    if (records_) {
      rng_before_[l] = rng_;
    }
    const bool from_model = source.sample_tokens(moe_layer, sampler_, rng_, tokens_);
    if (!from_model) {
      for (std::size_t e = 0; e < weights_.size(); ++e) {
        weights_[e] = static_cast<double>(expert_tokens[e]);
      }
      sampler_.set_weights(weights_);
      for (std::size_t i = 0; i < static_cast<std::size_t>(samples_); ++i) {
        sampler_.draw(rng_, std::span<std::int32_t>(tokens_).subspan(i * static_cast<std::size_t>(top_k_),
                                                                     static_cast<std::size_t>(top_k_)));
      }
    }
    learn(moe_layer, tokens_, placement);
    refreshed_at_[l] = step;
    if (records_) {
      // Counts-based samples read the half's own counts: a follower cannot share them.
      model_sampled_at_[l] = from_model ? step : -1;
      rng_after_[l] = rng_;
    }
  }
  apply(moe_layer, slot_tokens, placement);
}

void FanoutEstimator::follow(FanoutEstimator& first) {
  const std::size_t layers = refreshed_at_.size();
  first.records_ = true;
  first.model_sampled_at_.assign(layers, -1);
  first.rng_before_.assign(layers, first.rng_);
  first.rng_after_.assign(layers, first.rng_);
  leader_ = &first;
}

void FanoutEstimator::learn(int moe_layer, std::span<const std::int32_t> token_experts,
                            const policies::LayerPlacement& placement) {
  const auto l = static_cast<std::size_t>(moe_layer);
  const auto slots = static_cast<std::size_t>(placement.num_slots());
  // Sums per slot of each holding token's share of its GPU's (node's) reach, and how many tokens held it.
  std::vector<double>& gw = gpu_weight_[l];
  std::vector<double>& nw = node_weight_[l];
  gw.assign(slots, 0.0);  // allocates only the first time (and when the placement's size changes)
  nw.assign(slots, 0.0);
  holders_.assign(slots, 0.0);
  mult_gpu_.setZero();
  mult_node_.setZero();
  miss_gpu_.setOnes();
  miss_node_.setOnes();
  const std::size_t tokens = token_experts.size() / static_cast<std::size_t>(top_k_);
  const auto experts_of = [&](std::size_t t) {
    return token_experts.subspan(t * static_cast<std::size_t>(top_k_), static_cast<std::size_t>(top_k_));
  };
  for (std::size_t t = 0; t < tokens; ++t) {
    touched_gpus_.clear();
    touched_nodes_.clear();
    for (const int e : experts_of(t)) {
      const std::span<const int> replicas = placement.replicas(e);
      const double f = 1.0 / static_cast<double>(replicas.size());  // replicas share a token evenly
      for (const int s : replicas) {
        const int g = placement.gpu_of_slot(s);
        const int n = g / gpus_per_node_;
        if (mult_gpu_(g) == 0.0) {
          touched_gpus_.push_back(g);
        }
        if (mult_node_(n) == 0.0) {
          touched_nodes_.push_back(n);
        }
        mult_gpu_(g) += f;
        mult_node_(n) += f;
        miss_gpu_(g) *= 1.0 - f;
        miss_node_(n) *= 1.0 - f;
      }
    }
    // Each pair on g stands for (1 - miss_g) / mult_g of a distinct token there (per pair, not per f).
    for (const int e : experts_of(t)) {
      for (const int s : placement.replicas(e)) {
        const int g = placement.gpu_of_slot(s);
        const int n = g / gpus_per_node_;
        gw[static_cast<std::size_t>(s)] += (1.0 - miss_gpu_(g)) / mult_gpu_(g);
        nw[static_cast<std::size_t>(s)] += (1.0 - miss_node_(n)) / mult_node_(n);
        holders_[static_cast<std::size_t>(s)] += 1.0;
      }
    }
    for (const int g : touched_gpus_) {
      mult_gpu_(g) = 0.0;
      miss_gpu_(g) = 1.0;
    }
    for (const int n : touched_nodes_) {
      mult_node_(n) = 0.0;
      miss_node_(n) = 1.0;
    }
  }
  // A slot no sampled token used takes the mean weight of the layer's sampled pairs (1: nothing sampled).
  double gsum = 0.0;
  double nsum = 0.0;
  double held = 0.0;
  for (std::size_t s = 0; s < slots; ++s) {
    gsum += gw[s];
    nsum += nw[s];
    held += holders_[s];
  }
  for (std::size_t s = 0; s < slots; ++s) {
    gw[s] = holders_[s] > 0.0 ? gw[s] / holders_[s] : (held > 0.0 ? gsum / held : 1.0);
    nw[s] = holders_[s] > 0.0 ? nw[s] / holders_[s] : (held > 0.0 ? nsum / held : 1.0);
  }
  placed_[l] = placement.phy2log;  // same size every time: no allocation after the first
}

void FanoutEstimator::apply(int moe_layer, std::span<const std::int32_t> slot_tokens,
                            const policies::LayerPlacement& placement) {
  const auto l = static_cast<std::size_t>(moe_layer);
  const double* gw = gpu_weight_[l].data();
  const double* nw = node_weight_[l].data();
  const int* logical = placement.phy2log.data();
  const int per_gpu = placement.slots_per_gpu;
  // Slots lie GPU by GPU and GPUs node by node: running sums per GPU and per node add the same terms in
  // the same order as sums over all slots would, without indexing the outputs per slot.
  for (Eigen::Index n = 0; n < node_fanout_.size(); ++n) {
    double node_sum = 0.0;
    double node_pairs = 0.0;
    for (int g = static_cast<int>(n) * gpus_per_node_; g < (static_cast<int>(n) + 1) * gpus_per_node_; ++g) {
      double gpu_sum = 0.0;
      double gpu_pairs = 0.0;
      for (int s = g * per_gpu; s < (g + 1) * per_gpu; ++s) {
        const auto pairs = static_cast<double>(slot_tokens[static_cast<std::size_t>(s)]);
        if (pairs <= 0.0 || logical[s] < 0) {
          continue;
        }
        gpu_sum += pairs * gw[s];
        node_sum += pairs * nw[s];
        gpu_pairs += pairs;
        node_pairs += pairs;
      }
      gpu_fanout_(g) = gpu_pairs > 0.0 ? gpu_sum / gpu_pairs : 1.0;
    }
    node_fanout_(n) = node_pairs > 0.0 ? node_sum / node_pairs : 1.0;
  }
}

void FanoutEstimator::compute(std::span<const std::int32_t> token_experts, const policies::LayerPlacement& placement,
                              Eigen::ArrayXd& gpu_out, Eigen::ArrayXd& node_out) {
  learn(0, token_experts, placement);
  // The sample's own pairs per slot: with replicas split evenly, fractional; weights are per pair, so the
  // expected pairs times the weights give the sum of reach probabilities.
  slot_pairs_.assign(static_cast<std::size_t>(placement.num_slots()), 0.0);
  const std::size_t tokens = token_experts.size() / static_cast<std::size_t>(top_k_);
  for (std::size_t i = 0; i < tokens * static_cast<std::size_t>(top_k_); ++i) {
    const std::span<const int> replicas = placement.replicas(token_experts[i]);
    for (const int s : replicas) {
      slot_pairs_[static_cast<std::size_t>(s)] += 1.0 / static_cast<double>(replicas.size());
    }
  }
  const std::vector<double>& gw = gpu_weight_[0];
  const std::vector<double>& nw = node_weight_[0];
  Eigen::ArrayXd reach_gpu = Eigen::ArrayXd::Zero(gpus_);
  Eigen::ArrayXd reach_node = Eigen::ArrayXd::Zero(node_fanout_.size());
  Eigen::ArrayXd pg = Eigen::ArrayXd::Zero(gpus_);
  Eigen::ArrayXd pn = Eigen::ArrayXd::Zero(node_fanout_.size());
  for (std::size_t s = 0; s < slot_pairs_.size(); ++s) {
    const int g = placement.gpu_of_slot(static_cast<int>(s));
    const int n = g / gpus_per_node_;
    reach_gpu(g) += slot_pairs_[s] * gw[s];
    reach_node(n) += slot_pairs_[s] * nw[s];
    pg(g) += slot_pairs_[s];
    pn(n) += slot_pairs_[s];
  }
  gpu_out = (pg > 0.0).select(reach_gpu / pg.max(1e-300), 1.0);
  node_out = (pn > 0.0).select(reach_node / pn.max(1e-300), 1.0);
}

}  // namespace epsim::serving
