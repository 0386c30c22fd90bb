// SPDX-License-Identifier: Apache-2.0
// PlacementInput's typed inputs (policies/placement_inputs.hpp): each view checks its sizes once where
// it is given, a policy that declared a need (PolicyNeeds) gets its input, and reading an input no need
// supplied fails with a message naming the input and the need.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/params.hpp"
#include "policies/cost_curves.hpp"
#include "policies/placement_inputs.hpp"
#include "policies/placement_policy.hpp"
#include "policies/registry.hpp"

using namespace epsim;
using namespace epsim::policies;
using Catch::Contains;

namespace {

constexpr int k_layers = 2;
constexpr int k_experts = 8;
constexpr int k_gpus = 4;

// The input of a 2-layer, 8-expert, 4-GPU group (2 nodes, 2 slots per GPU) with exactly the inputs
// `needs` asks for, as the builders fill it.
PlacementInput input_for(const PolicyNeeds& needs) {
  PlacementInput in = PlacementInput::shape(k_layers, k_experts, k_gpus, 2, 2, 2);
  in.seed = 3;
  if (needs.load_window) {
    const int steps = 4;
    std::vector<double> per_step;
    std::vector<double> total(k_layers * k_experts, 0.0);
    for (int t = 0; t < steps; ++t) {
      for (int i = 0; i < k_layers * k_experts; ++i) {
        const double x = 1.0 + ((i * 7 + t * 3) % 11);
        per_step.push_back(x);
        total[static_cast<std::size_t>(i)] += x;
      }
    }
    in.set_load_window(total, per_step);
  }
  if (needs.cost_curves) {
    in.set_cost_curves(std::make_shared<const CostCurves>(
        k_gpus, [](int g, double n) { return n * (1.0 + 0.1 * static_cast<double>(g)); }));
  }
  if (needs.coactivation) {
    std::vector<double> counts;
    for (int l = 0; l < k_layers; ++l) {
      for (int a = 0; a < k_experts; ++a) {
        for (int b = 0; b < k_experts; ++b) {
          counts.push_back(a == b ? 0.0 : (a / 2 == b / 2 ? 20.0 : 1.0));
        }
      }
    }
    in.set_coactivation(counts);
  }
  if (needs.transitions) {
    std::vector<double> counts;
    for (int l = 0; l + 1 < k_layers; ++l) {
      for (int a = 0; a < k_experts; ++a) {
        for (int b = 0; b < k_experts; ++b) {
          counts.push_back(a == (b + l) % k_experts ? 10.0 : 1.0);
        }
      }
    }
    in.set_transitions(counts);
  }
  return in;
}

// A policy that declares the load window only and reads what its options say.
class Reader final : public PlacementPolicy {
 public:
  explicit Reader(bool read_curves) : read_curves_(read_curves) {}
  Placement place(const PlacementInput& in) override {
    seen = in.load_window().total(1, 3);
    if (read_curves_) {
      (void)in.cost_curves();
    }
    return {};
  }
  PolicyNeeds needs() const override { return {.load_window = true}; }
  double seen = 0.0;

 private:
  bool read_curves_;
};

}  // namespace

TEST_CASE("placement inputs: every view checks its sizes against the shape where it is given") {
  PlacementInput in = PlacementInput::shape(2, 3, 2, 1, 2);
  REQUIRE_THROWS_WITH(in.set_load_window(std::vector<double>(5, 1.0)),
                      Contains("load window") && Contains("2 layers x 3 experts = 6 values, got 5"));
  REQUIRE_THROWS_WITH(in.set_load_window(std::vector<double>(6, 1.0), std::vector<double>(7, 1.0)),
                      Contains("whole steps"));
  REQUIRE_THROWS_WITH(in.set_coactivation(std::vector<double>(17, 1.0)),
                      Contains("co-activation") && Contains("= 18 co-selection counts, got 17"));
  REQUIRE_THROWS_WITH(in.set_origin_load(std::vector<double>(12, 1.0), {1.0, 2.0}),
                      Contains("origin load") && Contains("2 pass kinds"));
  REQUIRE_THROWS_WITH(in.set_link_bandwidths({1.0, 2.0, 3.0}), Contains("link bandwidths") && Contains("got 3"));
  REQUIRE_THROWS_WITH(in.set_cost_curves(std::make_shared<const CostCurves>(3, [](int, double n) { return n; })),
                      Contains("cost curves") && Contains("the curves of 2 GPUs, got 3"));
  REQUIRE_THROWS_WITH(in.set_cost_curves(nullptr), Contains("got none"));
  REQUIRE_FALSE(in.has_load_window());
  REQUIRE_FALSE(in.has_cost_curves());

  // Well-formed views, read through their typed accessors.
  in.set_load_window({1, 2, 3, 4, 5, 6}, {0, 1, 1, 2, 2, 3, 1, 1, 2, 2, 3, 3});
  REQUIRE(in.load_window().steps() == 2);
  REQUIRE(in.load_window().total(1, 2) == 6.0);
  REQUIRE(in.load_window().total(1).size() == 3);
  REQUIRE(in.load_window().total(1)[0] == 4.0);
  REQUIRE(in.step_window().step(1, 0, 2) == 2.0);
  in.set_origin_load(std::vector<double>(24, 1.0), {1.0, 2.0});
  REQUIRE(in.origin_load().passes() == 2);
  in.set_link_bandwidths({0.0, 5.0, 7.0, 0.0});
  REQUIRE(in.link_bandwidths()(1, 0) == 7.0);
  in.set_coactivation(std::vector<double>(18, 2.0));
  REQUIRE(in.coactivation().layer(1).size() == 9);
  in.clear_load_window();
  REQUIRE_FALSE(in.has_load_window());
}

TEST_CASE("placement inputs: an undeclared input fails naming it and the need that supplies it") {
  const PlacementInput in = PlacementInput::shape(2, 3, 2, 1, 2);
  REQUIRE_THROWS_AS(in.load_window(), core::Error);
  REQUIRE_THROWS_WITH(in.load_window(), Contains("no load window") && Contains("PolicyNeeds::load_window"));
  REQUIRE_THROWS_WITH(in.step_window(), Contains("step-by-step") && Contains("PolicyNeeds::step_window"));
  REQUIRE_THROWS_WITH(in.cost_curves(), Contains("no cost curves") && Contains("PolicyNeeds::cost_curves"));
  REQUIRE_THROWS_WITH(in.coactivation(), Contains("co-activation") && Contains("PolicyNeeds::coactivation"));
  REQUIRE_THROWS_WITH(in.origin_load(), Contains("per-origin load"));
  REQUIRE_THROWS_WITH(in.link_bandwidths(), Contains("link bandwidths"));

  // A policy gets what it declared, and fails cleanly on what it did not.
  Reader declared(false);
  PlacementInput filled = input_for(declared.needs());
  REQUIRE_NOTHROW(declared.place(filled));
  REQUIRE(declared.seen == filled.load_window().total()[k_experts + 3]);
  Reader undeclared(true);
  REQUIRE_THROWS_WITH(undeclared.place(input_for(undeclared.needs())),
                      Contains("no cost curves") && Contains("PolicyNeeds::cost_curves"));
}

TEST_CASE("placement inputs: every registered placement places from exactly what it declares") {
  for (const auto& entry : placement_registry().entries()) {
    core::ParamTable options(entry.name);
    const std::unique_ptr<PlacementPolicy> policy = placement_registry().create(entry.name, options);
    const PolicyNeeds needs = policy->needs();
    INFO(entry.name);
    const PlacementInput in = input_for(needs);
    CHECK(in.has_load_window() == needs.load_window);
    CHECK(in.has_cost_curves() == needs.cost_curves);
    CHECK(in.has_coactivation() == needs.coactivation);
    CHECK(in.has_transitions() == needs.transitions);
    const Placement p = policy->place(in);
    CHECK(p.layers.size() == static_cast<std::size_t>(k_layers));
  }
}
