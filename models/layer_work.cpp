// SPDX-License-Identifier: Apache-2.0
#include "models/layer_work.hpp"

#include <algorithm>

namespace epsim::models {
namespace {

double d(std::int64_t v) {
  return static_cast<double>(v);
}

hardware::KernelWork gemm(hardware::OpKind kind, hardware::Precision p, const ModelSpec& m, double tokens,
                          double params, double act_elems_per_token) {
  hardware::KernelWork w;
  w.kind = kind;
  w.precision = p;
  w.tokens = tokens;
  w.flops = 2.0 * tokens * params;
  w.bytes = params * d(m.weight_bytes) + tokens * act_elems_per_token * d(m.activation_bytes);
  // The block's GEMMs as one of input width hidden: its waves of output tiles (hardware/roofline.hpp).
  w.gemm_m = tokens;
  w.gemm_n = params / d(m.hidden_size);
  return w;
}

}  // namespace

double attention_params(const ModelSpec& m) {
  const double h = d(m.hidden_size);
  if (m.attention == AttentionKind::gqa) {
    const double q = d(m.num_heads * m.head_dim);
    const double kv = 2.0 * d(m.num_kv_heads * m.head_dim);
    return h * q + h * kv + q * h;  // q, k+v, o projections
  }
  const double heads = d(m.num_heads);
  const double qk_head = d(m.qk_nope_head_dim + m.qk_rope_head_dim);
  const double q_proj =
      m.q_lora_rank > 0 ? h * d(m.q_lora_rank) + d(m.q_lora_rank) * heads * qk_head : h * heads * qk_head;
  const double kv_a = h * d(m.kv_lora_rank + m.qk_rope_head_dim);
  const double kv_b = d(m.kv_lora_rank) * heads * d(m.qk_nope_head_dim + m.v_head_dim);
  const double o_proj = heads * d(m.v_head_dim) * h;
  return q_proj + kv_a + kv_b + o_proj;
}

double kv_bytes_per_token_layer(const ModelSpec& m) {
  if (m.attention == AttentionKind::gqa) {
    return 2.0 * d(m.num_kv_heads * m.head_dim) * d(m.kv_cache_bytes);
  }
  return d(m.kv_lora_rank + m.qk_rope_head_dim) * d(m.kv_cache_bytes);
}

double expert_weight_bytes(const ModelSpec& m) {
  return 3.0 * d(m.hidden_size) * d(m.moe_intermediate_size) * d(m.weight_bytes);
}

double chunked_causal_pairs(std::int64_t context, std::int64_t chunk, std::int64_t window) {
  // Sum over positions p in [context, context + chunk) of (p mod window) + 1, window by window.
  double pairs = 0.0;
  std::int64_t p = context;
  const std::int64_t end = context + chunk;
  while (p < end) {
    const std::int64_t in_window = p % window;
    const std::int64_t run = std::min(end - p, window - in_window);  // positions left in this window
    // (in_window + 1) + ... + (in_window + run)
    pairs += static_cast<double>(run) * static_cast<double>(in_window) +
             static_cast<double>(run) * static_cast<double>(run + 1) / 2.0;
    p += run;
  }
  return pairs;
}

namespace {
double expert_params(const ModelSpec& m) {
  return 3.0 * d(m.hidden_size) * d(m.moe_intermediate_size);
}
double moe_layer_params(const ModelSpec& m, double experts) {
  return attention_params(m) + d(m.hidden_size) * d(m.routed_experts) +
         (d(m.shared_experts) + experts) * expert_params(m);
}
double embedding_params(const ModelSpec& m) {
  return d(m.vocab_size) * d(m.hidden_size) * (m.tie_word_embeddings ? 1.0 : 2.0);
}
double dense_layer_params(const ModelSpec& m) {
  return attention_params(m) + 3.0 * d(m.hidden_size) * d(m.dense_intermediate_size);
}
}  // namespace

double total_params(const ModelSpec& m) {
  const double moe = d(m.num_moe_layers());
  return embedding_params(m) + (d(m.num_layers) - moe) * dense_layer_params(m) +
         moe * moe_layer_params(m, d(m.routed_experts));
}

double active_params(const ModelSpec& m) {
  const double moe = d(m.num_moe_layers());
  return embedding_params(m) + (d(m.num_layers) - moe) * dense_layer_params(m) + moe * moe_layer_params(m, d(m.top_k));
}

double non_expert_weight_bytes(const ModelSpec& m) {
  return (total_params(m) - d(m.num_moe_layers()) * d(m.routed_experts) * expert_params(m)) * d(m.weight_bytes);
}

hardware::KernelWork attention_projection_work(const ModelSpec& m, double tokens) {
  return gemm(hardware::OpKind::dense_gemm, m.weight_precision(), m, tokens, attention_params(m),
              2.0 * d(m.hidden_size));
}

hardware::KernelWork attention_core_work(const ModelSpec& m, const AttentionBatch& b, hardware::OpKind kind) {
  hardware::KernelWork w;
  w.kind = kind;
  w.precision = hardware::Precision::bf16;  // attention math runs in BF16 (FP8 KV is dequantised)
  w.tokens = b.tokens;
  const double heads = d(m.num_heads);
  double flops_per_pair = 0.0;
  double act_per_token = 0.0;    // query in + attention output, elements
  double expanded_per_kv = 0.0;  // MLA prefill: K and V expanded from the latent cache, elements per KV token
  if (m.attention == AttentionKind::gqa) {
    flops_per_pair = 4.0 * heads * d(m.head_dim);
    act_per_token = 2.0 * heads * d(m.head_dim);
    w.head_dim = d(m.head_dim);
  } else if (kind == hardware::OpKind::attention_prefill) {
    // Prefill runs MLA as multi-head attention over K and V expanded by kv_b (SGLang's, vLLM's and
    // DeepSeek's prefill path): q.k over the nope + rope dims, p.v over the value dims; 3.4x fewer FLOPs
    // per pair than the absorbed form for DeepSeek-V3.
    const double qk = d(m.qk_nope_head_dim + m.qk_rope_head_dim);
    const double v = d(m.v_head_dim);
    flops_per_pair = 2.0 * heads * qk + 2.0 * heads * v;
    act_per_token = heads * (qk + v);
    expanded_per_kv = heads * (qk + v);
    w.head_dim = qk;
  } else {
    // Decode absorbs kv_b into the query and output: every head attends over the latent cache itself.
    flops_per_pair = 2.0 * heads * d(m.kv_lora_rank + m.qk_rope_head_dim) + 2.0 * heads * d(m.kv_lora_rank);
    act_per_token = heads * d(m.kv_lora_rank + m.qk_rope_head_dim) + heads * d(m.kv_lora_rank);
    w.head_dim = d(m.kv_lora_rank + m.qk_rope_head_dim);
  }
  w.flops = flops_per_pair * b.score_pairs;
  const double kv_tokens = b.kv_read_tokens + b.tokens;
  w.bytes = kv_tokens * kv_bytes_per_token_layer(m) +
            (b.tokens * act_per_token + kv_tokens * expanded_per_kv) * d(m.activation_bytes);
  return w;
}

hardware::KernelWork dense_ffn_work(const ModelSpec& m, double tokens, double intermediate) {
  return gemm(hardware::OpKind::dense_gemm, m.weight_precision(), m, tokens, 3.0 * d(m.hidden_size) * intermediate,
              2.0 * d(m.hidden_size));
}

hardware::KernelWork expert_ffn_work(const ModelSpec& m, double padded_tokens, double tokens, double activated) {
  hardware::KernelWork w;
  w.kind = hardware::OpKind::expert_ffn;
  w.precision = m.weight_precision();
  w.tokens = tokens;
  const double per_token = 3.0 * d(m.hidden_size) * d(m.moe_intermediate_size);
  w.flops = 2.0 * padded_tokens * per_token;
  w.bytes = activated * expert_weight_bytes(m) + tokens * 2.0 * d(m.hidden_size) * d(m.activation_bytes);
  return w;
}

hardware::KernelWork elementwise_work(const ModelSpec& m, double tokens, bool moe_layer, bool permute) {
  const double h = d(m.hidden_size);
  const double act = d(m.activation_bytes);
  const bool fp8 = m.weight_precision() == hardware::Precision::fp8;
  double elems = 8.0 * h;  // 2 RMSNorms + residual adds: each reads x and the residual, writes both
  double launches = 2.0;
  double o_proj_in = 0.0;  // width of the attention output (the output projection's input)
  if (m.attention == AttentionKind::mla) {
    elems += 2.0 * d(m.q_lora_rank + m.kv_lora_rank);           // latent norms, read + write
    elems += 2.0 * d(m.num_heads + 1) * d(m.qk_rope_head_dim);  // RoPE of q and the shared k, r + w
    o_proj_in = d(m.num_heads * m.v_head_dim);
    launches += 3.0;
  } else {
    elems += 2.0 * d(m.num_heads + m.num_kv_heads) * d(m.head_dim);  // RoPE of q and k
    o_proj_in = d(m.num_heads * m.head_dim);
    launches += 1.0;
  }
  double bytes = 0.0;
  if (fp8) {
    // Quantisation of the projections', output projection's and FFN's inputs: read BF16, write FP8.
    bytes += (2.0 * h + o_proj_in) * (act + 1.0);
    launches += 3.0;
  }
  if (moe_layer) {
    const double k = d(m.top_k);
    const double inter = d(m.moe_intermediate_size);
    elems += k * 3.0 * inter;                    // SiLU-and-multiply: read gate and up, write
    elems += (k + 1.0) * h;                      // weighted sum of the routed outputs
    elems += d(m.shared_experts) * 3.0 * inter;  // the shared experts' SiLU
    bytes += 2.0 * d(m.routed_experts) * 4.0;    // router logits (FP32) in, top-k out
    launches += 3.0 + (m.shared_experts > 0 ? 1.0 : 0.0);
    if (permute) {
      // Routed tokens into expert order (as dispatched: FP8 for FP8 experts) and outputs back, r + w.
      bytes += 2.0 * k * h * ((fp8 ? 1.0 : act) + act);
      launches += 2.0;
    }
  } else if (m.dense_intermediate_size > 0) {
    elems += 3.0 * d(m.dense_intermediate_size);
    launches += 1.0;
  }
  hardware::KernelWork w;
  w.kind = hardware::OpKind::dense_gemm;
  w.precision = hardware::Precision::bf16;
  w.tokens = tokens;
  w.bytes = tokens * (elems * act + bytes);
  w.launches = launches;
  return w;
}

hardware::KernelWork router_work(const ModelSpec& m, double tokens) {
  // The gate runs in BF16 even for FP8 models.
  hardware::KernelWork w = gemm(hardware::OpKind::dense_gemm, hardware::Precision::bf16, m, tokens,
                                d(m.hidden_size) * d(m.routed_experts), d(m.hidden_size) + d(m.routed_experts));
  w.bytes += d(m.hidden_size) * d(m.routed_experts) * (2.0 - d(m.weight_bytes));
  return w;
}

hardware::KernelWork embedding_work(const ModelSpec& m, double tokens) {
  hardware::KernelWork w;
  w.kind = hardware::OpKind::dense_gemm;
  w.precision = hardware::Precision::bf16;
  w.tokens = tokens;
  w.bytes = tokens * d(m.hidden_size) * d(m.activation_bytes) * 2.0;  // read the rows, write the activations
  return w;
}

hardware::KernelWork mtp_projection_work(const ModelSpec& m, double tokens) {
  const double h = d(m.hidden_size);
  return gemm(hardware::OpKind::dense_gemm, m.weight_precision(), m, tokens, 2.0 * h * h, 3.0 * h);
}

hardware::KernelWork lm_head_work(const ModelSpec& m, double tokens) {
  // The LM head stays in BF16 in FP8 checkpoints.
  hardware::KernelWork w = gemm(hardware::OpKind::dense_gemm, hardware::Precision::bf16, m, tokens,
                                d(m.hidden_size) * d(m.vocab_size), d(m.hidden_size) + d(m.vocab_size));
  w.bytes += d(m.hidden_size) * d(m.vocab_size) * (2.0 - d(m.weight_bytes));
  return w;
}

}  // namespace epsim::models
