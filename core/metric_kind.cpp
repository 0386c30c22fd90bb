// SPDX-License-Identifier: Apache-2.0
#include "core/metric_kind.hpp"

#include <array>
#include <limits>

namespace epsim::core {
namespace {

struct KindRule {
  std::string_view pattern;
  MetricKind kind;
};

constexpr auto P = MetricKind::proportion;
constexpr auto N = MetricKind::non_negative;
constexpr auto U = MetricKind::unbounded;

// First match wins: the exceptions first, then proportions, then units and counts. Every metric a run
// or a study reports must match a rule (tests/core/metric_kind_test.cpp checks a run's full list).
constexpr std::array k_rules{
    // Signed: a relative error and a layer index that is -1 when no layer was seen.
    KindRule{"curve_fit.worst_layer_error", U},
    KindRule{"curve_fit.worst_layer", U},
    // Proportions: shares of requests, time or layers, and 0/1 flags (their mean is a share of runs).
    KindRule{"*attainment", P},
    KindRule{"*fraction*", P},
    KindRule{"*share*", P},
    KindRule{"*utilisation*", P},
    KindRule{"*utilization*", P},
    KindRule{"gpu_balancedness", P},  // mean over max load, in (0, 1]
    KindRule{"prefix_cache.hit_rate_*", P},
    KindRule{"curve_fit.straggler_agreement", P},
    KindRule{"hit_time_limit", P},
    KindRule{"routing_exhausted", P},
    KindRule{"max_rate_bracketed", P},
    KindRule{"speculative.acceptance_rate", P},  // accepted over proposed drafts
    KindRule{"dvfs.clock_*", P},                 // power-limited clocks over the cold clock, in (0, 1]
    KindRule{"max_rate_censored", P},            // 0/1: a search that never failed
    KindRule{"limits.threshold", P},             // the binding share above which a cap is named
    // Non-negative: quantities with a unit, rates, counts, sizes.
    KindRule{"*_ms", N},
    KindRule{"*_ms.*", N},
    KindRule{"*_us", N},
    KindRule{"*_us.*", N},
    KindRule{"*_ns", N},
    KindRule{"*_s", N},
    KindRule{"*_rps", N},
    KindRule{"*_rps_per_gpu", N},
    KindRule{"*_per_s", N},
    KindRule{"*_per_s_per_gpu", N},
    KindRule{"*_per_step", N},
    KindRule{"*_gb", N},
    KindRule{"traffic_gb.*", N},
    KindRule{"kv_transfers.*", N},
    KindRule{"prefix_cache.*", N},  // tokens, blocks, fetch time
    KindRule{"rebalancing.*", N},
    KindRule{"limits.rank_steps", N},
    KindRule{"limits.*.cap", N},
    KindRule{"limits.*.bound_rank_steps",
             N},  // counts, moved GB, stall, and director's LP gap (rounded over LP bound - 1)
    KindRule{"pools.*.requests_per_rank.*", N},
    KindRule{"activated_experts.*", N},
    KindRule{"speculative.verifies", N},
    KindRule{"speculative.mean_accepted_tokens", N},
    KindRule{"curve_fit.mean_abs_error", N},
    KindRule{"gpu_load_std_tokens", N},
    KindRule{"window.requests_total", N},
    KindRule{"requests", N},
    KindRule{"requests_finished", N},
    KindRule{"requests_rejected", N},
    KindRule{"preemptions", N},
    KindRule{"steps", N},
    KindRule{"gpus", N},
    KindRule{"ep_size", N},
};

}  // namespace

bool glob_match(std::string_view pattern, std::string_view name) {
  // Iterative wildcard match with one backtrack point: linear in practice, no recursion.
  std::size_t p = 0;
  std::size_t n = 0;
  std::size_t star = std::string_view::npos;
  std::size_t resume = 0;
  while (n < name.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = n;
    } else if (p < pattern.size() && pattern[p] == name[n]) {
      ++p;
      ++n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') {
    ++p;
  }
  return p == pattern.size();
}

std::optional<MetricKind> classify_metric(std::string_view name) {
  for (const KindRule& r : k_rules) {
    if (glob_match(r.pattern, name)) {
      return r.kind;
    }
  }
  return std::nullopt;
}

MetricKind metric_kind(std::string_view name) {
  return classify_metric(name).value_or(MetricKind::unbounded);
}

std::string_view metric_kind_name(MetricKind kind) {
  switch (kind) {
    case MetricKind::proportion:
      return "proportion";
    case MetricKind::non_negative:
      return "non-negative";
    case MetricKind::unbounded:
      break;
  }
  return "unbounded";
}

double kind_low(MetricKind kind) {
  return kind == MetricKind::unbounded ? -std::numeric_limits<double>::infinity() : 0.0;
}

double kind_high(MetricKind kind) {
  return kind == MetricKind::proportion ? 1.0 : std::numeric_limits<double>::infinity();
}

double difference_low(MetricKind kind) {
  return kind == MetricKind::proportion ? -1.0 : -std::numeric_limits<double>::infinity();
}

double difference_high(MetricKind kind) {
  return kind == MetricKind::proportion ? 1.0 : std::numeric_limits<double>::infinity();
}

}  // namespace epsim::core
