// SPDX-License-Identifier: Apache-2.0
#pragma once
// vLLM / SGLang routing among replicas: an expert's n tokens split evenly over its c replicas, the
// remainder n mod c going one each to the lowest replica ranks.
#include "policies/routing_policy.hpp"

namespace epsim::policies {

class EvenRouting final : public RoutingPolicy {
 public:
  void route(const StepLayerLoad& load, const LayerPlacement& placement, RoutedLoad& out) override;
};

}  // namespace epsim::policies
