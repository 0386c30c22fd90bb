#include "policies/registry.hpp"

#include "policies/eplb_placement.hpp"
#include "policies/even_routing.hpp"
#include "policies/linear_placement.hpp"

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
    return r;
  }();
  return registry;
}

}  // namespace epsim::policies
