// SPDX-License-Identifier: Apache-2.0
#pragma once
// The draft passes of a speculative-decoding step (docs/serving.md, "Speculative decoding"): k passes,
// one after the other (each drafts the token the next one extends), each over one token per verifying
// decode of every DP rank, on the rank's own GPUs, priced with the cost model on models/layer_work's
// work. They run after the verify forward (the next step's drafts, from the tokens it accepted), so
// the step's duration is the verify's plus theirs.
// - mtp: DeepSeek-V3's MTP module (arXiv 2412.19437, §2.2): the embedding (shared), a 2h -> h
//   projection, one transformer block of the target's shape (its attention over the request's context,
//   router, shared expert and routed experts) and the shared LM head. Its routed experts live with the
//   target's, spread over the EP group: the pass dispatches and combines through the group's collective
//   model and loads every GPU's experts, spread evenly (top_k pairs per token over the group's GPUs;
//   the routing source's per-expert skew is kept for the verify tokens only: drawing from it here
//   would advance a replayed trace).
// - draft_model: a small dense model ([speculative.draft_model]) replicated on every DP rank
//   (tensor-parallel like its attention): its layers and LM head, no communication.
// Buffers are allocated once, never in the step loop.
#include <Eigen/Core>
#include <span>

#include "hardware/collective_model.hpp"
#include "hardware/cost_model.hpp"
#include "hardware/ep_comm.hpp"
#include "models/model_spec.hpp"
#include "sim/batch.hpp"
#include "sim/speculative_config.hpp"

namespace epsim::serving {

class DraftPricer {
 public:
  /// The group's GPUs [gpu_offset, gpu_offset + gpus), DP ranks of `attention_tp` GPUs each.
  DraftPricer(const models::ModelSpec& target, const SpeculativeConfig& spec, hardware::CostModel& cost, int gpu_offset,
              int gpus, int attention_tp, hardware::CollectiveModel& collectives, const hardware::EpCommConfig& comm);
  /// The draft passes' time for `batch` (0 when no decode verifies drafts); busy_ns() then holds each
  /// GPU's time in their kernels.
  double price(const Batch& batch);
  std::span<const double> busy_ns() const { return {busy_ns_.data(), static_cast<std::size_t>(busy_ns_.size())}; }

  /// The draft model's spec: a dense GQA model of `size` with the target's datatypes.
  static models::ModelSpec draft_model_spec(const models::ModelSpec& target, const DraftModelSize& size);

 private:
  double kernel(int local_gpu, const hardware::KernelWork& w);
  // One pass: `pass` = 0..k-1 covers the decodes that draft more than `pass` tokens.
  double mtp_pass(const Batch& batch, int pass);
  double draft_model_pass(const Batch& batch, int pass);
  // Per rank: decodes drafting at this pass, and their attention batch.
  void gather(const Batch& batch, int pass);

  models::ModelSpec target_;
  models::ModelSpec draft_;
  SpeculativeMethod method_;
  int k_;
  hardware::CostModel& cost_;
  hardware::CollectiveModel& collectives_;
  int gpu_offset_;
  int gpus_;
  int tp_;
  double dispatch_bytes_;
  double combine_bytes_;
  Eigen::ArrayXd rank_tokens_, rank_pairs_, rank_kv_;  // per DP rank: drafting decodes, score pairs, KV read
  Eigen::ArrayXd local_ns_, expert_ns_, head_ns_, busy_ns_, share_, pairs_;  // per GPU
};

}  // namespace epsim::serving
