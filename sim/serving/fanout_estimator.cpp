#include "sim/serving/fanout_estimator.hpp"

#include <algorithm>
#include <cmath>

namespace epsim::serving {

FanoutEstimator::FanoutEstimator(const models::ModelSpec& model, const hardware::Topology& group, int samples,
                                 int refresh_steps, double drift, core::Rng rng)
    : top_k_(static_cast<int>(model.top_k)),
      gpus_(group.num_gpus()),
      gpus_per_node_(group.gpus_per_node()),
      samples_(samples),
      refresh_steps_(refresh_steps),
      drift_(drift),
      rng_(rng),
      sampler_(static_cast<int>(model.routed_experts), static_cast<int>(model.top_k),
               static_cast<int>(model.expert_groups), static_cast<int>(model.topk_group)) {
  const auto layers = static_cast<std::size_t>(model.num_moe_layers());
  gpu_.assign(layers, Eigen::ArrayXd::Ones(gpus_));
  node_.assign(layers, Eigen::ArrayXd::Ones(group.nodes()));
  refreshed_at_.assign(layers, -1);
  placed_.resize(layers);
  shares_.assign(layers, std::vector<double>(static_cast<std::size_t>(model.routed_experts), 0.0));
  weights_.assign(static_cast<std::size_t>(model.routed_experts), 0.0);
  tokens_.assign(static_cast<std::size_t>(samples) * static_cast<std::size_t>(top_k_), 0);
  for (Eigen::ArrayXd* a : {&miss_gpu_, &pairs_gpu_, &reach_gpu_}) {
    a->setOnes(gpus_);
  }
  for (Eigen::ArrayXd* a : {&miss_node_, &pairs_node_, &reach_node_}) {
    a->setOnes(group.nodes());
  }
  touched_gpus_.reserve(static_cast<std::size_t>(gpus_));
  touched_nodes_.reserve(static_cast<std::size_t>(group.nodes()));
}

void FanoutEstimator::update(int moe_layer, std::int64_t step, std::span<const std::int32_t> expert_tokens,
                             const policies::LayerPlacement& placement, workloads::RoutingSource& source) {
  const auto l = static_cast<std::size_t>(moe_layer);
  std::int64_t total = 0;
  for (const std::int32_t n : expert_tokens) {
    total += n;
  }
  if (total == 0) {
    return;
  }
  double moved_share = 0.0;
  for (std::size_t e = 0; e < weights_.size(); ++e) {
    weights_[e] = static_cast<double>(expert_tokens[e]) / static_cast<double>(total);
    moved_share += std::abs(weights_[e] - shares_[l][e]);
  }
  const bool moved = placed_[l] != placement.phy2log;
  const bool due = refreshed_at_[l] < 0 || step - refreshed_at_[l] >= refresh_steps_;
  if (!moved && !due && moved_share <= drift_) {
    return;
  }
  shares_[l] = weights_;  // same size: no allocation
  const std::int64_t step_tokens = total / top_k_;
  const auto samples =
      static_cast<std::size_t>(std::min<std::int64_t>(samples_, std::max<std::int64_t>(32, 2 * step_tokens)));
  const std::span<std::int32_t> drawn =
      std::span<std::int32_t>(tokens_).first(samples * static_cast<std::size_t>(top_k_));
  if (!source.sample_tokens(moe_layer, sampler_, rng_, drawn)) {
    sampler_.set_weights(weights_);
    for (std::size_t i = 0; i < samples; ++i) {
      sampler_.draw(rng_, drawn.subspan(i * static_cast<std::size_t>(top_k_), static_cast<std::size_t>(top_k_)));
    }
  }
  compute(drawn, placement, gpu_[l], node_[l]);
  placed_[l] = placement.phy2log;  // same size every time: no allocation after the first
  refreshed_at_[l] = step;
}

void FanoutEstimator::compute(std::span<const std::int32_t> token_experts, const policies::LayerPlacement& placement,
                              Eigen::ArrayXd& gpu_out, Eigen::ArrayXd& node_out) {
  // Sums over the tokens of P(reach) and of expected pairs, per GPU and per node; a replicated expert's
  // tokens split evenly over its replicas (what the routing policies do on average).
  reach_gpu_.setZero();
  pairs_gpu_.setZero();
  reach_node_.setZero();
  pairs_node_.setZero();
  miss_gpu_.setOnes();
  miss_node_.setOnes();
  const std::size_t tokens = token_experts.size() / static_cast<std::size_t>(top_k_);
  for (std::size_t t = 0; t < tokens; ++t) {
    touched_gpus_.clear();
    touched_nodes_.clear();
    for (int k = 0; k < top_k_; ++k) {
      const int e = token_experts[t * static_cast<std::size_t>(top_k_) + static_cast<std::size_t>(k)];
      const std::span<const int> replicas = placement.replicas(e);
      const double f = 1.0 / static_cast<double>(replicas.size());
      for (const int s : replicas) {
        const int g = placement.gpu_of_slot(s);
        const int n = g / gpus_per_node_;
        if (miss_gpu_(g) == 1.0) {
          touched_gpus_.push_back(g);
        }
        if (miss_node_(n) == 1.0) {
          touched_nodes_.push_back(n);
        }
        miss_gpu_(g) *= 1.0 - f;
        miss_node_(n) *= 1.0 - f;
        pairs_gpu_(g) += f;
        pairs_node_(n) += f;
      }
    }
    for (const int g : touched_gpus_) {
      reach_gpu_(g) += 1.0 - miss_gpu_(g);
      miss_gpu_(g) = 1.0;
    }
    for (const int n : touched_nodes_) {
      reach_node_(n) += 1.0 - miss_node_(n);
      miss_node_(n) = 1.0;
    }
  }
  gpu_out = (pairs_gpu_ > 0.0).select(reach_gpu_ / pairs_gpu_.max(1e-300), 1.0);
  node_out = (pairs_node_ > 0.0).select(reach_node_ / pairs_node_.max(1e-300), 1.0);
}

}  // namespace epsim::serving
