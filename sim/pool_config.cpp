// SPDX-License-Identifier: Apache-2.0
#include "sim/pool_config.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/presets.hpp"
#include "hardware/gpu_spec.hpp"
#include "sim/handoff_router.hpp"

namespace epsim::serving {
namespace {

// Without [[pool]]: one colocated pool, or [disaggregation]'s prefill pool (first) and decode pool.
std::vector<PoolSpec> shorthand_pools(const ServingSections& sections, const PoolContext& ctx) {
  const ParallelConfig& par = sections.parallel;
  const DisaggregationConfig& d = sections.disaggregation;
  const auto pool = [&](std::string name, PoolRole role, int first_group, int groups, int ep, int first_gpu) {
    PoolSpec p;
    p.name = std::move(name);
    p.role = role;
    p.shape = PoolShape{first_group, groups, ep, first_gpu};
    p.attention_tp = par.attention_tp;
    p.redundant_experts = par.redundant_experts;
    p.comm = *ctx.comm;
    p.policy = *ctx.policy;
    return p;
  };
  std::vector<PoolSpec> out;
  if (d.prefill_groups == 0) {
    out.push_back(pool("colocated", PoolRole::colocated, 0, ctx.gpus / par.ep_size, par.ep_size, 0));
    return out;
  }
  const int prefill_gpus = d.prefill_groups * d.prefill_ep_size;
  out.push_back(pool("prefill", PoolRole::prefill, 0, d.prefill_groups, d.prefill_ep_size, 0));
  out.back().gpu = d.prefill_gpu;
  out.back().comm = ctx.prefill_comm->value_or(*ctx.comm);
  out.back().handoff_to = {1};
  out.back().handoff = d.handoff;
  out.push_back(pool("decode", PoolRole::decode, d.prefill_groups, (ctx.gpus - prefill_gpus) / par.ep_size, par.ep_size,
                     prefill_gpus));
  return out;
}

bool valid_name(const std::string& name) {
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

// One [[pool]] entry, its GPUs starting at `first_gpu`, its groups at `first_group`.
// `handoff_to`: the decode pools' names it gives, resolved once every pool is read.
PoolSpec parse_pool(core::ParamTable& t, core::ParamTable& root, const ServingSections& sections,
                    const PoolContext& ctx, int first_gpu, int first_group, std::vector<std::string>& handoff_to) {
  const ParallelConfig& par = sections.parallel;
  PoolSpec p;
  p.role = t.choice<PoolRole>("role", PoolRole::colocated,
                              "colocated (prefills and decodes), prefill (hands prefilled requests to decode "
                              "pools) or decode",
                              k_pool_roles);
  p.name = t.string("name", role_name(p.role), "the pool's name in outputs and handoff_to (default: its role)");
  if (!t.documenting() && !valid_name(p.name)) {
    t.fail("name", fmt::format("expected 1-64 letters, digits, '_' or '-', got \"{}\"", p.name));
  }
  const auto gpus = static_cast<int>(t.integer_required(
      "gpus", "GPUs of the pool: the next ones of the cluster, pools taking GPUs in their order", {1, 1 << 20}));
  const auto ep = static_cast<int>(t.integer(
      "ep_size", par.ep_size, "GPUs per EP group (default: parallel.ep_size; 0 = the pool's gpus)", {0, 1 << 20}));
  p.attention_tp = static_cast<int>(t.integer("attention_tp", par.attention_tp,
                                              "GPUs per attention rank (default: parallel.attention_tp)", {1, 1024}));
  p.redundant_experts =
      static_cast<int>(t.integer("redundant_experts", par.redundant_experts,
                                 "extra expert slots per EP group (default: parallel's)", {0, 1 << 16}));
  const std::string gpu = t.string("gpu", "", "GPU preset of the pool's GPUs (default: the cluster's)");
  if (!gpu.empty()) {
    core::ParamTable g({core::preset_layer(t, "gpu", hardware::gpu_presets(), gpu)}, t.path() + ".gpu");
    p.gpu = hardware::parse_gpu_spec(g);
  }
  auto comm = t.table("communication", "the pool's overrides of [communication]");
  p.comm = hardware::parse_ep_comm(comm, ctx.comm);
  comm.finish();
  auto policy = t.table("policy", "the pool's overrides of [policy]: its placement, routing and rebalancing");
  const bool own_policy = t.contains("policy");
  policy.add_layers_below(root.table("policy", "placement, routing and rebalancing policies (epsim list policies)"));
  p.policy = own_policy ? policies::parse_policy_section(policy) : *ctx.policy;
  std::vector<std::string>& to = handoff_to;
  to = t.string_list("handoff_to", "prefill pools: the decode pools (names) it hands off to (default: every one)");
  p.handoff = t.string("handoff", k_default_handoff,
                       "prefill pools: the handoff policy choosing each request's decode rank (epsim list policies)");
  if (const std::string unknown = handoff_registry().unknown_message(p.handoff); !unknown.empty()) {
    t.fail("handoff", unknown);
  }
  t.finish();
  if (t.documenting()) {
    return p;
  }
  p.shape = PoolShape{first_group, 0, ep == 0 ? gpus : ep, first_gpu};
  const int e = p.shape.ep_size;
  if (gpus % e != 0) {
    t.fail("ep_size", fmt::format("must divide the pool's {} GPUs, got {}", gpus, e));
  }
  p.shape.groups = gpus / e;
  check_group_fits_nodes(t, "ep_size", e, ctx.gpus_per_node);
  if ((ctx.routed_experts + p.redundant_experts) % e != 0) {
    t.fail("redundant_experts",
           fmt::format("routed experts + redundant slots ({} + {}) must divide evenly over the pool's ep_size = {}",
                       ctx.routed_experts, p.redundant_experts, e));
  }
  if (e % p.attention_tp != 0 || std::min(e, ctx.gpus_per_node) % p.attention_tp != 0) {
    t.fail("attention_tp", fmt::format("must divide the pool's ep_size ({}) and stay inside a node ({} GPUs), got {}",
                                       e, ctx.gpus_per_node, p.attention_tp));
  }
  if (p.role != PoolRole::prefill && (!to.empty() || t.contains("handoff"))) {
    t.fail(to.empty() ? "handoff" : "handoff_to", "only a prefill pool hands requests off");
  }
  return p;
}

}  // namespace

std::vector<PoolSpec> parse_pools(core::ParamTable& root, const ServingSections& sections, const PoolContext& ctx) {
  std::vector<core::ParamTable> entries =
      root.table_array("pool", "the deployment's pools, in GPU order (docs/serving.md, Pools)");
  if (!sections.pool_list && !root.documenting()) {
    return shorthand_pools(sections, ctx);
  }
  if (!root.documenting() && ctx.prefill_comm != nullptr && ctx.prefill_comm->has_value()) {
    root.fail("communication",
              "[communication.prefill] is the shorthand's; with [[pool]] give a prefill pool its "
              "own [pool.communication]");
  }
  std::vector<PoolSpec> pools;
  std::vector<std::vector<std::string>> handoff_names;
  int gpu = 0;
  int group = 0;
  for (core::ParamTable& t : entries) {
    handoff_names.emplace_back();
    pools.push_back(parse_pool(t, root, sections, ctx, gpu, group, handoff_names.back()));
    gpu += pools.back().gpus();
    group += pools.back().shape.groups;
  }
  if (root.documenting()) {
    return {};
  }
  const auto fail = [&](const std::string& what) { root.fail("pool", what); };
  if (gpu != ctx.gpus) {
    fail(fmt::format("the pools' GPUs add up to {}, but the cluster has {}", gpu, ctx.gpus));
  }
  for (std::size_t i = 0; i < pools.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (pools[i].name == pools[j].name) {
        fail(fmt::format("two pools are named \"{}\" (pool[{}] and pool[{}])", pools[i].name, j, i));
      }
    }
  }
  const auto index_of = [&](const std::string& name) -> int {
    for (std::size_t i = 0; i < pools.size(); ++i) {
      if (pools[i].name == name) {
        return static_cast<int>(i);
      }
    }
    return -1;
  };
  std::vector<bool> fed(pools.size(), false);
  for (std::size_t i = 0; i < pools.size(); ++i) {
    PoolSpec& p = pools[i];
    if (p.role != PoolRole::prefill) {
      continue;
    }
    for (const std::string& name : handoff_names[i]) {
      const int j = index_of(name);
      if (j < 0 || pools[static_cast<std::size_t>(j)].role != PoolRole::decode) {
        entries[i].fail("handoff_to", fmt::format("\"{}\" is not the name of a decode pool", name));
      }
      p.handoff_to.push_back(j);
    }
    if (handoff_names[i].empty()) {  // every decode pool
      for (std::size_t j = 0; j < pools.size(); ++j) {
        if (pools[j].role == PoolRole::decode) {
          p.handoff_to.push_back(static_cast<int>(j));
        }
      }
    }
    if (p.handoff_to.empty()) {
      entries[i].fail("role", "a prefill pool needs a decode pool to hand off to, and there is none");
    }
    for (const int j : p.handoff_to) {
      fed[static_cast<std::size_t>(j)] = true;
    }
  }
  for (std::size_t i = 0; i < pools.size(); ++i) {
    if (pools[i].role == PoolRole::decode && !fed[i]) {
      entries[i].fail(
          "role", fmt::format("decode pool \"{}\" gets no requests: no prefill pool hands off to it", pools[i].name));
    }
  }
  return pools;
}

}  // namespace epsim::serving
