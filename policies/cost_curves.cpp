// SPDX-License-Identifier: Apache-2.0
#include "policies/cost_curves.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace epsim::policies {

namespace {

void check_row(const CostCurves::Row& row, std::size_t g) {
  const auto& t = row.tokens;
  if (t.empty() || t.size() != row.ns.size()) {
    throw core::Error(fmt::format("cost curve of GPU {}: {} token counts and {} latencies; expected equal, >= 1", g,
                                  t.size(), row.ns.size()));
  }
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (!(t[i] >= 0.0) || !std::isfinite(t[i]) || (i > 0 && !(t[i] > t[i - 1]))) {
      throw core::Error(
          fmt::format("cost curve of GPU {}: token counts must be finite, >= 0 and strictly ascending "
                      "(point {} is {})",
                      g, i, t[i]));
    }
    if (!(row.ns[i] >= 0.0) || !std::isfinite(row.ns[i])) {
      throw core::Error(fmt::format("cost curve of GPU {}: latency at {} tokens is {}; expected finite and >= 0", g,
                                    t[i], row.ns[i]));
    }
  }
}

}  // namespace

CostCurves::CostCurves(std::vector<std::vector<double>> tokens, std::vector<std::vector<double>> ns)
    : gpus_(static_cast<int>(tokens.size())) {
  if (gpus_ == 0 || ns.size() != tokens.size()) {
    throw core::Error(fmt::format("cost curves: {} token rows and {} latency rows; expected one of each per GPU",
                                  tokens.size(), ns.size()));
  }
  rows_.resize(tokens.size());
  for (std::size_t g = 0; g < tokens.size(); ++g) {
    Row row;
    row.tokens = std::move(tokens[g]);
    row.ns = std::move(ns[g]);
    check_row(row, g);
    rows_[g].push_back(std::move(row));
  }
  index_rows();
}

CostCurves::CostCurves(std::vector<std::vector<Row>> rows)
    : gpus_(static_cast<int>(rows.size())), rows_(std::move(rows)) {
  if (gpus_ == 0) {
    throw core::Error("cost curves: no GPUs; expected one list of rows per GPU");
  }
  for (std::size_t g = 0; g < rows_.size(); ++g) {
    if (rows_[g].empty()) {
      throw core::Error(fmt::format("cost curve of GPU {}: no rows; expected at least one", g));
    }
    for (std::size_t r = 0; r < rows_[g].size(); ++r) {
      const double a = rows_[g][r].activated;
      if (!(a >= 1.0) || (r > 0 && !(a > rows_[g][r - 1].activated))) {
        throw core::Error(fmt::format(
            "cost curve of GPU {}: activated experts of row {} is {}; expected >= 1 and strictly ascending", g, r, a));
      }
      check_row(rows_[g][r], g);
    }
    activation_aware_ = activation_aware_ || rows_[g].size() > 1;
  }
  index_rows();
}

void CostCurves::index_rows() {
  token_index_.resize(rows_.size());
  activated_index_.resize(rows_.size());
  std::vector<double> levels;
  for (std::size_t g = 0; g < rows_.size(); ++g) {
    levels.clear();
    for (const Row& row : rows_[g]) {
      token_index_[g].emplace_back(row.tokens);
      levels.push_back(row.activated);
    }
    activated_index_[g] = BucketSearch(levels);
  }
}

CostCurves::CostCurves(int gpus, Exact f) : gpus_(gpus) {
  if (gpus < 1 || !f) {
    throw core::Error("exact cost curves need a function and at least one GPU");
  }
  exact_ = [f = std::move(f)](int g, double n, double) { return f(g, n); };
  rows_.resize(static_cast<std::size_t>(gpus));
}

CostCurves::CostCurves(int gpus, ExactActivated f) : gpus_(gpus), activation_aware_(true), exact_(std::move(f)) {
  if (gpus < 1 || !exact_) {
    throw core::Error("exact cost curves need a function and at least one GPU");
  }
  rows_.resize(static_cast<std::size_t>(gpus));
}

const CostCurves::Row& CostCurves::top(int gpu) const {
  const auto& r = rows_[static_cast<std::size_t>(gpu)];
  return r.empty() ? empty_ : r.back();
}

double CostCurves::ns(int gpu, double tokens) const {
  if (tokens <= 0.0) {
    return 0.0;
  }
  if (exact_) {
    return exact_(gpu, tokens, std::numeric_limits<double>::infinity());
  }
  return row_ns(gpu, rows_[static_cast<std::size_t>(gpu)].size() - 1, tokens);
}

double CostCurves::ns(int gpu, double tokens, double activated) const {
  if (tokens <= 0.0) {
    return 0.0;
  }
  if (exact_) {
    return exact_(gpu, tokens, activated);
  }
  const auto& rows = rows_[static_cast<std::size_t>(gpu)];
  if (rows.size() == 1 || !(activated < rows.back().activated)) {
    return row_ns(gpu, rows.size() - 1, tokens);
  }
  if (activated <= rows.front().activated) {
    return row_ns(gpu, 0, tokens);
  }
  // First row above a; interpolate between it and the one below (a sits strictly between them).
  const std::size_t hi = activated_index_[static_cast<std::size_t>(gpu)].upper_bound(activated);
  const Row& r1 = rows[hi];
  const Row& r0 = rows[hi - 1];
  const double w = (activated - r0.activated) / (r1.activated - r0.activated);
  return (1.0 - w) * row_ns(gpu, hi - 1, tokens) + w * row_ns(gpu, hi, tokens);
}

double CostCurves::row_ns(int gpu, std::size_t row, double tokens) const {
  const BucketSearch& index = token_index_[static_cast<std::size_t>(gpu)][row];
  const auto& t = index.values();
  const auto& v = rows_[static_cast<std::size_t>(gpu)][row].ns;
  // Index of the first sample point at or above `tokens`.
  const std::size_t hi = index.lower_bound(tokens);
  double x0 = 0.0;
  double y0 = 0.0;
  double x1 = 0.0;
  double y1 = 0.0;
  if (hi == 0) {
    x1 = t[0];
    y1 = v[0];
    if (x1 <= 0.0) {
      return y1;
    }
  } else if (hi == t.size()) {
    if (t.size() == 1) {  // one point: proportional through the origin
      return t[0] > 0.0 ? v[0] * tokens / t[0] : v[0];
    }
    x0 = t[hi - 2];
    y0 = v[hi - 2];
    x1 = t[hi - 1];
    y1 = v[hi - 1];
  } else {
    x0 = t[hi - 1];
    y0 = v[hi - 1];
    x1 = t[hi];
    y1 = v[hi];
  }
  if (hi == t.size()) {
    // Beyond the last sample: its segment's slope, never downwards (noise can tilt the last segment).
    return y1 + std::max(0.0, (y1 - y0) / (x1 - x0)) * (tokens - x1);
  }
  return y0 + (y1 - y0) * (tokens - x0) / (x1 - x0);
}

}  // namespace epsim::policies
