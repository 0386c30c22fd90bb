// SPDX-License-Identifier: Apache-2.0
#include "experiments/studies/scaling_series.hpp"

#include <fmt/format.h>

#include <map>
#include <set>
#include <tuple>

namespace epsim::experiments {
namespace {

// What makes two clusters one system family: preset name, GPU, scale-up and scale-out fabric.
using SystemKey = std::tuple<std::string, std::string, int, int, double, int, double, int>;

SystemKey system_key(const ExperimentConfig& c) {
  const hardware::ClusterSpec& k = c.cluster;
  return {k.name,
          c.gpu.name,
          k.gpus_per_node,
          static_cast<int>(k.scale_up),
          k.scale_up_link.bw_gbps,
          static_cast<int>(k.scale_out),
          k.nic_link.bw_gbps,
          k.nics_per_node};
}

bool sets_setup(const toml::table& overrides) {
  return overrides.contains("cluster") || overrides.contains("parallel") || overrides.contains("gpu");
}

// Axes that change the setup (any level sets cluster, parallel or gpu keys, or the axis is such a
// key), with every axis zipped to one of them: a curve runs along these.
std::vector<bool> setup_axes(const StudySpec& spec) {
  std::vector<bool> setup(spec.axes.size(), false);
  for (std::size_t a = 0; a < spec.axes.size(); ++a) {
    const StudyAxis& axis = spec.axes[a];
    setup[a] = axis.name.starts_with("cluster.") || axis.name.starts_with("parallel.") || axis.name.starts_with("gpu.");
    for (const AxisLevel& l : axis.levels) {
      setup[a] = setup[a] || sets_setup(l.overrides);
    }
  }
  // Zipped axes vary together: if one changes the setup, so does its partner (both ways).
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t a = 0; a < spec.axes.size(); ++a) {
      for (std::size_t b = 0; b < spec.axes.size(); ++b) {
        if (spec.axes[a].zip_with == spec.axes[b].name && setup[a] != setup[b]) {
          setup[a] = setup[b] = true;
          changed = true;
        }
      }
    }
  }
  return setup;
}

std::string rate_text(double rps) {
  return fmt::format("{:.4g}", rps);
}

}  // namespace

std::vector<ScalingSeries> scaling_series(const StudySpec& spec, const StudyPlan& plan) {
  // System names: the preset's, with GPU and fabric only where one name covers several families.
  std::map<SystemKey, std::string> names;
  std::map<std::string, std::set<SystemKey>> by_name;
  for (const StudyPoint& p : plan.points) {
    by_name[p.config.cluster.name].insert(system_key(p.config));
  }
  for (const auto& [name, keys] : by_name) {
    for (const SystemKey& k : keys) {
      names[k] = keys.size() == 1 ? name
                                  : fmt::format("{} ({}, {:g} GB/s scale-up, {:g} GB/s NICs)", name, std::get<1>(k),
                                                std::get<4>(k), std::get<6>(k));
    }
  }
  // The load: absolute rates, or per GPU when that gives fewer distinct loads.
  std::set<std::string> rates;
  std::set<std::string> per_gpu;
  for (const StudyPoint& p : plan.points) {
    const double rate = p.config.workload.arrivals.rate_rps;
    rates.insert(rate_text(rate));
    per_gpu.insert(rate_text(rate / p.config.cluster.num_gpus()));
  }
  const bool load_per_gpu = per_gpu.size() < rates.size();
  const std::vector<bool> setup = setup_axes(spec);
  std::vector<ScalingSeries> out;
  out.reserve(plan.points.size());
  for (const StudyPoint& p : plan.points) {
    ScalingSeries s;
    s.system = names.at(system_key(p.config));
    const double rate = p.config.workload.arrivals.rate_rps;
    s.series = load_per_gpu
                   ? fmt::format("{}, {} req/s per GPU", s.system, rate_text(rate / p.config.cluster.num_gpus()))
                   : fmt::format("{}, {} req/s", s.system, rate_text(rate));
    for (std::size_t a = 0; a < spec.axes.size(); ++a) {
      // The rate axis is in the load already.
      if (!setup[a] && spec.axes[a].name != "workload.rate_rps") {
        s.series += fmt::format(", {}", p.labels[a]);
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace epsim::experiments
