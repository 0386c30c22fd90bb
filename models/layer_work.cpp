// SPDX-License-Identifier: Apache-2.0
#include "models/layer_work.hpp"

#include <algorithm>
#include <cmath>

namespace epsim::models {
namespace {

double d(std::int64_t v) {
  return static_cast<double>(v);
}

hardware::KernelWork gemm(hardware::OpKind kind, hardware::Precision p, double weight_bytes, const ModelSpec& m,
                          double tokens, double params, double act_elems_per_token) {
  hardware::KernelWork w;
  w.kind = kind;
  w.precision = p;
  w.tokens = tokens;
  w.flops = 2.0 * tokens * params;
  w.bytes = params * weight_bytes + tokens * act_elems_per_token * d(m.activation_bytes);
  // The block's GEMMs as one of input width hidden: its waves of output tiles (hardware/roofline.hpp).
  w.gemm_m = tokens;
  w.gemm_n = params / d(m.hidden_size);
  return w;
}

}  // namespace

double indexer_params(const ModelSpec& m) {
  if (!m.sparse_attention()) {
    return 0.0;
  }
  // DeepSeek-V3.2's indexer (arXiv 2512.02556 §2.1; inference/model.py's Indexer): queries from the query
  // latent (wq_b), one shared key (wk) and a weight per head (weights_proj) from the hidden state.
  const double q_in = m.q_lora_rank > 0 ? d(m.q_lora_rank) : d(m.hidden_size);
  const double idx = d(m.index_n_heads * m.index_head_dim);
  return q_in * idx + d(m.hidden_size) * d(m.index_head_dim) + d(m.hidden_size) * d(m.index_n_heads);
}

double attention_params(const ModelSpec& m) {
  const double h = d(m.hidden_size);
  if (m.attention == AttentionKind::gqa) {
    const double q = d(m.num_heads * m.head_dim);
    const double kv = 2.0 * d(m.num_kv_heads * m.head_dim);
    const double gate = m.attention_output_gate ? h * q : 0.0;  // q_proj's second half: the output gate
    return h * q + h * kv + q * h + gate;                       // q, k+v, o projections
  }
  const double heads = d(m.num_heads);
  const double qk_head = d(m.qk_nope_head_dim + m.qk_rope_head_dim);
  const double q_proj =
      m.q_lora_rank > 0 ? h * d(m.q_lora_rank) + d(m.q_lora_rank) * heads * qk_head : h * heads * qk_head;
  const double kv_a = h * d(m.kv_lora_rank + m.qk_rope_head_dim);
  const double kv_b = d(m.kv_lora_rank) * heads * d(m.qk_nope_head_dim + m.v_head_dim);
  const double o_proj = heads * d(m.v_head_dim) * h;
  return q_proj + kv_a + kv_b + o_proj + indexer_params(m);
}

double linear_conv_channels(const ModelSpec& m) {
  return 2.0 * d(m.linear_num_key_heads * m.linear_key_head_dim) +
         d(m.linear_num_value_heads * m.linear_value_head_dim);
}

double linear_attention_params(const ModelSpec& m) {
  const double h = d(m.hidden_size);
  const double qk = d(m.linear_num_key_heads * m.linear_key_head_dim);
  const double v = d(m.linear_num_value_heads * m.linear_value_head_dim);
  // q, k, v and the output gate z in (Gated DeltaNet's in_proj_qkvz; lightning's qkv and output gate), the
  // output projection out.
  double p = h * (2.0 * qk + 2.0 * v) + v * h;
  if (m.linear_kind == LinearAttentionKind::gated_deltanet) {
    p += h * 2.0 * d(m.linear_num_value_heads);                  // in_proj_ba: beta and decay gates
    p += linear_conv_channels(m) * d(m.linear_conv_kernel_dim);  // depthwise causal conv over q, k, v
  }
  return p;
}

double layer_attention_params(const ModelSpec& m, LayerAttention kind) {
  return kind == LayerAttention::linear ? linear_attention_params(m) : attention_params(m);
}

double linear_state_bytes(const ModelSpec& m) {
  // One FP32 state matrix (key dim x value dim) per value head (SGLang's default mamba_ssm_dtype float32),
  // and the conv's last kernel - 1 inputs per channel in activation precision.
  const double state = d(m.linear_num_value_heads) * d(m.linear_key_head_dim) * d(m.linear_value_head_dim) * 4.0;
  const double conv = m.linear_conv_kernel_dim > 0
                          ? d(m.linear_conv_kernel_dim - 1) * linear_conv_channels(m) * d(m.activation_bytes)
                          : 0.0;
  return state + conv;
}

double attention_kv_bytes_per_token(const ModelSpec& m) {
  if (m.attention == AttentionKind::gqa) {
    return 2.0 * d(m.num_kv_heads * m.head_dim) * d(m.kv_cache_bytes);
  }
  return d(m.kv_lora_rank + m.qk_rope_head_dim) * d(m.kv_cache_bytes);
}

double index_key_bytes_per_token(const ModelSpec& m) {
  // FP8 keys with one FP32 scale per 128 elements (DeepSeek-V3.2-Exp inference/model.py's k_cache and
  // k_scale_cache).
  return m.sparse_attention() ? d(m.index_head_dim) + 4.0 * std::ceil(d(m.index_head_dim) / 128.0) : 0.0;
}

double kv_bytes_per_token_layer(const ModelSpec& m) {
  return attention_kv_bytes_per_token(m) + index_key_bytes_per_token(m);
}

double growing_kv_bytes_per_token(const ModelSpec& m) {
  return d(m.layers_of(LayerAttention::full) + m.layers_of(LayerAttention::chunked)) * kv_bytes_per_token_layer(m);
}

double state_bytes_per_request(const ModelSpec& m) {
  return d(m.layers_of(LayerAttention::sliding)) * d(m.sliding_window) * kv_bytes_per_token_layer(m) +
         d(m.layers_of(LayerAttention::linear)) * linear_state_bytes(m);
}

double expert_weight_bytes(const ModelSpec& m) {
  return 3.0 * d(m.hidden_size) * d(m.moe_intermediate_size) * m.expert_bytes();
}

double shared_expert_weight_bytes(const ModelSpec& m) {
  if (m.shared_intermediate_size == 0) {  // the form of earlier releases (bit-identical memory plans)
    return static_cast<double>(m.shared_experts) * expert_weight_bytes(m);
  }
  return 3.0 * d(m.hidden_size) * d(m.shared_intermediate_size) * m.expert_bytes();
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

double capped_causal_pairs(std::int64_t context, std::int64_t chunk, std::int64_t window) {
  // Positions p < window - 1 see p + 1 keys, the rest see window.
  const std::int64_t end = context + chunk;
  const std::int64_t ramp_end = std::clamp(window - 1, context, end);  // [context, ramp_end): p + 1 keys
  const double ramp = (static_cast<double>(ramp_end) * static_cast<double>(ramp_end + 1) -
                       static_cast<double>(context) * static_cast<double>(context + 1)) /
                      2.0;
  return ramp + static_cast<double>(end - ramp_end) * static_cast<double>(window);
}

namespace {
double expert_params(const ModelSpec& m) {
  return 3.0 * d(m.hidden_size) * d(m.moe_intermediate_size);
}
double embedding_params(const ModelSpec& m) {
  return d(m.vocab_size) * d(m.hidden_size) * (m.tie_word_embeddings ? 1.0 : 2.0);
}
double shared_params(const ModelSpec& m) {
  return 3.0 * d(m.hidden_size) * m.shared_width();
}
// A MoE layer of attention `attention` params with `experts` routed experts counted (router, shared and
// routed experts). The sums keep the order of earlier releases: their parameter counts stay bit-identical.
double moe_layer_params(const ModelSpec& m, double attention, double experts) {
  const double router = attention + d(m.hidden_size) * d(m.routed_experts);
  if (m.shared_intermediate_size == 0) {
    return router + (d(m.shared_experts) + experts) * expert_params(m);
  }
  return router + shared_params(m) + experts * expert_params(m);
}
double dense_layer_params(const ModelSpec& m, double attention) {
  return attention + 3.0 * d(m.hidden_size) * d(m.dense_intermediate_size);
}
// `base` plus every layer, with `experts` routed experts per MoE layer counted: softmax-attention layers,
// then linear ones.
double with_layer_params(const ModelSpec& m, double base, double experts) {
  std::int64_t moe_linear = 0;
  for (std::int64_t l = 0; l < m.num_layers; ++l) {
    moe_linear += m.attention_of(l) == LayerAttention::linear && m.is_moe_layer(l) ? 1 : 0;
  }
  const std::int64_t linear = m.layers_of(LayerAttention::linear);
  const std::int64_t moe = m.num_moe_layers() - moe_linear;
  const std::int64_t dense = m.num_layers - linear - moe;
  const double attn = attention_params(m);
  double p = base + d(dense) * dense_layer_params(m, attn) + d(moe) * moe_layer_params(m, attn, experts);
  if (linear > 0) {
    const double lin = linear_attention_params(m);
    p += d(linear - moe_linear) * dense_layer_params(m, lin) + d(moe_linear) * moe_layer_params(m, lin, experts);
  }
  return p;
}
}  // namespace

double total_params(const ModelSpec& m) {
  return with_layer_params(m, embedding_params(m), d(m.routed_experts));
}

double active_params(const ModelSpec& m) {
  return with_layer_params(m, embedding_params(m), d(m.top_k));
}

double non_expert_weight_bytes(const ModelSpec& m) {
  const double routed = d(m.num_moe_layers()) * d(m.routed_experts) * expert_params(m);
  if (m.expert_format == m.weight_format) {
    return (total_params(m) - routed) * m.weight_bytes();
  }
  const double shared = d(m.num_moe_layers()) * shared_params(m);
  return (total_params(m) - routed - shared) * m.weight_bytes() + shared * m.expert_bytes();
}

hardware::KernelWork attention_projection_work(const ModelSpec& m, double tokens) {
  return gemm(hardware::OpKind::dense_gemm, m.weight_precision(), m.weight_bytes(), m, tokens, attention_params(m),
              2.0 * d(m.hidden_size));
}

hardware::KernelWork linear_projection_work(const ModelSpec& m, double tokens) {
  return gemm(hardware::OpKind::dense_gemm, m.weight_precision(), m.weight_bytes(), m, tokens,
              linear_attention_params(m), 2.0 * d(m.hidden_size));
}

hardware::KernelWork attention_core_work(const ModelSpec& m, const AttentionBatch& b, hardware::OpKind kind) {
  hardware::KernelWork w;
  w.kind = kind;
  w.precision = m.attention_precision;  // BF16 unless attention_dtype = fp8 (an FP8 KV cache alone is dequantised)
  w.tokens = b.tokens;
  const double heads = d(m.num_heads);
  double flops_per_pair = 0.0;
  double act_per_token = 0.0;    // query in + attention output, elements
  double expanded_per_kv = 0.0;  // MLA prefill: K and V expanded from the latent cache, elements per KV token
  if (m.attention == AttentionKind::gqa) {
    flops_per_pair = 4.0 * heads * d(m.head_dim);
    act_per_token = 2.0 * heads * d(m.head_dim);
    w.head_dim = d(m.head_dim);
  } else if (kind == hardware::OpKind::attention_prefill && !m.sparse_attention()) {
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
    // DeepSeek Sparse Attention runs both phases so (MQA mode: the selected latent entries are shared by
    // the heads; arXiv 2512.02556 §2.1).
    flops_per_pair = 2.0 * heads * d(m.kv_lora_rank + m.qk_rope_head_dim) + 2.0 * heads * d(m.kv_lora_rank);
    act_per_token = heads * d(m.kv_lora_rank + m.qk_rope_head_dim) + heads * d(m.kv_lora_rank);
    w.head_dim = d(m.kv_lora_rank + m.qk_rope_head_dim);
  }
  w.flops = flops_per_pair * b.score_pairs;
  const double kv_tokens = b.kv_read_tokens + b.tokens;
  w.bytes = kv_tokens * attention_kv_bytes_per_token(m) +
            (b.tokens * act_per_token + kv_tokens * expanded_per_kv) * d(m.activation_bytes);
  return w;
}

hardware::KernelWork indexer_work(const ModelSpec& m, const AttentionBatch& b) {
  hardware::KernelWork w;
  w.kind = hardware::OpKind::sparse_indexer;
  w.precision = hardware::Precision::fp8;  // FP8 MQA logits (DeepGEMM's fp8_mqa_logits)
  w.tokens = b.tokens;
  const double idx = d(m.index_n_heads * m.index_head_dim);
  // Per (query, key) pair: a dot product per indexer head, then ReLU, the head's weight and the sum.
  w.flops = b.score_pairs * (2.0 * idx + 3.0 * d(m.index_n_heads));
  // The keys read and written, FP8 queries in, and index_topk selected indices (int32) out per query.
  w.bytes =
      (b.kv_read_tokens + b.tokens) * index_key_bytes_per_token(m) + b.tokens * idx + b.tokens * d(m.index_topk) * 4.0;
  w.head_dim = d(m.index_head_dim);
  return w;
}

hardware::KernelWork linear_attention_work(const ModelSpec& m, const LinearBatch& b, hardware::OpKind phase) {
  hardware::KernelWork w;
  w.kind = hardware::OpKind::linear_attention;
  w.precision = hardware::Precision::bf16;
  w.tokens = b.tokens;
  const double dk = d(m.linear_key_head_dim);
  const double dv = d(m.linear_value_head_dim);
  const double gated_delta = m.linear_kind == LinearAttentionKind::gated_deltanet ? 1.0 : 0.0;
  double per_head_token = 0.0;
  if (phase == hardware::OpKind::attention_decode) {
    // Recurrent form per token and value head: decay the state (dk dv), read q.S (2 dk dv), write the
    // outer product k v^T (2 dk dv); the delta rule also reads k.S first (2 dk dv).
    per_head_token = (5.0 + 2.0 * gated_delta) * dk * dv;
  } else {
    // Chunked form (chunks of C = 64 tokens; flash-linear-attention's chunk kernels): within a chunk the
    // scores q.k and their products with v (2C dk + 2C dv per token); across chunks q.S and the state
    // update (4 dk dv) and its decay (dk dv); the delta rule also forms k.k within the chunk and the
    // WY/UT transform of k and v (4C dk + 2C dv) and reads k.S (2 dk dv).
    constexpr double chunk = 64.0;
    per_head_token =
        2.0 * chunk * (dk + dv) + 5.0 * dk * dv + gated_delta * (2.0 * chunk * (2.0 * dk + dv) + 2.0 * dk * dv);
  }
  const double conv = 2.0 * d(m.linear_conv_kernel_dim) * linear_conv_channels(m);
  w.flops = b.tokens * (d(m.linear_num_value_heads) * per_head_token + conv);
  // Each request's state read and written once per step; q, k, v and the gates in, the output out.
  const double act = 2.0 * d(m.linear_num_key_heads * m.linear_key_head_dim) +
                     3.0 * d(m.linear_num_value_heads * m.linear_value_head_dim);
  w.bytes = 2.0 * b.requests * linear_state_bytes(m) + b.tokens * act * d(m.activation_bytes);
  w.head_dim = dk;
  return w;
}

hardware::KernelWork dense_ffn_work(const ModelSpec& m, double tokens, double intermediate) {
  return gemm(hardware::OpKind::dense_gemm, m.weight_precision(), m.weight_bytes(), m, tokens,
              3.0 * d(m.hidden_size) * intermediate, 2.0 * d(m.hidden_size));
}

hardware::KernelWork shared_expert_work(const ModelSpec& m, double tokens) {
  return gemm(hardware::OpKind::dense_gemm, m.expert_precision(), m.expert_bytes(), m, tokens,
              3.0 * d(m.hidden_size) * m.shared_width(), 2.0 * d(m.hidden_size));
}

hardware::KernelWork expert_ffn_work(const ModelSpec& m, double padded_tokens, double tokens, double activated) {
  hardware::KernelWork w;
  w.kind = hardware::OpKind::expert_ffn;
  w.precision = m.expert_precision();
  w.tokens = tokens;
  const double per_token = 3.0 * d(m.hidden_size) * d(m.moe_intermediate_size);
  w.flops = 2.0 * padded_tokens * per_token;
  w.bytes = activated * expert_weight_bytes(m) + tokens * 2.0 * d(m.hidden_size) * d(m.activation_bytes);
  return w;
}

hardware::KernelWork elementwise_work(const ModelSpec& m, double tokens, bool moe_layer, bool permute) {
  const double h = d(m.hidden_size);
  const double act = d(m.activation_bytes);
  const bool fp8 = m.weight_precision() == hardware::Precision::fp8;  // FP4 activations: not priced here
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
    elems += k * 3.0 * inter;                  // SiLU-and-multiply: read gate and up, write
    elems += (k + 1.0) * h;                    // weighted sum of the routed outputs
    elems += 3.0 * m.shared_width();           // the shared experts' SiLU
    bytes += 2.0 * d(m.routed_experts) * 4.0;  // router logits (FP32) in, top-k out
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
  hardware::KernelWork w = gemm(hardware::OpKind::dense_gemm, hardware::Precision::bf16, m.weight_bytes(), m, tokens,
                                d(m.hidden_size) * d(m.routed_experts), d(m.hidden_size) + d(m.routed_experts));
  w.bytes += d(m.hidden_size) * d(m.routed_experts) * (2.0 - m.weight_bytes());
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
  return gemm(hardware::OpKind::dense_gemm, m.weight_precision(), m.weight_bytes(), m, tokens, 2.0 * h * h, 3.0 * h);
}

hardware::KernelWork lm_head_work(const ModelSpec& m, double tokens) {
  // The LM head stays in BF16 in FP8 checkpoints.
  hardware::KernelWork w = gemm(hardware::OpKind::dense_gemm, hardware::Precision::bf16, m.weight_bytes(), m, tokens,
                                d(m.hidden_size) * d(m.vocab_size), d(m.hidden_size) + d(m.vocab_size));
  w.bytes += d(m.hidden_size) * d(m.vocab_size) * (2.0 - m.weight_bytes());
  return w;
}

}  // namespace epsim::models
