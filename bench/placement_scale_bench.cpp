// SPDX-License-Identifier: Apache-2.0
// Placement solve time of every registered placement policy (and metro's routing per step-layer) at the
// expert counts of the 2026 models (issue 39): Kimi-K2's 384 routed experts (60 MoE layers, top-8) on 64
// GPUs (8 x 8) and on one GB300 / GB200 NVL72 rack (72 GPUs: 384 does not divide over them, so each GPU
// gets ceil(384 / 72) = 6 slots and 48 of the 432 are redundant), and Qwen3-Next's 512 (48 MoE layers,
// top-10) on 64 GPUs. DIRECTOR's bound is 32 GPUs (docs/policies.md, Bounds): it is refused on the larger
// groups, so it is timed on 32 GPUs (4 x 8). The policies get what the simulator gives them
// (experiments/assembly/builders.cpp): the shape, link bandwidths, a 16-step load window of 512 tokens
// per step from the synthetic router, co-selection counts, cross-layer transitions, and cost curves profiled from the
// H200 roofline with speeds 1 +- 4 % and GPU 0 12 % slow. Each solve is timed `reps` times (argument 1, default 3;
// argument 2, optional: the policies to time, comma-separated): CPU time of this thread, the minimum and the median.
// Model shapes are written here (hidden size, expert FFN width and FP8 or BF16 weights are all the cost curves read),
// not taken from presets.
#include <fmt/format.h>

#include <toml++/toml.h>
#include <algorithm>
#include <boost/random/normal_distribution.hpp>
#include <cstdio>
#include <ctime>
#include <string>

#include "core/error.hpp"
#include "core/params.hpp"
#include "hardware/gpu_spec.hpp"
#include "hardware/roofline.hpp"
#include "models/model_spec.hpp"
#include "policies/even_routing.hpp"
#include "policies/grace/affinity.hpp"
#include "policies/metro/metro_routing.hpp"
#include "policies/placement_policy.hpp"
#include "policies/registry.hpp"
#include "sim/expert_cost_profile.hpp"
#include "workloads/synthetic_router.hpp"

using namespace epsim;

namespace {

// Kimi-K2 (moonshotai/Kimi-K2-Instruct config.json): 61 layers, the first dense, 384 routed experts of
// width 2048, top-8, one shared expert, n_group = topk_group = 1, MLA, FP8 weights.
constexpr const char* k_kimi_k2 = R"toml(
name = "Kimi-K2 (bench shape)"
hidden_size = 7168
num_layers = 61
first_dense_layers = 1
dense_intermediate_size = 18432
moe_intermediate_size = 2048
routed_experts = 384
shared_experts = 1
top_k = 8
attention = "mla"
num_heads = 64
q_lora_rank = 1536
kv_lora_rank = 512
qk_nope_head_dim = 128
qk_rope_head_dim = 64
v_head_dim = 128
vocab_size = 163840
weight_dtype = "fp8"
)toml";

// Qwen3-Next-80B-A3B (Qwen/Qwen3-Next-80B-A3B-Instruct config.json): 48 layers, all MoE, 512 routed
// experts of width 512, top-10, one shared expert, BF16. Its linear-attention layers do not change the
// expert FFN, so the shape is written with plain GQA attention here.
constexpr const char* k_qwen3_next = R"toml(
name = "Qwen3-Next-80B-A3B (bench shape)"
hidden_size = 2048
num_layers = 48
moe_intermediate_size = 512
routed_experts = 512
shared_experts = 1
top_k = 10
num_heads = 16
num_kv_heads = 2
head_dim = 256
vocab_size = 151936
weight_dtype = "bf16"
)toml";

models::ModelSpec parse_shape(const char* text) {
  const toml::table tab = toml::parse(text);
  core::ParamTable t({core::ParamLayer{&tab, "bench"}}, "model");
  return models::parse_model_spec(t);
}

double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Timing {
  double min_s = 0.0;
  double median_s = 0.0;
};

template <class F>
Timing time_min(int reps, F&& f) {
  std::vector<double> s;
  for (int i = 0; i < reps; ++i) {
    const double t0 = thread_cpu_s();
    f();
    s.push_back(thread_cpu_s() - t0);
  }
  std::sort(s.begin(), s.end());
  return {s.front(), s[s.size() / 2]};
}

struct Case {
  const char* label;
  const models::ModelSpec& model;
  int gpus;
  int gpus_per_node;
  int slots;  // per GPU
};

// The inputs every policy may ask for, built once per case as experiments/assembly/builders.cpp does.
policies::PlacementInput make_input(const Case& c) {
  const auto layers = static_cast<int>(c.model.num_moe_layers());
  const auto experts = static_cast<int>(c.model.routed_experts);
  policies::PlacementInput in = policies::PlacementInput::shape(layers, experts, c.gpus, c.gpus / c.gpus_per_node,
                                                                c.slots, static_cast<int>(c.model.expert_groups));
  in.seed = 1;
  in.token_bytes = static_cast<double>(c.model.hidden_size * 2);
  std::vector<double> links;
  for (int a = 0; a < c.gpus; ++a) {
    for (int b = 0; b < c.gpus; ++b) {
      links.push_back(a / c.gpus_per_node == b / c.gpus_per_node ? 450.0 : 50.0);
    }
  }
  in.set_link_bandwidths(std::move(links));
  core::Rng rng(5);
  boost::random::normal_distribution<double> spread(1.0, 0.04);
  std::vector<double> speed(static_cast<std::size_t>(c.gpus));
  for (double& s : speed) {
    s = spread(rng);
  }
  speed[0] = 0.88;
  const hardware::RooflineCostModel cost(hardware::load_gpu_preset("h200"), speed);
  const core::RandomStreams streams(9);
  in.set_cost_curves(
      serving::make_cost_curves(c.model, cost, 0, c.gpus, c.slots, policies::CostProfileConfig{}, streams));
  workloads::SyntheticRouter router(workloads::SyntheticRouterConfig{}, layers, experts,
                                    static_cast<int>(c.model.top_k), streams);
  const auto E = static_cast<std::size_t>(experts);
  std::vector<std::int32_t> counts(E);
  std::vector<double> total(static_cast<std::size_t>(layers) * E, 0.0);
  std::vector<double> per_step;
  const auto block = E * E;
  std::vector<double> coactivation(static_cast<std::size_t>(layers) * block, 0.0);
  for (int t = 0; t < 16; ++t) {
    router.begin_step(workloads::StepContext{0, 512, 0, 512, {}});
    for (int l = 0; l < layers; ++l) {
      if (t == 0) {
        router.expected_coselection(
            l, 0, std::span<double>(coactivation).subspan(static_cast<std::size_t>(l) * block, block));
      }
      router.sample(l, 512, counts);
      for (std::size_t e = 0; e < E; ++e) {
        per_step.push_back(counts[e]);
        total[static_cast<std::size_t>(l) * E + e] += counts[e];
      }
    }
  }
  std::vector<double> transitions(static_cast<std::size_t>(layers - 1) * block, 0.0);
  for (int l = 0; l + 1 < layers; ++l) {
    router.expected_transitions(l, 0,
                                std::span<double>(transitions).subspan(static_cast<std::size_t>(l) * block, block));
  }
  in.set_load_window(std::move(total), std::move(per_step));
  in.set_coactivation(std::move(coactivation));
  in.set_transitions(std::move(transitions));
  return in;
}

// Slots holding no expert and experts with more than one replica, over all layers.
std::pair<int, int> empty_and_replicated(const policies::Placement& p) {
  int empty = 0;
  int replicated = 0;
  for (const auto& l : p.layers) {
    empty += static_cast<int>(std::count(l.phy2log.begin(), l.phy2log.end(), -1));
    replicated += static_cast<int>(std::count_if(l.logcnt.begin(), l.logcnt.end(), [](int n) { return n > 1; }));
  }
  return {empty, replicated};
}

// Metro's greedy routing of one decode step (256 tokens) per layer on `p`, per step-layer, against the
// even split; 20 passes over the layers.
void time_metro(const policies::PlacementInput& in, const policies::Placement& p) {
  policies::MetroConfig cfg;
  cfg.phases = policies::MetroConfig::Phases::all;
  policies::MetroRouting metro(cfg);
  policies::EvenRouting even;
  policies::RoutedLoad out{std::vector<std::int32_t>(static_cast<std::size_t>(in.num_gpus * in.slots_per_gpu), 0),
                           false};
  const auto E = static_cast<std::size_t>(in.num_experts);
  std::vector<std::vector<std::int32_t>> loads;
  for (int l = 0; l < in.num_layers; ++l) {
    std::vector<std::int32_t> load(E);
    for (std::size_t e = 0; e < E; ++e) {
      // Step 0 of the window scaled to 256 tokens.
      load[e] = static_cast<std::int32_t>(in.load_window().step(0, l, static_cast<int>(e)) / 2);
    }
    loads.push_back(std::move(load));
  }
  const auto run = [&](policies::RoutingPolicy& r) {
    return time_min(5, [&] {
      for (int pass = 0; pass < 20; ++pass) {
        for (int l = 0; l < in.num_layers; ++l) {
          r.route(policies::StepLayerLoad{loads[static_cast<std::size_t>(l)], 0, 256},
                  p.layers[static_cast<std::size_t>(l)], out);
        }
      }
    });
  };
  const double calls = 20.0 * in.num_layers;
  const Timing m = run(metro);
  const Timing e = run(even);
  fmt::print("  {:<10} {:>10.2f} us per step-layer (256 tokens; even split {:.2f} us)\n", "metro",
             m.min_s / calls * 1e6, e.min_s / calls * 1e6);
}

void bench_case(const Case& c, int reps, bool with_metro, const std::string& only) {
  const double t0 = thread_cpu_s();
  const policies::PlacementInput in = make_input(c);
  fmt::print(
      "{} ({} MoE layers x {} experts, top-{}; {} GPUs = {} nodes x {}, {} slots per GPU = {} slots, {} "
      "redundant; inputs built in {:.1f} s)\n",
      c.label, in.num_layers, in.num_experts, c.model.top_k, c.gpus, in.num_nodes, c.gpus_per_node, c.slots,
      c.gpus * c.slots, c.gpus * c.slots - in.num_experts, thread_cpu_s() - t0);
  std::optional<policies::Placement> eplb;
  for (const auto& entry : policies::placement_registry().entries()) {
    if (!only.empty() && ("," + only + ",").find("," + entry.name + ",") == std::string::npos) {
      continue;
    }
    core::ParamTable options(std::vector<core::ParamLayer>{}, "policy.placement_options");
    const std::unique_ptr<policies::PlacementPolicy> policy =
        policies::placement_registry().create(entry.name, options);
    if (const int most = policy->max_ep_size(); most > 0 && c.gpus > most) {
      fmt::print("  {:<10} refused: its bound is {} GPUs\n", entry.name, most);
      continue;
    }
    policies::Placement p;
    // GEM, GRACE and DIRECTOR take seconds to minutes at these sizes: fewer repetitions.
    const bool slow = entry.name == "gem" || entry.name == "grace" || entry.name == "director";
    try {
      const Timing t = time_min(slow ? std::min(reps, 3) : std::max(reps, 5), [&] { p = policy->place(in); });
      const auto [empty, replicated] = empty_and_replicated(p);
      fmt::print(
          "  {:<10} {:>10.3f} ms (median {:.3f} ms; {:.3f} ms per layer), {} empty slots, {} replicated "
          "expert-layers\n",
          entry.name, t.min_s * 1e3, t.median_s * 1e3, t.min_s / in.num_layers * 1e3, empty, replicated);
    } catch (const core::Error& e) {
      fmt::print("  {:<10} FAILED: {}\n", entry.name, e.what());
      continue;
    }
    std::fflush(stdout);  // progress while the slow policies run
    if (entry.name == "eplb") {
      eplb = std::move(p);
    }
  }
  if (with_metro && eplb && only.empty()) {
    time_metro(in, *eplb);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(1, std::stoi(argv[1])) : 3;
  const std::string only = argc > 2 ? argv[2] : "";  // e.g. "eplb,gem" (bench/run_all.py)
  const models::ModelSpec kimi = parse_shape(k_kimi_k2);
  const models::ModelSpec qwen = parse_shape(k_qwen3_next);
  bench_case({"Kimi-K2 on 64 GPUs", kimi, 64, 8, 6}, reps, true, only);
  bench_case({"Kimi-K2 on one NVL72 rack", kimi, 72, 72, 6}, reps, true, only);
  bench_case({"Qwen3-Next on 64 GPUs", qwen, 64, 8, 8}, reps, true, only);
  if (!only.empty() && only.find("director") == std::string::npos) {
    return 0;
  }
  // DIRECTOR at its bound (and the others beside it for comparison).
  bench_case({"Kimi-K2 on 32 GPUs", kimi, 32, 8, 12}, reps, false, only);
  bench_case({"Qwen3-Next on 32 GPUs", qwen, 32, 8, 16}, reps, false, only);
  return 0;
}
