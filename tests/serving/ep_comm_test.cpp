// SPDX-License-Identifier: Apache-2.0
// Expert-parallel communication as deployed: group-limited token sampling, DeepEP's deduplicated traffic
// against a brute-force count, DeepEP's costs by hand, and the shipped defaults against the public
// measurements in hardware/presets/comm_fits.toml.
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <boost/random/uniform_01.hpp>
#include <boost/random/uniform_int_distribution.hpp>

#include <toml++/toml.h>
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include "hardware/cluster_spec.hpp"
#include "hardware/deepep_collectives.hpp"
#include "hardware/link_types.hpp"
#include "hardware/network_graph.hpp"
#include "models/model_spec.hpp"
#include "policies/eplb/eplb.hpp"
#include "policies/placement.hpp"
#include "sim/fanout_estimator.hpp"
#include "sim/overlap_schedule.hpp"
#include "sim/simulator.hpp"
#include "workloads/routing_source.hpp"
#include "workloads/token_sampler.hpp"

using namespace epsim;

namespace {

models::ModelSpec moe(int experts, int top_k, int groups, int topk_group, int layers = 1) {
  models::ModelSpec m;
  m.name = "test";
  m.hidden_size = 7168;
  m.num_layers = layers;
  m.routed_experts = experts;
  m.top_k = top_k;
  m.expert_groups = groups;
  m.topk_group = topk_group;
  return m;
}

hardware::ClusterSpec cluster(const std::string& preset, int nodes, int gpus_per_node = 8) {
  const toml::table over = toml::parse(fmt::format("nodes = {}\ngpus_per_node = {}", nodes, gpus_per_node));
  core::ParamTable t(
      {core::ParamLayer{&over, "test"}, core::ParamLayer{&hardware::cluster_presets().get(preset, "", ""), preset}},
      "cluster");
  return hardware::parse_cluster_spec(t);
}

// The EP group's port view as the simulator builds it.
hardware::Topology group(const std::string& preset, int ep) {
  const int nodes = std::max(1, ep / 8);
  const hardware::NetworkGraph g(cluster(preset, nodes, std::min(ep, 8)));
  return serving::group_topology(g.port_view(), ep);
}

policies::LayerPlacement shuffled_placement(int experts, int gpus, core::Rng& rng) {
  std::vector<int> phy2log(static_cast<std::size_t>(experts));
  std::iota(phy2log.begin(), phy2log.end(), 0);
  for (int i = experts - 1; i > 0; --i) {
    boost::random::uniform_int_distribution<int> pick(0, i);
    std::swap(phy2log[static_cast<std::size_t>(i)], phy2log[static_cast<std::size_t>(pick(rng))]);
  }
  return policies::make_layer_placement(experts, gpus, experts / gpus, phy2log);
}

}  // namespace

TEST_CASE("group-limited token sampling never exceeds its group limit and draws distinct experts") {
  for (const auto& [experts, k, groups, limit] :
       std::vector<std::array<int, 4>>{{256, 8, 8, 4}, {64, 6, 8, 1}, {32, 4, 4, 2}, {16, 2, 1, 1}, {60, 8, 6, 6}}) {
    workloads::TokenSampler s(experts, k, groups, limit);
    core::Rng rng(static_cast<std::uint64_t>(experts * 31 + limit));
    std::vector<double> w(static_cast<std::size_t>(experts));
    boost::random::uniform_01<double> u;
    for (double& x : w) {
      x = u(rng) < 0.3 ? 0.0 : u(rng);  // zero weights included: the limit must hold anyway
    }
    s.set_weights(w);
    std::vector<std::int32_t> out(static_cast<std::size_t>(k));
    for (int t = 0; t < 2000; ++t) {
      s.draw(rng, out);
      std::set<int> distinct(out.begin(), out.end());
      std::set<int> used_groups;
      for (const int e : out) {
        REQUIRE(e >= 0);
        REQUIRE(e < experts);
        used_groups.insert(e / (experts / groups));
      }
      REQUIRE(static_cast<int>(distinct.size()) == k);
      REQUIRE(static_cast<int>(used_groups.size()) <= limit);
    }
  }
}

TEST_CASE("without a group limit, uniform weights pick every expert about equally often") {
  workloads::TokenSampler s(16, 4, 1, 1);
  s.set_weights(std::vector<double>(16, 1.0));
  core::Rng rng(7);
  std::vector<int> hits(16, 0);
  std::vector<std::int32_t> out(4);
  const int tokens = 40000;
  for (int t = 0; t < tokens; ++t) {
    s.draw(rng, out);
    for (const int e : out) {
      ++hits[static_cast<std::size_t>(e)];
    }
  }
  for (const int h : hits) {
    REQUIRE(h == Approx(tokens * 4 / 16.0).epsilon(0.03));  // 10,000 each, sd 0.9 %
  }
}

TEST_CASE("DeepEP normal mode: deduplicated bytes per node and GPU match a brute-force count") {
  // Every origin sends the same tokens, so the per-layer fan-out ratios are exact for each origin and the
  // model's per-GPU traffic must equal a token-by-token count.
  for (const auto& [nodes, gpn, experts, k, seed] :
       std::vector<std::array<int, 5>>{{2, 2, 8, 2, 1}, {2, 4, 16, 4, 2}, {3, 2, 12, 3, 3}, {4, 2, 32, 8, 4}}) {
    const int gpus = nodes * gpn;
    const hardware::Topology topo(nodes, gpn, hardware::LinkSpec{100.0, 1.0}, hardware::LinkSpec{10.0, 2.0});
    core::Rng rng(static_cast<std::uint64_t>(seed));
    const policies::LayerPlacement placement = shuffled_placement(experts, gpus, rng);
    workloads::TokenSampler sampler(experts, k, 1, 1);
    std::vector<double> w(static_cast<std::size_t>(experts));
    boost::random::uniform_01<double> u;
    for (double& x : w) {
      x = 0.1 + u(rng);
    }
    sampler.set_weights(w);
    const int tokens = 50;
    std::vector<std::int32_t> sets(static_cast<std::size_t>(tokens * k));
    for (int t = 0; t < tokens; ++t) {
      sampler.draw(rng,
                   std::span<std::int32_t>(sets).subspan(static_cast<std::size_t>(t * k), static_cast<std::size_t>(k)));
    }
    // Brute force: each origin o sends every token once to every other node its experts live on (to the
    // GPU of o's rail there), which forwards it once to every other GPU of that node holding one.
    const double b = 1000.0;
    Eigen::ArrayXd send_inter = Eigen::ArrayXd::Zero(gpus), recv_inter = send_inter, send_intra = send_inter,
                   recv_intra = send_inter;
    Eigen::MatrixXd pair_matrix = Eigen::MatrixXd::Zero(gpus, gpus);
    for (int o = 0; o < gpus; ++o) {
      for (int t = 0; t < tokens; ++t) {
        std::set<int> dest_gpus;
        std::set<int> dest_nodes;
        for (int i = 0; i < k; ++i) {
          const int g = placement.gpu_of_slot(placement.replicas(sets[static_cast<std::size_t>(t * k + i)])[0]);
          pair_matrix(o, g) += 1.0;
          dest_gpus.insert(g);
          dest_nodes.insert(g / gpn);
        }
        for (const int n : dest_nodes) {
          if (n != o / gpn) {
            send_inter(o) += b;
            recv_inter(n * gpn + o % gpn) += b;
          }
        }
        for (const int g : dest_gpus) {
          const int forwarder = (g / gpn) * gpn + o % gpn;
          if (forwarder != g) {
            send_intra(forwarder) += b;
            recv_intra(g) += b;
          }
        }
      }
    }
    models::ModelSpec m = moe(experts, k, 1, 1);
    serving::FanoutEstimator est(m, topo, 1, 1, core::Rng(1));
    Eigen::ArrayXd gpu_fan;
    Eigen::ArrayXd node_fan;
    est.compute(sets, placement, gpu_fan, node_fan);
    hardware::EpCommConfig comm = hardware::algorithm_defaults(hardware::DispatchAlgorithm::deepep_normal);
    comm.sm_gbps = 0.0;
    hardware::DeepEpNormal normal(topo, comm);
    const Eigen::ArrayXd share = Eigen::ArrayXd::Constant(gpus, 1.0 / gpus);
    const Eigen::ArrayXd pairs = pair_matrix.colwise().sum().transpose().array();
    for (const bool per_origin : {true, false}) {
      // The separable form describes the same traffic: every origin sends share x all pairs.
      const Eigen::ArrayXd all_pairs = pairs;
      hardware::EpTraffic t{&share, &all_pairs, per_origin ? &pair_matrix : nullptr, &gpu_fan, &node_fan};
      const hardware::CollectiveCost c = normal.ep_exchange(t, b);
      const hardware::PerGpuTraffic& got = normal.traffic();
      for (int g = 0; g < gpus; ++g) {
        INFO(fmt::format("nodes {} gpus/node {} experts {} k {} gpu {} per_origin {}", nodes, gpn, experts, k, g,
                         per_origin));
        CHECK(got.send_inter(g) == Approx(send_inter(g)).margin(1e-6));
        CHECK(got.recv_inter(g) == Approx(recv_inter(g)).margin(1e-6));
        CHECK(got.send_intra(g) == Approx(send_intra(g)).margin(1e-6));
        CHECK(got.recv_intra(g) == Approx(recv_intra(g)).margin(1e-6));
      }
      CHECK(c.inter_bytes == Approx(send_inter.sum()));
      CHECK(c.intra_bytes == Approx(send_intra.sum()));
    }
  }
}

TEST_CASE("DeepEP normal and low-latency costs of a small exchange, by hand") {
  // 2 nodes x 2 GPUs, NVLink 100 GB/s, RDMA 10 GB/s; every GPU has a quarter of the tokens and receives
  // 100 pairs; a GPU's pairs are 50 distinct tokens, a node's 200 pairs 50 distinct tokens. 1,000 B each.
  const hardware::Topology topo(2, 2, hardware::LinkSpec{100.0, 1.0}, hardware::LinkSpec{10.0, 2.0});
  const Eigen::ArrayXd share = Eigen::ArrayXd::Constant(4, 0.25);
  const Eigen::ArrayXd pairs = Eigen::ArrayXd::Constant(4, 100.0);
  const Eigen::ArrayXd gpu_fan = Eigen::ArrayXd::Constant(4, 0.5);
  const Eigen::ArrayXd node_fan = Eigen::ArrayXd::Constant(2, 0.25);
  const hardware::EpTraffic t{&share, &pairs, nullptr, &gpu_fan, &node_fan};
  // Normal at the links' full rate: D_g = 50, D_n = 50; a GPU sends 0.25 x 50 tokens to the other node
  // (12.5 kB, 1.25 us at 10 GB/s), its rail holds half of each node's arrivals and forwards 0.5 x 50 to its
  // peer (25 kB, 0.25 us at 100 GB/s). 40 us startup + 1.25 us.
  hardware::EpCommConfig full_rate = hardware::algorithm_defaults(hardware::DispatchAlgorithm::deepep_normal);
  full_rate.nvlink_efficiency = 1.0;
  full_rate.rdma_efficiency = 1.0;
  hardware::DeepEpNormal normal(topo, full_rate);
  const hardware::CollectiveCost n = normal.ep_exchange(t, 1000.0);
  CHECK(normal.traffic().send_inter(0) == Approx(12500.0));
  CHECK(normal.traffic().send_intra(0) == Approx(25000.0));
  CHECK(n.time_ns == Approx(40000.0 + 1250.0));
  CHECK(n.inter_bytes == Approx(4 * 12500.0));
  // The shipped kernels reach 95 % of RDMA's rate: 12.5 kB at 9.5 GB/s.
  const hardware::EpCommConfig shipped = hardware::algorithm_defaults(hardware::DispatchAlgorithm::deepep_normal);
  CHECK(shipped.rdma_efficiency == 0.95);
  hardware::DeepEpNormal fitted(topo, shipped);
  CHECK(fitted.ep_exchange(t, 1000.0).time_ns == Approx(40000.0 + 12500.0 / 9.5));
  // At 4 % of NVLink's rate the forwarding (25 kB at 4 GB/s, 6.25 us) decides.
  hardware::EpCommConfig slow_nvlink = full_rate;
  slow_nvlink.nvlink_efficiency = 0.04;
  hardware::DeepEpNormal forwarding(topo, slow_nvlink);
  CHECK(forwarding.ep_exchange(t, 1000.0).time_ns == Approx(40000.0 + 6250.0));
  // With the SMs' channels limited to 24 x 1 GB/s, a GPU's 37.5 kB of sends take 1.5625 us: they decide.
  hardware::EpCommConfig few_sms = full_rate;
  few_sms.sm_gbps = 1.0;
  hardware::DeepEpNormal slow(topo, few_sms);
  CHECK(slow.ep_exchange(t, 1000.0).time_ns == Approx(40000.0 + 37500.0 / 24.0));
  // Low latency: one message per pair. A GPU sends 0.25 x 100 pairs to its node peer and 0.25 x 200 to
  // the other node: 50 kB over RDMA (5 us), 75 messages x 15 ns; 20 us startup.
  hardware::DeepEpLowLatency ll(topo, hardware::algorithm_defaults(hardware::DispatchAlgorithm::deepep_low_latency));
  const hardware::CollectiveCost l = ll.ep_exchange(t, 1000.0);
  CHECK(l.time_ns == Approx(20000.0 + 5000.0 + 75 * 15.0));
  CHECK(l.inter_bytes == Approx(4 * 50000.0));
  CHECK(l.intra_bytes == Approx(4 * 25000.0));
  // NCCL's all-to-all moves every pair too, after the topology's own startup (2 us here).
  hardware::PortCollectives nccl(topo);
  CHECK(nccl.ep_exchange(t, 1000.0).time_ns == Approx(2000.0 + 5000.0));
  // Auto: the normal kernels' cost for a step that prefills, the low-latency kernels' for decode only.
  hardware::DeepEpAuto autom(topo, hardware::algorithm_defaults(hardware::DispatchAlgorithm::deepep_auto));
  hardware::EpTraffic decode = t;
  decode.step_prefills = false;
  CHECK(autom.ep_exchange(t, 1000.0).time_ns == Approx(40000.0 + 12500.0 / 9.5));
  CHECK(autom.ep_exchange(decode, 1000.0).time_ns == Approx(20000.0 + 5000.0 + 75 * 15.0));
}

TEST_CASE("wire bytes per token: FP8 with a float32 scale per 128 elements, BF16") {
  CHECK(hardware::wire_bytes_per_token(hardware::WireDtype::fp8, 7168, 128) == 7392.0);  // DeepEP's 7,392 B
  CHECK(hardware::wire_bytes_per_token(hardware::WireDtype::bf16, 7168, 128) == 14336.0);
  CHECK(hardware::wire_bytes_per_token(hardware::WireDtype::fp8, 100, 128) == 104.0);  // a partial block
}

namespace {

// A published DeepEP normal-mode bandwidth as the time of one dispatch or combine, over the bytes DeepEP's
// test counts (comm_fits.toml), next to epsim's cost of the same exchange; or (deepep_normal_in_step) a
// profiled in-step time next to the isolated cost times overlap_exchange_factor.
struct NormalPoint {
  double published_ns = 0.0;
  double model_ns = 0.0;
};

NormalPoint deepep_normal_point(const toml::table& p) {
  const int ep = static_cast<int>(p["ep"].value_or(0));
  const auto tokens = p["tokens"].value_or(0.0);
  const bool dispatch = p["phase"].value_or(std::string()) == "dispatch";
  const bool rdma = p["counted"].value_or(std::string()) == "rdma";
  const bool in_step = p["kind"].value_or(std::string()) == "deepep_normal_in_step";
  const hardware::Topology topo = group(p["cluster"].value_or(std::string()), ep);
  const int nodes = topo.nodes();
  // DeepEP's test: 256 experts, top-8, groups = nodes, top-min(nodes, 4) groups, uniform random scores.
  const int groups = static_cast<int>(p["groups"].value_or(nodes));
  const int topk_group = static_cast<int>(p["topk_group"].value_or(std::min(nodes, 4)));
  const models::ModelSpec m = moe(256, 8, groups, topk_group);
  workloads::TokenSampler sampler(256, 8, groups, topk_group);
  sampler.set_weights(std::vector<double>(256, 1.0));
  core::Rng rng(2024);
  const int samples = 20000;
  std::vector<std::int32_t> sets(static_cast<std::size_t>(samples) * 8);
  double nodes_per_token = 0.0;
  double gpus_per_token = 0.0;
  const int per_gpu = 256 / ep;
  for (int t = 0; t < samples; ++t) {
    const std::span<std::int32_t> s = std::span<std::int32_t>(sets).subspan(static_cast<std::size_t>(t) * 8, 8);
    sampler.draw(rng, s);
    std::set<int> ns;
    std::set<int> gs;
    for (const int e : s) {
      gs.insert(e / per_gpu);
      ns.insert(e / per_gpu / topo.gpus_per_node());
    }
    nodes_per_token += static_cast<double>(ns.size()) / samples;
    gpus_per_token += static_cast<double>(gs.size()) / samples;
  }
  const double bytes =
      hardware::wire_bytes_per_token(dispatch ? hardware::WireDtype::fp8 : hardware::WireDtype::bf16, 7168, 128);
  NormalPoint out;
  if (in_step) {
    out.published_ns = p["latency_us"].value_or(0.0) * 1e3;
  } else {
    // RDMA: every (token, node) pair incl. the sender's node; NVLink: every token a rank receives (by
    // symmetry, tokens x distinct GPUs per token).
    const double counted = tokens * (rdma ? nodes_per_token : gpus_per_token) * bytes;
    out.published_ns = counted / p["bandwidth_gbps"].value_or(1.0);
  }
  std::vector<int> linear(256);
  std::iota(linear.begin(), linear.end(), 0);
  const policies::LayerPlacement placement = policies::make_layer_placement(256, ep, per_gpu, linear);
  serving::FanoutEstimator est(m, topo, 1, 1, core::Rng(1));
  Eigen::ArrayXd gpu_fan;
  Eigen::ArrayXd node_fan;
  est.compute(sets, placement, gpu_fan, node_fan);
  hardware::EpCommConfig comm = hardware::algorithm_defaults(hardware::DispatchAlgorithm::deepep_normal);
  comm.rdma_efficiency = p["rdma_efficiency"].value_or(comm.rdma_efficiency);
  hardware::DeepEpNormal normal(topo, comm);
  const Eigen::ArrayXd share = Eigen::ArrayXd::Constant(ep, 1.0 / ep);
  const Eigen::ArrayXd pairs = Eigen::ArrayXd::Constant(ep, tokens * 8.0);
  out.model_ns = normal.ep_exchange(hardware::EpTraffic{&share, &pairs, nullptr, &gpu_fan, &node_fan}, bytes).time_ns;
  if (in_step) {
    out.model_ns *= comm.overlap_exchange_factor;
  }
  return out;
}

double deepep_low_latency_ns(const toml::table& p) {
  const int ep = static_cast<int>(p["ep"].value_or(0));
  const auto tokens = p["tokens"].value_or(0.0);
  const bool dispatch = p["phase"].value_or(std::string()) == "dispatch";
  const hardware::Topology topo = group(p["cluster"].value_or(std::string()), ep);
  hardware::DeepEpLowLatency ll(topo, hardware::algorithm_defaults(hardware::DispatchAlgorithm::deepep_low_latency));
  const Eigen::ArrayXd share = Eigen::ArrayXd::Constant(ep, 1.0 / ep);
  const Eigen::ArrayXd pairs = Eigen::ArrayXd::Constant(ep, tokens * 8.0);
  const double bytes =
      hardware::wire_bytes_per_token(dispatch ? hardware::WireDtype::fp8 : hardware::WireDtype::bf16, 7168, 128);
  return ll.ep_exchange(hardware::EpTraffic{&share, &pairs, nullptr, nullptr, nullptr}, bytes).time_ns;
}

}  // namespace

TEST_CASE("the shipped communication defaults reproduce every published point of comm_fits.toml", "[slow]") {
  const toml::table fits = toml::parse_file(EPSIM_TEST_DATA_DIR "/../../hardware/presets/comm_fits.toml");
  const toml::array* points = fits["point"].as_array();
  REQUIRE(points != nullptr);
  REQUIRE(points->size() >= 28);
  std::map<std::string, std::vector<double>> fit_log_residuals;
  for (const toml::node& node : *points) {
    const toml::table& p = *node.as_table();
    const std::string kind = p["kind"].value_or(std::string());
    const double tolerance = p["tolerance"].value_or(0.0);
    double published = 0.0;
    double model = 0.0;
    if (kind == "link_bandwidth" || kind == "ring_all_reduce" || kind == "nvls_all_reduce") {
      const hardware::LinkSpec l = hardware::link_type(p["link"].value_or(std::string()));
      published = p["value"].value_or(0.0);
      // A ring all-reduce's bus bandwidth is what each GPU's link achieves.
      model = kind == "nvls_all_reduce" ? l.nvls_gbps : l.effective_gbps();
    } else if (kind == "deepep_normal" || kind == "deepep_normal_in_step") {
      const NormalPoint n = deepep_normal_point(p);
      published = n.published_ns;
      model = n.model_ns;
    } else if (kind == "deepep_low_latency") {
      published = p["latency_us"].value_or(0.0) * 1e3;
      model = deepep_low_latency_ns(p);
    } else {
      FAIL("unknown kind " << kind);
    }
    INFO(p["source"].value_or(std::string())
         << ": published " << published << ", epsim " << model << " (" << 100.0 * (model / published - 1.0) << " %)");
    CHECK(model == Approx(published).epsilon(tolerance));
    if (const auto fit = p["fit"].value<std::string>()) {
      fit_log_residuals[*fit].push_back(std::log(model / published));
    }
  }
  // Each fitted value is the least-squares fit in log space of the points it scales: their log residuals
  // average to zero, up to the value's rounding to two digits (at most 0.6 %).
  for (const std::string fit : {"nvlink", "rdma", "rdma_ibrc", "overlap"}) {
    const std::vector<double>& r = fit_log_residuals[fit];
    REQUIRE(r.size() >= 2);
    INFO(fit << ": mean log residual over " << r.size() << " points");
    CHECK(std::abs(std::accumulate(r.begin(), r.end(), 0.0) / static_cast<double>(r.size())) < 0.006);
  }
}

TEST_CASE("two-batch overlap schedule against hand-computed timelines") {
  // One layer, both halves A = 10, D = 5, E = 10, C = 5, no tail. Compute: A0 [0,10) A1 [10,20); comm: D0
  // [10,15) D1 [20,25); compute: E0 [20,30) E1 [30,40); comm: C0 [30,35) C1 [40,45). Without overlap the
  // same work takes 2 x 30 = 60.
  serving::OverlapTimeline t;
  const std::vector<serving::HalfLayer> one{{10.0, 5.0, 10.0, 5.0}};
  serving::schedule_two_batches(one, one, 0.0, 0.0, t);
  CHECK(t.end_ns == Approx(45.0));
  REQUIRE(t.compute.size() == 4);
  CHECK(t.compute[2] == std::pair<double, double>(20.0, 30.0));
  CHECK(t.compute[3] == std::pair<double, double>(30.0, 40.0));
  // Two layers, communication-bound (A = 2, D = 10, E = 2, C = 10) with tails of 1: the comm stream is
  // never idle after the first A: D0 [2,12) D1 [12,22) C0 [22,32) C1 [32,42); layer 2: A0 [32,34) A1
  // [42,44), D0 [42,52) D1 [52,62), E0 [52,54) E1 [62,64), C0 [62,72) C1 [72,82); tails [72,73) [82,83).
  const std::vector<serving::HalfLayer> two{{2.0, 10.0, 2.0, 10.0}, {2.0, 10.0, 2.0, 10.0}};
  serving::schedule_two_batches(two, two, 1.0, 1.0, t);
  CHECK(t.end_ns == Approx(83.0));
  CHECK(t.layer_start[1] == Approx(32.0));
  // Compute-bound halves hide all communication but the first dispatch and the last combine:
  // A = 10, D = 1, E = 10, C = 1: A0 [0,10) A1 [10,20) E0 [20,30) E1 [30,40); C1 [40,41).
  const std::vector<serving::HalfLayer> busy{{10.0, 1.0, 10.0, 1.0}};
  serving::schedule_two_batches(busy, busy, 0.0, 0.0, t);
  CHECK(t.end_ns == Approx(41.0));
}

TEST_CASE("split_batch halves prefill chunks and alternates decodes per rank") {
  serving::Batch b;
  b.clear(2);
  b.entries = {{0, 7, 100, true, true},
               {1, 1, 50, false, true},
               {2, 1, 60, false, true},
               {3, 1, 70, false, true},
               {4, 4, 0, true, false}};
  b.rank_begin = {0, 4, 5};
  b.prefill_tokens = 11;
  b.decode_tokens = 3;
  serving::Batch h0;
  serving::Batch h1;
  serving::split_batch(b, h0, h1);
  // Rank 0: the chunk of 7 gives 4 (context 100, no token) and 3 (context 104, emits); decodes go to the
  // half with fewer tokens: 1 -> half 1 (3 < 4), 2 -> half 0 (4 = 4: half 0), 3 -> half 1.
  REQUIRE(h0.rank_begin == std::vector<int>{0, 2, 3});
  REQUIRE(h1.rank_begin == std::vector<int>{0, 3, 4});
  CHECK(h0.entries[0].tokens == 4);
  CHECK(h0.entries[0].context == 100);
  CHECK_FALSE(h0.entries[0].emits_token);
  CHECK(h1.entries[0].tokens == 3);
  CHECK(h1.entries[0].context == 104);
  CHECK(h1.entries[0].emits_token);
  CHECK(h1.entries[1].request == 1);
  CHECK(h0.entries[1].request == 2);
  CHECK(h1.entries[2].request == 3);
  CHECK(h0.prefill_tokens + h1.prefill_tokens == 11);
  CHECK(h0.decode_tokens + h1.decode_tokens == 3);
  CHECK(h0.entries[2].tokens == 2);  // rank 1's chunk of 4: 2 + 2
}

TEST_CASE("node-limited routing: DeepSeek-V3's 4-of-8 groups reach at most 4 nodes under EPLB's packing") {
  // EP32 on 4 nodes, 288 slots: EPLB's hierarchical policy packs the 8 groups two to a node and keeps
  // every replica on its group's node, so a token's experts, replicas included, span <= 4 nodes.
  core::Rng rng(11);
  boost::random::uniform_01<double> u;
  std::vector<double> weight(256);
  for (double& w : weight) {
    w = std::pow(u(rng), 3.0);  // skewed loads: plenty of replication
  }
  const policies::eplb::Result r = policies::eplb::rebalance_experts(weight, 1, 256, 288, 8, 4, 32);
  const policies::LayerPlacement placement = policies::make_layer_placement(256, 32, 9, r.phy2log, r.phyrank);
  workloads::TokenSampler sampler(256, 8, 8, 4);
  sampler.set_weights(weight);
  std::vector<std::int32_t> token(8);
  int most = 0;
  for (int t = 0; t < 5000; ++t) {
    sampler.draw(rng, token);
    std::set<int> nodes;
    for (const int e : token) {
      for (const int s : placement.replicas(e)) {
        nodes.insert(placement.gpu_of_slot(s) / 8);
      }
    }
    most = std::max(most, static_cast<int>(nodes.size()));
  }
  CHECK(most <= 4);
  CHECK(most >= 3);  // the limit binds: tokens do spread over several nodes
}

namespace {
// A token model whose weights change with the step (as topics drift): sample_tokens reads the step only.
class SteppedTokenModel final : public workloads::RoutingSource {
 public:
  explicit SteppedTokenModel(int experts) : weights_(static_cast<std::size_t>(experts)) {}
  int num_moe_layers() const override { return 2; }
  int num_experts() const override { return static_cast<int>(weights_.size()); }
  int top_k() const override { return 4; }
  void set_step(std::int64_t step) {
    for (std::size_t e = 0; e < weights_.size(); ++e) {
      weights_[e] = 1.0 + static_cast<double>((e * 7 + static_cast<std::size_t>(step)) % 11);
    }
  }
  void sample(int /*layer*/, std::int64_t /*tokens*/, std::span<std::int32_t> /*out*/) override {}
  bool sample_tokens(int /*layer*/, workloads::TokenSampler& sampler, core::Rng& rng,
                     std::span<std::int32_t> out) override {
    sampler.set_weights(weights_);
    const auto k = static_cast<std::size_t>(sampler.top_k());
    for (std::size_t i = 0; i < out.size() / k; ++i) {
      sampler.draw(rng, out.subspan(i * k, k));
    }
    return true;
  }

 private:
  std::vector<double> weights_;
};
}  // namespace

TEST_CASE("a fan-out estimator that follows another gives exactly what it computes alone") {
  // Two-batch overlap's halves: the same seed, the same steps; a step can leave one half without tokens
  // in a layer (it does not re-sample then), after which the two draw differently and must not share.
  const models::ModelSpec m = moe(32, 4, 4, 2, 2);
  const hardware::Topology topo(2, 4, hardware::LinkSpec{100.0, 1.0}, hardware::LinkSpec{10.0, 2.0});
  core::Rng place_rng(5);
  const policies::LayerPlacement placement = shuffled_placement(32, 8, place_rng);
  SteppedTokenModel source(32);
  serving::FanoutEstimator lead(m, topo, 64, 3, core::Rng(9));
  serving::FanoutEstimator alone(m, topo, 64, 3, core::Rng(9));
  serving::FanoutEstimator follower(m, topo, 64, 3, core::Rng(9));
  follower.follow(lead);
  std::vector<std::int32_t> slots(32);
  std::vector<std::int32_t> experts(32);
  std::vector<std::int32_t> none(32, 0);
  for (std::int64_t step = 0; step < 40; ++step) {
    source.set_step(step);
    for (int layer = 0; layer < 2; ++layer) {
      for (std::size_t s = 0; s < slots.size(); ++s) {
        slots[s] = static_cast<std::int32_t>((s * 3 + static_cast<std::size_t>(step + layer)) % 5);
        experts[static_cast<std::size_t>(placement.phy2log[s])] = slots[s];
      }
      lead.update(layer, step, slots, experts, placement, source);
      // The second half has no tokens in layer 1 at step 9, when it was due: from then on it draws alone.
      const bool empty = step == 9 && layer == 1;
      follower.update(layer, step, slots, empty ? none : experts, placement, source);
      alone.update(layer, step, slots, empty ? none : experts, placement, source);
      for (Eigen::Index g = 0; g < 8; ++g) {
        INFO(fmt::format("step {} layer {} gpu {}", step, layer, g));
        CHECK(follower.gpu_fanout()(g) == alone.gpu_fanout()(g));
      }
      for (Eigen::Index n = 0; n < 2; ++n) {
        CHECK(follower.node_fanout()(n) == alone.node_fanout()(n));
      }
    }
  }
}

TEST_CASE("DeepEP normal prices a dispatch and combine pair exactly as two exchanges") {
  const hardware::Topology topo(2, 4, hardware::LinkSpec{100.0, 1.0}, hardware::LinkSpec{10.0, 2.0});
  const hardware::EpCommConfig comm = hardware::algorithm_defaults(hardware::DispatchAlgorithm::deepep_normal);
  hardware::DeepEpNormal pair(topo, comm);
  hardware::DeepEpNormal single(topo, comm);
  Eigen::ArrayXd share(8);
  Eigen::ArrayXd pairs(8);
  Eigen::ArrayXd gpu_fan(8);
  Eigen::ArrayXd node_fan(2);
  share << 0.1, 0.2, 0.05, 0.15, 0.1, 0.1, 0.2, 0.1;
  pairs << 30, 0, 12, 55, 7, 19, 40, 3;
  gpu_fan << 0.9, 1.0, 0.7, 0.8, 0.95, 0.6, 0.85, 1.0;
  node_fan << 0.5, 0.7;
  Eigen::MatrixXd matrix = Eigen::MatrixXd::Zero(8, 8);
  for (int o = 0; o < 8; ++o) {
    matrix.row(o) = (share(o) * pairs).matrix().transpose();
  }
  for (const bool per_origin : {false, true}) {
    const hardware::EpTraffic t{&share, &pairs, per_origin ? &matrix : nullptr, &gpu_fan, &node_fan, true};
    const hardware::CollectiveModel::ExchangePair p = pair.ep_exchange_pair(t, 7168.0, 14336.0);
    const hardware::CollectiveCost combine = single.ep_exchange(t, 14336.0);
    const hardware::CollectiveCost dispatch = single.ep_exchange(t, 7168.0);
    CHECK(p.combine.time_ns == combine.time_ns);
    CHECK(p.combine.intra_bytes == combine.intra_bytes);
    CHECK(p.combine.inter_bytes == combine.inter_bytes);
    CHECK(p.dispatch.time_ns == dispatch.time_ns);
    CHECK(p.dispatch.intra_bytes == dispatch.intra_bytes);
    CHECK(p.dispatch.inter_bytes == dispatch.inter_bytes);
    CHECK((pair.traffic().send_inter == single.traffic().send_inter).all());
  }
}

TEST_CASE("an EP group inside a mesh node sees only its own GPUs' links, a switch port stays whole") {
  // 8 x MI300X: a GPU's port is 7 peer links of 64 x 0.75 GB/s; EP4 on one node reaches 3 of them.
  const hardware::NetworkGraph mesh(cluster("mi300x-8", 1, 8));
  const hardware::Topology whole = serving::group_topology(mesh.port_view(), 8);
  const hardware::Topology half = serving::group_topology(mesh.port_view(), 4);
  CHECK(whole.intra().mesh_peers == 7);
  CHECK(whole.intra().effective_gbps() == Approx(7 * 64.0 * 0.75));
  CHECK(half.intra().mesh_peers == 3);
  CHECK(half.intra().effective_gbps() == Approx(3 * 64.0 * 0.75));
  CHECK(hardware::among(half.intra(), 2).effective_gbps() == Approx(64.0 * 0.75));
  // NVSwitch: every GPU one port to the switch, whatever the group.
  const hardware::NetworkGraph hgx(cluster("hgx-h200", 1, 8));
  CHECK(serving::group_topology(hgx.port_view(), 4).intra().effective_gbps() ==
        Approx(hgx.port_view().intra().effective_gbps()));
  CHECK(serving::group_topology(hgx.port_view(), 4).intra().mesh_peers == 0);
}
