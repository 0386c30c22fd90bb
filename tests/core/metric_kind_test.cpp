// SPDX-License-Identifier: Apache-2.0
// The metric-kind table: names a run reports, each kind's range, and the '*' matcher it is written in.
// (tests/experiments/metric_kinds_test.cpp checks that every metric real runs report has a rule.)
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "core/metric_kind.hpp"

using namespace epsim::core;

TEST_CASE("metric names resolve to their kind") {
  for (const char* p :
       {"slo.attainment", "slo.ttft_attainment", "slo.tpot_attainment", "barrier_idle_fraction", "comm_fraction",
        "gpu_busy_fraction.min", "gpu_busy_fraction.mean", "gpu_balancedness", "curve_fit.straggler_agreement",
        "hit_time_limit", "routing_exhausted", "max_rate_bracketed", "kv_cache_utilisation", "prefill_share",
        "speculative.acceptance_rate", "speculative.draft_time_share", "dvfs.clock_mean", "dvfs.clock_min"}) {
    INFO(p);
    REQUIRE(classify_metric(p) == MetricKind::proportion);
  }
  for (const char* q : {"ttft_ms.p90",
                        "tpot_ms.mean",
                        "e2e_ms.count",
                        "mean_step_ms",
                        "slo.goodput_rps",
                        "goodput_rps_per_gpu",
                        "max_rate_rps",
                        "max_rate_rps_per_gpu",
                        "output_tokens_per_s",
                        "output_tokens_per_s_per_gpu",
                        "all_to_all_ms_per_step",
                        "straggler_gap_us.max",
                        "window.measured_s",
                        "makespan_s",
                        "traffic_gb.inter_node",
                        "kv_transfers.count",
                        "rebalancing.lp_gap_mean",
                        "pools.prefill.requests_per_rank.max",
                        "activated_experts.max_per_gpu",
                        "requests",
                        "steps",
                        "gpus",
                        "ep_size",
                        "curve_fit.mean_abs_error",
                        "speculative.verifies",
                        "speculative.mean_accepted_tokens",
                        "speculative.tokens_per_step"}) {
    INFO(q);
    REQUIRE(classify_metric(q) == MetricKind::non_negative);
  }
  // A relative error and a layer index (-1 when none) can be negative.
  REQUIRE(classify_metric("curve_fit.worst_layer_error") == MetricKind::unbounded);
  REQUIRE(classify_metric("curve_fit.worst_layer") == MetricKind::unbounded);
  // Unknown names have no rule and are never clipped.
  REQUIRE_FALSE(classify_metric("x").has_value());
  REQUIRE(metric_kind("x") == MetricKind::unbounded);
  REQUIRE(metric_kind_name(MetricKind::proportion) == "proportion");
  REQUIRE(metric_kind_name(MetricKind::non_negative) == "non-negative");
  REQUIRE(metric_kind_name(MetricKind::unbounded) == "unbounded");
}

TEST_CASE("each kind's range and the range of a difference") {
  REQUIRE(kind_low(MetricKind::proportion) == 0.0);
  REQUIRE(kind_high(MetricKind::proportion) == 1.0);
  REQUIRE(kind_low(MetricKind::non_negative) == 0.0);
  REQUIRE(std::isinf(kind_high(MetricKind::non_negative)));
  REQUIRE(std::isinf(kind_low(MetricKind::unbounded)));
  REQUIRE(difference_low(MetricKind::proportion) == -1.0);
  REQUIRE(difference_high(MetricKind::proportion) == 1.0);
  REQUIRE(std::isinf(difference_low(MetricKind::non_negative)));
}

TEST_CASE("the '*' matcher matches whole names") {
  REQUIRE(glob_match("*_ms", "ttft_ms"));
  REQUIRE_FALSE(glob_match("*_ms", "ttft_ms.p90"));
  REQUIRE(glob_match("*_ms.*", "ttft_ms.p90"));
  REQUIRE(glob_match("*fraction*", "gpu_busy_fraction.mean"));
  REQUIRE(glob_match("pools.*.requests_per_rank.*", "pools.decode.requests_per_rank.min"));
  REQUIRE_FALSE(glob_match("pools.*.requests_per_rank.*", "pools.decode.min"));
  REQUIRE(glob_match("steps", "steps"));
  REQUIRE_FALSE(glob_match("steps", "steps_x"));
  REQUIRE(glob_match("*", ""));
  REQUIRE_FALSE(glob_match("a*b", "aab_"));
  // Backtracking over many stars stays fast on a long name.
  REQUIRE_FALSE(glob_match("*a*a*a*a*a*b", std::string(10000, 'a')));
}
