// SPDX-License-Identifier: Apache-2.0
// The study bundles' redundant slots where the experts do not divide over the GPUs (issue 39: Kimi-K2's
// 384 experts on a 72-GPU NVL72 rack).
#include <catch2/catch.hpp>

#include "policies/policy_bundles.hpp"

using namespace epsim;

namespace {
std::int64_t redundant(const std::string& bundle, int ep_size, int experts) {
  const toml::table t = policies::policy_bundle(bundle).overrides(policies::BundleContext{ep_size, experts});
  return t["parallel"]["redundant_experts"].value<std::int64_t>().value_or(-1);
}
}  // namespace

TEST_CASE("policy bundles round the experts up to whole slots per GPU, then add their replicas") {
  // 384 experts on 72 GPUs: ceil(384 / 72) = 6 slots per GPU, 432 - 384 = 48 slots to round up.
  REQUIRE(policies::BundleContext{72, 384}.padding() == 48);
  REQUIRE(policies::BundleContext{64, 256}.padding() == 0);
  REQUIRE(policies::BundleContext{8, 0}.padding() == 0);
  for (const char* one_copy : {"linear", "gem", "vibe", "director"}) {
    INFO(one_copy);
    REQUIRE(redundant(one_copy, 72, 384) == 48);
    REQUIRE(redundant(one_copy, 64, 256) == 0);  // divisible: as before
  }
  // One redundant slot per GPU on top: 7 slots per GPU on 72 GPUs = 504 = 384 + 120.
  for (const char* replicating : {"eplb", "metro", "grace"}) {
    INFO(replicating);
    REQUIRE(redundant(replicating, 72, 384) == 120);
    REQUIRE(redundant(replicating, 64, 256) == 64);
  }
}
