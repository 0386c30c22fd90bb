// SPDX-License-Identifier: Apache-2.0
#pragma once
// The small model and idealised GPU the serving tests price by hand: one MoE layer of 4 experts
// (hidden 1024, expert FFN 512), and a GPU of 100 TFLOP/s and 1000 GB/s at 100 % efficiency.
#include "hardware/gpu_spec.hpp"
#include "models/model_spec.hpp"

namespace epsim::test {

inline models::ModelSpec tiny_model(std::int64_t top_k = 2) {
  models::ModelSpec m;
  m.name = "tiny";
  m.hidden_size = 1024;
  m.num_layers = 1;
  m.moe_intermediate_size = 512;
  m.routed_experts = 4;
  m.top_k = top_k;
  m.num_heads = 8;
  m.num_kv_heads = 8;
  m.head_dim = 128;
  m.vocab_size = 1000;
  return m;
}

inline hardware::GpuSpec paper_gpu() {
  hardware::GpuSpec g;
  g.name = "paper-gpu";
  g.bf16_tflops = 100.0;  // 100e3 FLOP per ns at efficiency 1
  g.hbm_gbps = 1000.0;    // 1000 bytes per ns at efficiency 1
  g.memory_gib = 80.0;
  for (int k = 0; k < hardware::k_op_kinds; ++k) {
    g.set_family_efficiency(static_cast<hardware::OpKind>(k), hardware::Efficiency{1.0, 1.0});
  }
  g.kernel_launch_us = 1.0;
  return g;
}

}  // namespace epsim::test
