// SPDX-License-Identifier: Apache-2.0
#pragma once
// Work accounting of one transformer layer's kernels: FLOPs (multiply-add = 2) and HBM bytes, from the
// model's shapes. Pure functions of the model and the batch; the hardware layer prices them.
//
// Conventions (documented in docs/model.md):
// - GEMM of t tokens by a (k x n) weight: 2*t*k*n FLOPs; bytes = weights + t*(k + n) activations; its
//   output shape for tile waves is t x (the block's parameters / hidden), the block's GEMMs as one.
// - Attention = projections (a dense GEMM over all new tokens) + a core kernel per phase: per (query,
//   visible key) pair, QK^T and PV products. GQA: 4*heads*head_dim FLOPs per pair; MLA in its absorbed
//   form (as inference engines run it): 2*heads*(kv_lora + rope) + 2*heads*kv_lora per pair, reading
//   the compressed cache. Core bytes: KV read (context) and written (new tokens) + query and output.
//   Its head dim (for the softmax term) is that of the score products: head_dim, MLA prefill
//   qk_nope + qk_rope, MLA decode kv_lora + qk_rope.
// - Expert FFN (SwiGLU: gate, up, down): 6*hidden*moe_intermediate FLOPs per *padded* token; bytes =
//   the weights of every *activated* expert + the real tokens' activations in and out.
#include <cstdint>

#include "hardware/kernel_work.hpp"
#include "models/model_spec.hpp"

namespace epsim::models {

/// The attention core work of one phase (prefill or decode) on one GPU for one layer and step.
struct AttentionBatch {
  double tokens = 0.0;          ///< new tokens (prefill chunk tokens, or one per decode)
  double score_pairs = 0.0;     ///< (query, key) pairs, causal within a prefill chunk
  double kv_read_tokens = 0.0;  ///< cached tokens read from the KV cache (context before this step)
};

/// The linear-attention work of one phase on one GPU for one layer and step.
struct LinearBatch {
  double tokens = 0.0;    ///< new tokens
  double requests = 0.0;  ///< requests (each state read and written once)
};

/// Causal (query, key) pairs of a chunk of `chunk` new tokens after `context` cached ones.
inline double causal_pairs(double context, double chunk) {
  return chunk * context + chunk * (chunk + 1.0) / 2.0;
}
/// The same under chunked (local) attention with window `window`: a query at position p sees the keys
/// from floor(p / window) * window to p.
double chunked_causal_pairs(std::int64_t context, std::int64_t chunk, std::int64_t window);
/// Pairs of a chunk of `chunk` new tokens after `context` cached ones when each query sees at most `window`
/// keys, itself included (sliding-window attention; DeepSeek Sparse Attention's top-k): sum over positions
/// p in [context, context + chunk) of min(p + 1, window), in closed form.
double capped_causal_pairs(std::int64_t context, std::int64_t chunk, std::int64_t window);
/// Keys a chunked-attention query at position `context` reads from the cache: context mod window.
inline double chunked_kv_read(std::int64_t context, std::int64_t window) {
  return static_cast<double>(context % window);
}

/// Parameters of the whole model (embedding, LM head unless tied, attention, dense FFNs, routers, shared
/// and routed experts; norms are negligible and left out), and those one token activates (top-k experts).
double total_params(const ModelSpec& m);
double active_params(const ModelSpec& m);
/// Weight bytes of everything but the routed experts (replicated on every EP rank with DP attention).
double non_expert_weight_bytes(const ModelSpec& m);

/// Parameters of one softmax-attention layer's attention block (projections, the output gate and DSA's
/// indexer included).
double attention_params(const ModelSpec& m);
/// Parameters of one linear-attention layer's block (projections, gates and conv).
double linear_attention_params(const ModelSpec& m);
/// KV-cache bytes one token occupies in one softmax-attention layer (with DSA's indexer keys).
double kv_bytes_per_token_layer(const ModelSpec& m);
/// The attention's own part of that (MLA latent or GQA K and V), without DSA's indexer keys.
double attention_kv_bytes_per_token(const ModelSpec& m);
/// DSA's indexer key bytes per token and layer (0 without DSA).
double index_key_bytes_per_token(const ModelSpec& m);
/// KV bytes per context token over the layers whose cache grows with the context (full, chunked).
double growing_kv_bytes_per_token(const ModelSpec& m);
/// One request's fixed-size state over all layers: the sliding layers' window of KV (held whole: an upper
/// bound for requests shorter than the window) and the linear layers' recurrent and conv states.
double state_bytes_per_request(const ModelSpec& m);
/// One linear-attention layer's state of one request: FP32 key dim x value dim per value head, and the conv's
/// last kernel - 1 inputs per channel.
double linear_state_bytes(const ModelSpec& m);
/// Bytes of one routed expert's weights.
double expert_weight_bytes(const ModelSpec& m);
/// Bytes of one MoE layer's shared experts.
double shared_expert_weight_bytes(const ModelSpec& m);

/// QKV and output projections of `tokens` tokens (a dense GEMM).
hardware::KernelWork attention_projection_work(const ModelSpec& m, double tokens);
/// The projections of a linear-attention layer (q, k, v, gates in; out).
hardware::KernelWork linear_projection_work(const ModelSpec& m, double tokens);
/// Attention scores and values of one phase: `kind` is attention_prefill or attention_decode. With DSA,
/// `b` holds the selected pairs and keys (capped_causal_pairs at index_topk), both phases absorbed.
hardware::KernelWork attention_core_work(const ModelSpec& m, const AttentionBatch& b, hardware::OpKind kind);
/// DSA's lightning indexer over every causal pair of `b` (its keys: the indexer cache).
hardware::KernelWork indexer_work(const ModelSpec& m, const AttentionBatch& b);
/// A linear-attention layer's recurrence: chunked for prefill, recurrent for decode (`phase`).
hardware::KernelWork linear_attention_work(const ModelSpec& m, const LinearBatch& b, hardware::OpKind phase);
/// Dense SwiGLU FFN of width `intermediate` on `tokens` tokens (dense layers, shared experts).
hardware::KernelWork dense_ffn_work(const ModelSpec& m, double tokens, double intermediate);
/// Shared experts on `tokens` tokens (a dense FFN in the experts' weight format).
hardware::KernelWork shared_expert_work(const ModelSpec& m, double tokens);
/// Routed experts of one GPU: `padded_tokens` computed, `tokens` real, `activated` experts' weights read.
hardware::KernelWork expert_ffn_work(const ModelSpec& m, double padded_tokens, double tokens, double activated);
/// The small memory-bound kernels of one layer on `tokens` tokens, between its GEMMs and attention core:
/// two RMSNorms fused with their residual adds, MLA's latent norms, RoPE, FP8 quantisation of the GEMM
/// inputs (FP8 weights), SiLU-and-multiply; in a MoE layer also the router's top-k, the weighted sum
/// of the routed outputs and, with `permute`, the copy of routed tokens into expert order and back
/// that contiguous-layout kernels need (DeepEP's low-latency dispatch writes the masked layout itself).
/// Bytes only (no FLOPs), one launch per kernel.
hardware::KernelWork elementwise_work(const ModelSpec& m, double tokens, bool moe_layer, bool permute);
/// Router (gate) projection hidden -> routed_experts.
hardware::KernelWork router_work(const ModelSpec& m, double tokens);
/// Embedding lookup of `tokens` tokens (a gather of hidden-wide rows).
hardware::KernelWork embedding_work(const ModelSpec& m, double tokens);
/// DeepSeek-V3's MTP module input projection (arXiv 2412.19437, §2.2): the previous depth's hidden state
/// and the next token's embedding, each RMS-normed, concatenated (2 x hidden) and projected to hidden.
hardware::KernelWork mtp_projection_work(const ModelSpec& m, double tokens);
/// LM head for the tokens that emit a token.
hardware::KernelWork lm_head_work(const ModelSpec& m, double tokens);

}  // namespace epsim::models
