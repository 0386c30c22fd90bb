// SPDX-License-Identifier: Apache-2.0
#include "experiments/cli/listings.hpp"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <string_view>
#include <utility>

#include "experiments/cli/config_keys.hpp"
#include "hardware/cluster_spec.hpp"
#include "hardware/gpu_spec.hpp"
#include "hardware/link_types.hpp"
#include "hardware/variability.hpp"
#include "models/hf_config.hpp"
#include "models/model_spec.hpp"
#include "policies/placement_policy.hpp"
#include "policies/rebalance_config.hpp"
#include "policies/registry.hpp"
#include "policies/routing_policy.hpp"
#include "policies/trigger_factory.hpp"
#include "sim/handoff_router.hpp"

namespace epsim::experiments {

namespace {

template <class Registry>
void list_registry(const Registry& r, std::ostream& out) {
  out << r.kind() << " policies:\n";
  for (const auto& e : r.entries()) {
    out << fmt::format("  {:<12} {}\n", e.name, e.description);
    for (const core::ParamDoc& p : r.docs(e)) {
      out << "      " << key_line(p) << "\n";
    }
  }
}

namespace {
// A preset's attention and number formats in a few words: "MLA + DSA top-2048, FP8",
// "GQA, 36 linear (gated_deltanet), BF16", "GQA, 18 sliding (128), BF16 + MXFP4 experts".
std::string mechanisms(const models::ModelSpec& m) {
  std::string out = m.attention == models::AttentionKind::mla ? "MLA" : "GQA";
  if (m.sparse_attention()) {
    out += fmt::format(" + DSA top-{}", m.index_topk);
  }
  if (const std::int64_t n = m.layers_of(models::LayerAttention::sliding); n > 0) {
    out += fmt::format(", {} sliding ({})", n, m.sliding_window);
  }
  if (const std::int64_t n = m.layers_of(models::LayerAttention::chunked); n > 0) {
    out += fmt::format(", {} chunked ({})", n, m.attention_chunk_size);
  }
  if (const std::int64_t n = m.layers_of(models::LayerAttention::linear); n > 0) {
    out += fmt::format(", {} linear ({})", n,
                       m.linear_kind == models::LinearAttentionKind::lightning ? "lightning" : "gated_deltanet");
  }
  const auto upper = [](models::WeightFormat f) {
    std::string name(core::choice_name<models::WeightFormat>(models::k_weight_formats, f));
    for (char& ch : name) {
      ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    }
    return name;
  };
  out += ", " + upper(m.weight_format);
  if (m.expert_format != m.weight_format) {
    out += " + " + upper(m.expert_format) + " experts";
  }
  return out;
}
}  // namespace

void list_models(std::ostream& out) {
  out << "models:\n";
  for (const std::string& name : models::model_presets().names()) {
    const models::ModelSpec m = models::load_model_preset(name);
    out << fmt::format("  {:<25} {:<25} {:>3} layers ({} MoE), {:>3} experts top-{}, {} shared, hidden {}, {}\n", name,
                       m.name, m.num_layers, m.num_moe_layers(), m.routed_experts, m.top_k, m.shared_experts,
                       m.hidden_size, mechanisms(m));
  }
}

void list_gpus(std::ostream& out) {
  out << "gpus:\n";
  for (const std::string& name : hardware::gpu_presets().names()) {
    const hardware::GpuSpec g = hardware::load_gpu_preset(name);
    out << fmt::format(
        "  {:<15} {:<34} BF16 {:>6.0f} TFLOP/s, FP8 {:>6.0f}, FP4 {:>6.0f}, HBM {:>5.0f} GB/s, {:>5.1f} GiB\n", name,
        g.name, g.bf16_tflops, g.fp8_tflops, g.fp4_tflops, g.hbm_gbps, g.memory_gib);
  }
}

void list_clusters(std::ostream& out) {
  out << "clusters:\n";
  for (const std::string& name : hardware::cluster_presets().names()) {
    const hardware::ClusterSpec c = hardware::load_cluster_preset(name);
    out << fmt::format("  {:<14} {:<40} {} GPUs/node of {}, scale-up {:.0f} GB/s/dir, NIC {:.1f} GB/s x {}/node\n",
                       name, c.name, c.gpus_per_node, c.gpu, c.scale_up_link.bw_gbps, c.nic_link.bw_gbps,
                       c.nics_per_node);
  }
  out << "variability presets: " << fmt::format("{}", fmt::join(hardware::variability_preset_names(), ", ")) << "\n";
}

void list_links(std::ostream& out) {
  out << "links:\n";
  for (const std::string& name : hardware::link_type_names()) {
    const hardware::LinkSpec l = hardware::link_type(name);
    out << fmt::format("  {:<16} {:>7.2f} GB/s per direction, {:.2f} us per hop\n", name, l.bw_gbps, l.latency_us);
  }
}

void list_policies(std::ostream& out) {
  list_registry(policies::placement_registry(), out);
  list_registry(policies::routing_registry(), out);
  list_registry(policies::trigger_registry(), out);
  // The keys of [policy.rebalance] that every trigger shares (read in documentation mode).
  core::ParamTable docs(std::string("policy"));
  policies::parse_rebalance(docs);
  out << "  every trigger ([policy.rebalance], or policy.rebalance = \"NAME\"):\n";
  for (const core::ParamDoc& p : docs.docs()) {
    out << "      " << key_line(p) << "\n";
  }
  // Disaggregated serving's decode-rank choice (disaggregation.handoff).
  list_registry(serving::handoff_registry(), out);
}

// What `epsim list` lists, in the order `list all` prints it.
constexpr std::array<std::pair<std::string_view, void (*)(std::ostream&)>, 5> k_listings{{
    {"models", list_models},
    {"gpus", list_gpus},
    {"clusters", list_clusters},
    {"links", list_links},
    {"policies", list_policies},
}};

}  // namespace

void print_config_keys(const std::string& section, const std::vector<std::string>& except, bool markdown,
                       std::ostream& out) {
  const std::vector<core::ParamDoc> docs = section_keys(document_config(), section, except);
  if (markdown) {
    print_keys_markdown(docs, section, out);
    return;
  }
  for (const core::ParamDoc& d : docs) {
    out << key_line(d) << "\n";
  }
}

void print_hf_model(const std::string& file, const std::vector<std::string>& accepted, std::ostream& out) {
  const models::HfModelTable t = models::read_hf_config(file, accepted);
  out << "# " << t.family << " from " << file << "\n" << models::hf_model_toml(t);
}

bool print_listing(const std::string& what, std::ostream& out) {
  bool listed = false;
  for (const auto& [name, list] : k_listings) {
    if (what == "all" || what == name) {
      list(out);
      listed = true;
    }
  }
  return listed;
}

}  // namespace epsim::experiments
