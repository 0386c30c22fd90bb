#include "policies/registry.hpp"

#include "policies/eplb_placement.hpp"
#include "policies/even_routing.hpp"
#include "policies/gem_placement.hpp"
#include "policies/linear_placement.hpp"
#include "policies/metro_routing.hpp"
#include "policies/vibe_placement.hpp"

namespace epsim::policies {

const Registry<PlacementPolicy>& placement_registry() {
  static const Registry<PlacementPolicy> registry = [] {
    Registry<PlacementPolicy> r("placement");
    r.add("linear", "vLLM default: expert e of E on N GPUs -> GPU floor(e / (E / N)), no redundancy",
          [](core::ParamTable& t) -> std::unique_ptr<PlacementPolicy> {
            t.finish();
            return std::make_unique<LinearPlacement>();
          });
    r.add("eplb",
          "DeepSeek's EPLB on the load window: hierarchical (groups to nodes, replicas within nodes) when the "
          "expert groups divide over the nodes, else global; redundant slots replicate the hottest experts",
          [](core::ParamTable& t) -> std::unique_ptr<PlacementPolicy> {
            t.finish();
            return std::make_unique<EplbPlacement>();
          });
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
    r.add("vibe",
          "ViBE: per layer, speed-proportional token targets from the cost curves, experts by descending load to "
          "the GPU farthest below its target; one copy per expert",
          [](core::ParamTable& t) -> std::unique_ptr<PlacementPolicy> {
            t.finish();
            return std::make_unique<VibePlacement>();
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
    return r;
  }();
  return registry;
}

}  // namespace epsim::policies
