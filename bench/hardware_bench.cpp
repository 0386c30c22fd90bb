// SPDX-License-Identifier: Apache-2.0
// Hardware-model throughput: expert-FFN cost evaluations per second (roofline + stress-weighted
// variability), and the time to cost one all-to-all of a dense rank-1 traffic matrix on 64 and 1,024
// GPUs (HGX H200 nodes, rail-optimised NDR) with the exact graph model and with the port model.
#include <fmt/format.h>

#include <toml++/toml.h>
#include <boost/random/uniform_real_distribution.hpp>
#include <chrono>
#include <cmath>
#include <memory>

#include "hardware/all_to_all.hpp"
#include "hardware/cluster_spec.hpp"
#include "hardware/collectives.hpp"
#include "hardware/gpu_spec.hpp"
#include "hardware/measured_cost_model.hpp"
#include "hardware/network_graph.hpp"
#include "hardware/roofline.hpp"

using namespace epsim;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// `m`: the plain roofline, or the same under a measured curve of 32 points (measured tables as the
// cost model, hardware/measured_cost_model.hpp).
void cost_throughput(bool measured) {
  const auto gpu = hardware::load_gpu_preset("h200");
  std::vector<double> speeds(64);
  for (std::size_t g = 0; g < speeds.size(); ++g) {
    speeds[g] = 0.9 + 0.002 * static_cast<double>(g);
  }
  auto roofline =
      std::make_unique<hardware::RooflineCostModel>(gpu, speeds, hardware::VariabilityConfig{}, core::RandomStreams(1));
  std::unique_ptr<hardware::CostModel> model;
  if (measured) {
    std::vector<std::pair<double, double>> points;
    for (int i = 0; i < 32; ++i) {
      const double ns = 1e4 * std::pow(1.3, i);
      points.emplace_back(ns, ns * (1.1 + 0.2 * std::sin(i)));
    }
    hardware::KernelCurves curves;
    curves[static_cast<std::size_t>(hardware::OpKind::expert_ffn)] =
        std::make_shared<hardware::MeasuredCurve>(std::move(points));
    model = std::make_unique<hardware::MeasuredCostModel>(std::move(roofline), curves, gpu.name);
  } else {
    model = std::move(roofline);
  }
  const hardware::CostModel& m = *model;
  hardware::KernelWork w;
  w.kind = hardware::OpKind::expert_ffn;
  const int n = 20'000'000;
  double sink = 0.0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    const double tokens = 1.0 + (i & 4095);
    w.tokens = tokens;
    w.flops = 2.0 * tokens * 3.0 * 7168.0 * 2048.0;
    w.bytes = 4.0 * 44040192.0 + tokens * 28672.0;
    sink += m.kernel_ns(i & 63, w);
  }
  const double s = seconds_since(t0);
  fmt::print("expert-FFN cost evaluations{}: {:.1f} M/s ({:.1f} ns each; checksum {:.3e})\n",
             measured ? " (measured curve)" : "", n / s / 1e6, s / n * 1e9, sink);
}

void all_to_all(int nodes) {
  const toml::table over = toml::parse("nodes = " + std::to_string(nodes));
  core::ParamTable t({core::ParamLayer{&over, "bench"},
                      core::ParamLayer{&hardware::cluster_presets().get("hgx-h200", "", ""), "hgx-h200"}},
                     "cluster");
  const auto spec = hardware::parse_cluster_spec(t);
  auto t0 = std::chrono::steady_clock::now();
  const hardware::NetworkGraph g(spec);
  const double build_s = seconds_since(t0);
  const int n = g.num_gpus();
  core::Rng rng(3);
  boost::random::uniform_real_distribution<double> u(0.0, 1.0);
  Eigen::ArrayXd share(n);
  Eigen::ArrayXd pairs(n);
  for (int i = 0; i < n; ++i) {
    share(i) = u(rng);
    pairs(i) = 256.0 * u(rng);
  }
  share /= share.sum();
  const Eigen::MatrixXd m = (share * 14336.0).matrix() * pairs.matrix().transpose();
  hardware::CollectiveCoster coster(g);
  const int reps = n <= 64 ? 2000 : 5;
  double sink = 0.0;
  t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) {
    sink += coster.cost(m).time_ns;
  }
  const double graph_us = seconds_since(t0) / reps * 1e6;
  const hardware::Topology ports = g.port_view();
  hardware::PerGpuTraffic tr;
  tr.resize(n);
  for (int s = 0; s < n; ++s) {
    for (int d = 0; d < n; ++d) {
      if (s != d) {
        const bool intra = ports.node_of(s) == ports.node_of(d);
        (intra ? tr.send_intra : tr.send_inter)(s) += m(s, d);
        (intra ? tr.recv_intra : tr.recv_inter)(d) += m(s, d);
      }
    }
  }
  const int port_reps = 200000;
  t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < port_reps; ++r) {
    sink += hardware::all_to_all_cost(ports, tr).time_ns;
  }
  const double port_us = seconds_since(t0) / port_reps * 1e6;
  fmt::print(
      "all-to-all on {:>4} GPUs: graph build {:.3f} s ({} vertices, {} arcs); graph costing {:>10.1f} us; "
      "port model {:.3f} us (checksum {:.3e})\n",
      n, build_s, g.num_vertices(), g.num_arcs(), graph_us, port_us, sink);
}

// A run on the graph model with EP groups of 8 (the demo's shape) at `nodes` HGX H200 nodes: building the
// graph (it walks every GPU pair once for the port view's latencies) and finding every group's routes;
// the routes kept grow with the GPUs (8 x 8 per group of 8), not with GPUs squared.
void group_routes(int nodes) {
  const toml::table over = toml::parse("nodes = " + std::to_string(nodes));
  core::ParamTable t({core::ParamLayer{&over, "bench"},
                      core::ParamLayer{&hardware::cluster_presets().get("hgx-h200", "", ""), "hgx-h200"}},
                     "cluster");
  const auto spec = hardware::parse_cluster_spec(t);
  auto t0 = std::chrono::steady_clock::now();
  const hardware::NetworkGraph g(spec);
  const double build_s = seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  for (int first = 0; first < g.num_gpus(); first += 8) {
    g.prepare_routes(first, 8);
  }
  const double routes_s = seconds_since(t0);
  fmt::print(
      "EP8 groups on {:>5} GPUs: graph build {:.3f} s, every group's routes {:.3f} s, {} routes kept ({:.0f} per "
      "GPU)\n",
      g.num_gpus(), build_s, routes_s, g.routes_kept(), static_cast<double>(g.routes_kept()) / g.num_gpus());
}

}  // namespace

int main() {
  cost_throughput(false);
  cost_throughput(true);
  all_to_all(8);
  all_to_all(128);
  for (const int nodes : {128, 256, 512, 1024}) {
    group_routes(nodes);
  }
  return 0;
}
