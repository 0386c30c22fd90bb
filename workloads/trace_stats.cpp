// SPDX-License-Identifier: Apache-2.0
#include "workloads/trace_stats.hpp"

#include <fmt/format.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <span>

#include "core/error.hpp"
#include "workloads/group_limit.hpp"
#include "workloads/trace_io.hpp"

namespace epsim::workloads {

double gini(std::vector<double> v) {
  if (v.empty()) {
    return 0.0;
  }
  std::sort(v.begin(), v.end());
  const double sum = std::accumulate(v.begin(), v.end(), 0.0);
  if (sum <= 0.0) {
    return 0.0;
  }
  const auto n = static_cast<double>(v.size());
  double acc = 0.0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    acc += (2.0 * static_cast<double>(i + 1) - n - 1.0) * v[i];
  }
  return acc / (n * sum);
}

double cosine_distance(const std::vector<double>& a, const std::vector<double>& b) {
  double ab = 0.0;
  double aa = 0.0;
  double bb = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ab += a[i] * b[i];
    aa += a[i] * a[i];
    bb += b[i] * b[i];
  }
  return aa > 0.0 && bb > 0.0 ? 1.0 - ab / std::sqrt(aa * bb) : 0.0;
}

namespace {

// Accumulates one layer's statistics step by step; the pairwise products go through Eigen in batches.
struct LayerAccumulator {
  int experts;
  Eigen::VectorXd sum;
  Eigen::MatrixXd cross;  // sum over steps of x x^T
  Eigen::MatrixXd batch;  // up to k_batch steps x experts
  int in_batch = 0;
  std::vector<double> active;
  double step_ratio_sum = 0.0;
  double step_cv_sum = 0.0;
  double gpu_ratio_sum = 0.0;
  double gpu_cv_sum = 0.0;
  std::vector<double> window;
  std::vector<double> first_window;
  std::vector<double> prev_window;
  std::vector<double> distances;
  std::vector<double> gpu_step;  // the step's load per GPU under linear placement
  static constexpr int k_batch = 64;

  LayerAccumulator(int e, int gpus)
      : experts(e),
        sum(Eigen::VectorXd::Zero(e)),
        cross(Eigen::MatrixXd::Zero(e, e)),
        batch(k_batch, e),
        active(static_cast<std::size_t>(e), 0.0),
        window(static_cast<std::size_t>(e), 0.0),
        gpu_step(static_cast<std::size_t>(gpus), 0.0) {}

  void flush_batch() {
    if (in_batch > 0) {
      const auto b = batch.topRows(in_batch);
      cross.noalias() += b.transpose() * b;
      in_batch = 0;
    }
  }

  void close_window() {
    if (first_window.empty()) {
      first_window = window;
    } else {
      distances.push_back(cosine_distance(prev_window, window));
    }
    prev_window = window;
    std::fill(window.begin(), window.end(), 0.0);
  }
};

// Population std / mean of n values from their sum and sum of squares (sum > 0).
double coefficient_of_variation(double sum, double squares, int n) {
  const double mean = sum / n;
  return std::sqrt(std::max(0.0, squares / n - mean * mean)) / mean;
}

// One layer's statistics from its accumulated sums over `n` steps.
LayerStats finish_layer(LayerAccumulator& a, int experts, double n, const StatsOptions& o) {
  a.flush_batch();
  LayerStats ls;
  std::vector<double> total(a.sum.data(), a.sum.data() + experts);
  const double mean = std::accumulate(total.begin(), total.end(), 0.0) / experts;
  const double mx = *std::max_element(total.begin(), total.end());
  const double mn = *std::min_element(total.begin(), total.end());
  ls.max_over_mean = mean > 0.0 ? mx / mean : 0.0;
  ls.max_over_min = mn > 0.0 ? mx / mn : std::numeric_limits<double>::infinity();
  ls.gini = gini(total);
  ls.step_max_over_mean = a.step_ratio_sum / n;
  ls.step_cv = a.step_cv_sum / n;
  ls.gpu_step_max_over_mean = a.gpu_ratio_sum / n;
  ls.gpu_step_cv = a.gpu_cv_sum / n;
  for (double& x : a.active) {
    x /= n;
  }
  ls.active_share = a.active;
  // Pearson correlation from the sums: cov = E[xy] - E[x]E[y].
  const Eigen::VectorXd m = a.sum / n;
  const Eigen::MatrixXd cov = a.cross / n - m * m.transpose();
  for (int i = 0; i < experts; ++i) {
    for (int j = i + 1; j < experts; ++j) {
      const double d = cov(i, i) * cov(j, j);
      if (d > 0.0) {
        ls.top_pairs.push_back(ExpertPair{i, j, cov(i, j) / std::sqrt(d)});
      }
    }
  }
  const auto keep = std::min<std::size_t>(static_cast<std::size_t>(o.top_pairs), ls.top_pairs.size());
  std::partial_sort(ls.top_pairs.begin(), ls.top_pairs.begin() + static_cast<std::ptrdiff_t>(keep), ls.top_pairs.end(),
                    [](const ExpertPair& x, const ExpertPair& y) { return x.correlation > y.correlation; });
  ls.top_pairs.resize(keep);
  const int per_gpu = experts / o.ep_size;
  ls.gpu_share.assign(static_cast<std::size_t>(o.ep_size), 0.0);
  const double all = std::accumulate(total.begin(), total.end(), 0.0);
  for (int e = 0; e < experts; ++e) {
    ls.gpu_share[static_cast<std::size_t>(e / per_gpu)] += all > 0.0 ? total[static_cast<std::size_t>(e)] / all : 0.0;
  }
  ls.gpu_max_over_mean = *std::max_element(ls.gpu_share.begin(), ls.gpu_share.end()) * o.ep_size;
  if (!a.distances.empty()) {
    ls.drift_mean =
        std::accumulate(a.distances.begin(), a.distances.end(), 0.0) / static_cast<double>(a.distances.size());
    ls.drift_max = *std::max_element(a.distances.begin(), a.distances.end());
    ls.drift_first_last = cosine_distance(a.first_window, a.prev_window);
  }
  return ls;
}

}  // namespace

TraceStats compute_trace_stats(const std::filesystem::path& path, const StatsOptions& o) {
  TraceReader r(path);
  TraceStats st;
  st.header = r.header();
  const auto experts = static_cast<int>(st.header.experts());
  const auto layers = static_cast<int>(st.header.moe_layers());
  if (o.ep_size < 1 || experts % o.ep_size != 0) {
    throw core::Error(fmt::format("trace stats: the EP size {} must divide the {} experts", o.ep_size, experts));
  }
  std::vector<LayerAccumulator> acc;
  acc.reserve(static_cast<std::size_t>(layers));
  for (int l = 0; l < layers; ++l) {
    acc.emplace_back(experts, o.ep_size);
  }
  std::optional<GroupLimitCounter> groups;
  if (o.expert_groups > 0) {
    try {
      groups.emplace(experts, o.expert_groups, o.topk_group);
    } catch (const core::Error& e) {
      throw core::Error(fmt::format("trace stats: {}: {}", path.string(), e.what()));
    }
    st.group_limit.emplace();
    st.group_limit->groups = o.expert_groups;
    st.group_limit->topk_group = o.topk_group;
    st.group_limit->checked = st.header.has_token_experts();
    if (!st.group_limit->checked) {
      groups.reset();  // nothing to count: the limit is reported as unchecked
    }
  }
  const int per_gpu = experts / o.ep_size;
  trace::Step s;
  std::int64_t in_window = 0;
  while (r.next(s)) {
    ++st.steps;
    st.tokens += s.tokens();
    for (int l = 0; l < layers; ++l) {
      LayerAccumulator& a = acc[static_cast<std::size_t>(l)];
      if (groups) {
        const auto& ids = s.layers(l).token_experts();
        const bool had = groups->tokens_over_limit() > 0;
        groups->add(std::span<const std::uint32_t>(ids.data(), static_cast<std::size_t>(ids.size())),
                    static_cast<int>(st.header.top_k()));
        if (!had && groups->tokens_over_limit() > 0 && st.group_limit) {
          st.group_limit->first_step = static_cast<std::int64_t>(s.index());
          st.group_limit->first_layer = l;
        }
      }
      double max = 0.0;
      double total = 0.0;
      double squares = 0.0;
      std::fill(a.gpu_step.begin(), a.gpu_step.end(), 0.0);
      for (int e = 0; e < experts; ++e) {
        const double x = s.layers(l).expert_tokens(e);
        a.batch(a.in_batch, e) = x;
        a.sum(e) += x;
        a.active[static_cast<std::size_t>(e)] += x > 0.0 ? 1.0 : 0.0;
        a.window[static_cast<std::size_t>(e)] += x;
        a.gpu_step[static_cast<std::size_t>(e / per_gpu)] += x;
        max = std::max(max, x);
        total += x;
        squares += x * x;
      }
      // A step with no tokens counts as balanced (0), as before for max / mean.
      a.step_ratio_sum += total > 0.0 ? max / (total / experts) : 0.0;
      a.step_cv_sum += total > 0.0 ? coefficient_of_variation(total, squares, experts) : 0.0;
      double gpu_max = 0.0;
      double gpu_squares = 0.0;
      for (const double x : a.gpu_step) {
        gpu_max = std::max(gpu_max, x);
        gpu_squares += x * x;
      }
      a.gpu_ratio_sum += total > 0.0 ? gpu_max / (total / o.ep_size) : 0.0;
      a.gpu_cv_sum += total > 0.0 ? coefficient_of_variation(total, gpu_squares, o.ep_size) : 0.0;
      if (++a.in_batch == LayerAccumulator::k_batch) {
        a.flush_batch();
      }
    }
    if (++in_window == o.window) {
      for (auto& a : acc) {
        a.close_window();
      }
      in_window = 0;
    }
  }
  if (st.steps == 0) {
    throw core::Error(path.string() + ": the trace has no steps");
  }
  if (groups && st.group_limit) {
    GroupLimitStats& g = *st.group_limit;
    g.tokens = groups->tokens();
    g.tokens_over_limit = groups->tokens_over_limit();
    g.max_groups = groups->max_groups();
    g.mean_groups = groups->mean_groups();
    g.histogram = groups->histogram();
  }
  const auto n = static_cast<double>(st.steps);
  for (auto& a : acc) {
    st.layers.push_back(finish_layer(a, experts, n, o));
  }
  return st;
}

namespace {
double mean_of(const std::vector<LayerStats>& ls, double LayerStats::*field) {
  double s = 0.0;
  for (const auto& l : ls) {
    s += l.*field;
  }
  return s / static_cast<double>(ls.size());
}
}  // namespace

std::string format_trace_stats(const TraceStats& s, bool per_layer) {
  std::string out = fmt::format(
      "trace: model \"{}\", source \"{}\", {} steps, {} tokens ({:.1f} per step), {} MoE layers x {} experts, "
      "top-{}{}{}\n",
      s.header.model(), s.header.source(), s.steps, s.tokens,
      static_cast<double>(s.tokens) / static_cast<double>(s.steps), s.header.moe_layers(), s.header.experts(),
      s.header.top_k(), s.header.origin_gpus() > 0 ? fmt::format(", origins over {} GPUs", s.header.origin_gpus()) : "",
      s.header.has_token_experts() ? ", per-token ids" : "");
  out += fmt::format("{:>6} {:>9} {:>9} {:>6} {:>10} {:>7} {:>8} {:>10} {:>10} {:>8} {:>8}  {}\n", "layer", "max/mean",
                     "max/min", "gini", "step max/", "step", "active", "GPU max/", "GPU step", "drift", "drift",
                     "top correlated pairs");
  out += fmt::format("{:>6} {:>9} {:>9} {:>6} {:>10} {:>7} {:>8} {:>10} {:>10} {:>8} {:>8}\n", "", "", "", "", "mean",
                     "cv", "(mean)", "mean", "max/mean", "mean", "1st-last");
  const auto row = [&](const std::string& name, const LayerStats& l) {
    const double active = std::accumulate(l.active_share.begin(), l.active_share.end(), 0.0) /
                          static_cast<double>(std::max<std::size_t>(1, l.active_share.size()));
    std::string pairs;
    for (const ExpertPair& p : l.top_pairs) {
      pairs += fmt::format("({},{}) r={:.2f} ", p.a, p.b, p.correlation);
    }
    out += fmt::format(
        "{:>6} {:>9.2f} {:>9.2f} {:>6.3f} {:>10.2f} {:>7.3f} {:>8.2f} {:>10.3f} {:>10.3f} {:>8.4f} {:>8.4f}  {}\n",
        name, l.max_over_mean, l.max_over_min, l.gini, l.step_max_over_mean, l.step_cv, active, l.gpu_max_over_mean,
        l.gpu_step_max_over_mean, l.drift_mean, l.drift_first_last, pairs);
  };
  if (per_layer) {
    for (std::size_t l = 0; l < s.layers.size(); ++l) {
      row(std::to_string(l), s.layers[l]);
    }
  }
  LayerStats avg;
  avg.max_over_mean = mean_of(s.layers, &LayerStats::max_over_mean);
  avg.max_over_min = mean_of(s.layers, &LayerStats::max_over_min);
  avg.gini = mean_of(s.layers, &LayerStats::gini);
  avg.step_max_over_mean = mean_of(s.layers, &LayerStats::step_max_over_mean);
  avg.step_cv = mean_of(s.layers, &LayerStats::step_cv);
  avg.gpu_max_over_mean = mean_of(s.layers, &LayerStats::gpu_max_over_mean);
  avg.gpu_step_max_over_mean = mean_of(s.layers, &LayerStats::gpu_step_max_over_mean);
  avg.drift_mean = mean_of(s.layers, &LayerStats::drift_mean);
  avg.drift_first_last = mean_of(s.layers, &LayerStats::drift_first_last);
  for (const auto& l : s.layers) {
    avg.active_share.push_back(std::accumulate(l.active_share.begin(), l.active_share.end(), 0.0) /
                               static_cast<double>(l.active_share.size()));
  }
  row("mean", avg);
  if (s.group_limit) {
    const GroupLimitStats& g = *s.group_limit;
    if (!g.checked) {
      out += fmt::format(
          "group limit (at most {} of {} expert groups per token): not checked, the check needs per-token expert ids "
          "and this trace has none\n",
          g.topk_group, g.groups);
    } else {
      out += fmt::format(
          "group limit (at most {} of {} expert groups per token): {} tokens checked (token x MoE layer), {} over "
          "the limit ({:.2f} %), max {} groups per token, mean {:.3f}{}\n",
          g.topk_group, g.groups, g.tokens, g.tokens_over_limit, 100.0 * g.share_over_limit(), g.max_groups,
          g.mean_groups,
          g.first_step >= 0 ? fmt::format("; first at step {}, layer {}", g.first_step, g.first_layer) : "");
    }
  }
  return out;
}

std::string trace_stats_json(const TraceStats& s) {
  nlohmann::ordered_json j;
  j["model"] = s.header.model();
  j["source"] = s.header.source();
  j["steps"] = s.steps;
  j["tokens"] = s.tokens;
  j["moe_layers"] = s.header.moe_layers();
  j["experts"] = s.header.experts();
  j["top_k"] = s.header.top_k();
  nlohmann::ordered_json layers = nlohmann::ordered_json::array();
  for (const LayerStats& l : s.layers) {
    nlohmann::ordered_json x;
    x["max_over_mean"] = l.max_over_mean;
    x["max_over_min"] =
        std::isfinite(l.max_over_min) ? nlohmann::ordered_json(l.max_over_min) : nlohmann::ordered_json();
    x["gini"] = l.gini;
    x["step_max_over_mean"] = l.step_max_over_mean;
    x["step_cv"] = l.step_cv;
    x["active_share"] = l.active_share;
    nlohmann::ordered_json pairs = nlohmann::ordered_json::array();
    for (const ExpertPair& p : l.top_pairs) {
      pairs.push_back({{"a", p.a}, {"b", p.b}, {"r", p.correlation}});
    }
    x["top_pairs"] = pairs;
    x["gpu_share_linear"] = l.gpu_share;
    x["gpu_max_over_mean"] = l.gpu_max_over_mean;
    x["gpu_step_max_over_mean"] = l.gpu_step_max_over_mean;
    x["gpu_step_cv"] = l.gpu_step_cv;
    x["drift_mean"] = l.drift_mean;
    x["drift_max"] = l.drift_max;
    x["drift_first_last"] = l.drift_first_last;
    layers.push_back(x);
  }
  j["layers"] = layers;
  if (s.group_limit) {
    const GroupLimitStats& g = *s.group_limit;
    nlohmann::ordered_json x;
    x["expert_groups"] = g.groups;
    x["topk_group"] = g.topk_group;
    x["checked"] = g.checked;
    if (g.checked) {
      x["tokens"] = g.tokens;
      x["tokens_over_limit"] = g.tokens_over_limit;
      x["share_over_limit"] = g.share_over_limit();
      x["max_groups"] = g.max_groups;
      x["mean_groups"] = g.mean_groups;
      x["groups_histogram"] = g.histogram;
      x["first_over_limit"] = g.first_step >= 0
                                  ? nlohmann::ordered_json{{"step", g.first_step}, {"layer", g.first_layer}}
                                  : nlohmann::ordered_json();
    } else {
      x["reason"] = "the check needs per-token expert ids (has_token_experts); the trace has none";
    }
    j["group_limit"] = x;
  }
  return j.dump(2) + "\n";
}

}  // namespace epsim::workloads
