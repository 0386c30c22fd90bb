// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a metric can be: a proportion in [0, 1] (SLO attainment, a busy fraction, a 0/1 flag's mean), a
// non-negative quantity (latencies, rates, counts, bytes) or an unbounded value (signed errors). Resolved
// once from the metric's name by one table (metric_kind.cpp); intervals and plots keep to the range.
#include <optional>
#include <string_view>

namespace epsim::core {

enum class MetricKind { proportion, non_negative, unbounded };

/// The kind the table gives `name` (a flattened summary.json name such as "ttft_ms.p90"); nullopt when no
/// rule matches (a name the table does not know).
std::optional<MetricKind> classify_metric(std::string_view name);

/// classify_metric, unknown names unbounded (never clipped).
MetricKind metric_kind(std::string_view name);

/// "proportion", "non-negative", "unbounded".
std::string_view metric_kind_name(MetricKind kind);

/// The possible values of a metric of `kind`: [0, 1], [0, inf) or (-inf, inf).
double kind_low(MetricKind kind);
double kind_high(MetricKind kind);

/// The possible values of a difference of two such metrics: [-1, 1] for proportions, else unbounded.
double difference_low(MetricKind kind);
double difference_high(MetricKind kind);

/// Whether `pattern` (literal text with '*' standing for any run of characters) matches all of `name`.
bool glob_match(std::string_view pattern, std::string_view name);

}  // namespace epsim::core
