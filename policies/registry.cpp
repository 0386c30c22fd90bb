// SPDX-License-Identifier: Apache-2.0
#include "policies/registry.hpp"

#include <array>
#include <string_view>

#include "policies/director/director_placement.hpp"
#include "policies/director/director_trigger.hpp"
#include "policies/eplb/eplb_placement.hpp"
#include "policies/eplb/periodic_eplb_trigger.hpp"
#include "policies/even_routing.hpp"
#include "policies/gem/gem_placement.hpp"
#include "policies/grace/grace_placement.hpp"
#include "policies/grace/grace_routing.hpp"
#include "policies/linear_placement.hpp"
#include "policies/metro/metro_routing.hpp"
#include "policies/moetuner/moetuner_placement.hpp"
#include "policies/replicated_placement.hpp"
#include "policies/vibe/drift_trigger.hpp"
#include "policies/vibe/vibe_placement.hpp"

namespace epsim::policies {
namespace {

std::unique_ptr<PlacementPolicy> make_eplb_placement(core::ParamTable& t) {
  const bool distinct = t.boolean("distinct_per_gpu", false,
                                  "at most one replica of an expert per GPU (engines that map expert -> slot per "
                                  "device: vllm-ascend; `place --format vllm-ascend` turns it on)");
  static constexpr std::array<core::Choice<EplbVariant>, 2> k_variants{
      {{"reference", EplbVariant::reference}, {"biased", EplbVariant::biased}}};
  const EplbVariant variant =
      t.choice<EplbVariant>("variant", EplbVariant::reference,
                            "reference (DeepSeek's) or biased (ROCm/ATOM's: the redundant slots / GPUs hottest experts "
                            "on every GPU, the rest by the reference's replication and packing)",
                            k_variants);
  if (variant == EplbVariant::biased && distinct) {
    t.fail("variant", "the biased variant puts its hottest experts on every GPU: it has no distinct_per_gpu form");
  }
  t.finish();
  return std::make_unique<EplbPlacement>(distinct ? EplbVariant::distinct_per_gpu : variant);
}

std::unique_ptr<PlacementPolicy> make_director_placement(core::ParamTable& t) {
  DirectorOptions o = parse_director_options(t);
  static constexpr std::array<core::Choice<DirectorWindow>, 2> k_windows{
      {{"sum", DirectorWindow::sum}, {"pass_kinds", DirectorWindow::pass_kinds}}};
  o.window = t.choice<DirectorWindow>(
      "window", DirectorWindow::sum,
      "W of the load window: sum = the paper's one W, the window's summed loads; pass_kinds = as the online modes "
      "price work, the window's prefill passes and decode steps as two kinds, each its mean per step",
      k_windows);
  t.finish();
  return std::make_unique<DirectorPlacement>(o);
}

}  // namespace

const Registry<PlacementPolicy>& placement_registry() {
  static const Registry<PlacementPolicy> registry = [] {
    Registry<PlacementPolicy> r("placement");
    r.add("linear", "vLLM default: expert e of E on N GPUs -> GPU floor(e / (E / N)), no redundancy",
          [](core::ParamTable& t) -> std::unique_ptr<PlacementPolicy> {
            t.finish();
            return std::make_unique<LinearPlacement>();
          });
    r.add("replicated",
          "load-blind uniform replication: slot s holds expert s mod E (exists at any EP size, also with fewer "
          "experts than GPUs)",
          [](core::ParamTable& t) -> std::unique_ptr<PlacementPolicy> {
            t.finish();
            return std::make_unique<ReplicatedPlacement>();
          });
    r.add("eplb",
          "DeepSeek's EPLB on the load window: hierarchical (groups to nodes, replicas within nodes) when the "
          "expert groups divide over the nodes, else global; redundant slots replicate the hottest experts",
          make_eplb_placement);
    r.add("gem",
          "GEM: per layer, minimise sum over window steps of the slowest GPU's C_g(tokens); greedy heaviest-first "
          "start, best-swap refinement, restarts with perturbed utilisations; one copy per expert",
          [](core::ParamTable& t) -> std::unique_ptr<PlacementPolicy> {
            GemOptions o;
            o.restarts = static_cast<int>(t.integer("restarts", 30, "K: independent restarts", {1, 100000}));
            o.noise = t.real("noise", 0.2, "relative utilisation noise of restarts after the first", {0.0, 1.0});
            o.min_gain =
                t.real("min_gain", 0.001, "refinement stops after a swap gaining less than this fraction", {0.0, 1.0});
            o.window_steps = static_cast<int>(
                t.integer("window_steps", 16, "steps of the load window that are scored", {1, 1 << 20}));
            t.finish();
            return std::make_unique<GemPlacement>(o);
          });
    r.add("director",
          "DIRECTOR: minimise Eq. 5 (straggler C_g of the hosted tokens + straggler origin's all-to-all time) "
          "under C_max = slots per GPU: LP relaxation solved with Clp, binary search on the latency budget, "
          "randomised iterative rounding; W from origin_load (else expert_load spread evenly); one copy per expert",
          make_director_placement);
    r.add("moetuner",
          "MoETuner (DIRECTOR's offline baseline): per layer, experts into one token-balanced cluster per GPU "
          "(heaviest first, then load-reducing swaps), clusters of consecutive layers mapped to GPUs keeping the "
          "most cross-layer token transitions on one GPU (exact assignment LP in Clp); one copy per expert",
          [](core::ParamTable& t) -> std::unique_ptr<PlacementPolicy> {
            MoetunerOptions o;
            o.cross_layer = t.boolean("cross_layer", true,
                                      "map clusters to GPUs by cross-layer transitions (off: the balance alone)");
            t.finish();
            return std::make_unique<MoetunerPlacement>(o);
          });
    r.add("vibe",
          "ViBE: per layer, speed-proportional token targets from the cost curves, experts by descending load to "
          "the GPU farthest below its target; one copy per expert",
          [](core::ParamTable& t) -> std::unique_ptr<PlacementPolicy> {
            t.finish();
            return std::make_unique<VibePlacement>();
          });
    r.add("grace",
          "GRACE-MoE: per layer, spectral clustering of the co-selection affinity into node groups, controlled "
          "non-uniform GPU groups (Algorithm 2, r at the knee of S(r), U(r)), hot experts of the heaviest group "
          "replicated onto the most under-used GPUs (Eq. 2); needs co-activation counts and the load window",
          [](core::ParamTable& t) -> std::unique_ptr<PlacementPolicy> {
            static constexpr std::array<core::Choice<ReplicaShare>, 2> k_shares{
                {{"paper", ReplicaShare::paper}, {"conserving", ReplicaShare::conserving}}};
            GraceConfig c;
            c.replication = t.boolean("replication", true, "dynamic replication of the heaviest group's hot experts");
            std::vector<double> ratios = t.real_list(
                "ratios", "candidate non-uniformity ratios r of the GPU level (default 0, 0.1, ..., 1)", {0.0, 100.0});
            if (!ratios.empty()) {
              c.ratios = std::move(ratios);
            }
            c.kmeans_restarts =
                static_cast<int>(t.integer("kmeans_restarts", 10, "k-means++ runs per clustering", {1, 10000}));
            c.kmeans_iterations =
                static_cast<int>(t.integer("kmeans_iterations", 300, "Lloyd iterations per k-means run", {1, 100000}));
            c.share = t.choice<ReplicaShare>(
                "share", ReplicaShare::paper,
                "Eq. 3's W_p in the placement's report: paper = W_max / (n + 1); conserving = W_r / (n + 1)", k_shares);
            t.finish();
            return std::make_unique<GracePlacement>(std::move(c));
          });
    return r;
  }();
  return registry;
}

const Registry<RoutingPolicy>& routing_registry() {
  static const Registry<RoutingPolicy> registry = [] {
    Registry<RoutingPolicy> r("routing");
    r.add("even", "vLLM/SGLang: an expert's tokens split evenly over its replicas, remainder to low ranks",
          [](core::ParamTable& t) -> std::unique_ptr<RoutingPolicy> {
            t.finish();
            return std::make_unique<EvenRouting>();
          });
    r.add("metro",
          "metro: all of an expert's tokens to one replica, chosen to minimise the most activated experts on a "
          "GPU (memory-bound decode); all-gather dispatch; steps with prefill split evenly by default",
          [](core::ParamTable& t) -> std::unique_ptr<RoutingPolicy> {
            const MetroConfig c = parse_metro_config(t);
            t.finish();
            return std::make_unique<MetroRouting>(c);
          });
    r.add("grace",
          "GRACE-MoE: a token stays on its origin GPU when it holds a replica, else a replica on its node, else "
          "any; within a tier weighted round-robin by Eq. 3's predicted post-replication load",
          [](core::ParamTable& t) -> std::unique_ptr<RoutingPolicy> {
            const GraceRoutingConfig c = parse_grace_routing_config(t);
            t.finish();
            return std::make_unique<GraceRouting>(c);
          });
    return r;
  }();
  return registry;
}

const Registry<TriggerFactory>& trigger_registry() {
  static const Registry<TriggerFactory> registry = [] {
    Registry<TriggerFactory> r("rebalance");
    r.add("none", "static placement: nothing re-places experts during serving",
          [](core::ParamTable& t) -> std::unique_ptr<TriggerFactory> {
            t.finish();
            return nullptr;
          });
    r.add(periodic_eplb_trigger_entry());
    r.add(drift_trigger_entry());
    r.add(director_trigger_entry());
    return r;
  }();
  return registry;
}

}  // namespace epsim::policies
