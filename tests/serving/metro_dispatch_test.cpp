// SPDX-License-Identifier: Apache-2.0
// metro's all-gather dispatch in the step executor, priced by hand on a 2-node port model and checked
// against the graph coster's all-gather on a preset cluster; even routing's all-to-all is unchanged.
#include <toml++/toml.h>
#include <catch2/catch.hpp>

#include "hardware/cluster_spec.hpp"
#include "hardware/collective_model.hpp"
#include "hardware/collectives.hpp"
#include "hardware/network_graph.hpp"
#include "hardware/roofline.hpp"
#include "policies/even_routing.hpp"
#include "policies/metro/metro_routing.hpp"
#include "sim/step_executor.hpp"
#include "tests/support/tiny_model.hpp"

using namespace epsim;

namespace {

// Always the same token-expert pairs per expert, whatever the step's tokens.
class FixedRouting final : public workloads::RoutingSource {
 public:
  explicit FixedRouting(std::vector<std::int32_t> counts) : counts_(std::move(counts)) {}
  int num_moe_layers() const override { return 1; }
  int num_experts() const override { return static_cast<int>(counts_.size()); }
  int top_k() const override { return 2; }
  void sample(int, std::int64_t, std::span<std::int32_t> out) override {
    std::copy(counts_.begin(), counts_.end(), out.begin());
  }

 private:
  std::vector<std::int32_t> counts_;
};

// Keeps the last MoE layer's record (its spans are not kept).
class LastLayer final : public serving::Observer {
 public:
  void on_layer(const serving::LayerRecord& r) override { rec = r; }
  serving::LayerRecord rec;
};

// One entry per token: decode tokens (or prefill chunks of one token) on each DP rank.
serving::Batch batch_of(const std::vector<int>& tokens_per_rank, bool prefill,
                        std::vector<serving::RequestState>& requests) {
  serving::Batch b;
  b.clear(static_cast<int>(tokens_per_rank.size()));
  for (std::size_t r = 0; r < tokens_per_rank.size(); ++r) {
    for (int i = 0; i < tokens_per_rank[r]; ++i) {
      serving::RequestState s;
      s.spec.id = static_cast<std::int64_t>(requests.size());
      b.entries.push_back(serving::BatchEntry{.request = static_cast<int>(requests.size()),
                                              .tokens = 1,
                                              .context = 10,
                                              .prefill = prefill,
                                              .emits_token = !prefill});
      requests.push_back(s);
    }
    b.rank_begin[r + 1] = static_cast<int>(b.entries.size());
  }
  (prefill ? b.prefill_tokens : b.decode_tokens) = static_cast<std::int64_t>(b.entries.size());
  return b;
}

struct Priced {
  serving::LayerRecord rec;
  serving::StepRecord res;
};

Priced price(policies::RoutingPolicy& routing, const std::vector<int>& tokens_per_rank, bool prefill,
             const hardware::Topology& topo, const policies::Placement& placement,
             std::shared_ptr<const hardware::NetworkGraph> graph = nullptr) {
  const models::ModelSpec m = test::tiny_model(2);
  hardware::RooflineCostModel cost(test::paper_gpu(),
                                   std::vector<double>(static_cast<std::size_t>(topo.num_gpus()), 1.0));
  FixedRouting source({5, 3, 3, 1});
  std::unique_ptr<hardware::CollectiveModel> collectives =
      graph ? std::unique_ptr<hardware::CollectiveModel>(
                  std::make_unique<hardware::GraphCollectives>(graph, 0, topo.num_gpus()))
            : std::make_unique<hardware::PortCollectives>(topo);
  serving::StepExecutor exec(m, cost, 0, topo, placement, routing, source, 0.0, *collectives);
  std::vector<serving::RequestState> requests;
  const serving::Batch batch = batch_of(tokens_per_rank, prefill, requests);
  LastLayer last;
  serving::Observer* obs[] = {&last};
  Priced p;
  REQUIRE(exec.run(batch, requests, 0, 0, 0, obs, p.res));
  p.rec = last.rec;
  return p;
}

policies::Placement one_expert_per_gpu() {
  return policies::Placement{{policies::make_layer_placement(4, 4, 1, {0, 1, 2, 3})}};
}

}  // namespace

TEST_CASE("metro's all-gather dispatch on the port model, priced by hand") {
  // 2 nodes x 2 GPUs: NVLink 100 GB/s, 2 us; network 10 GB/s, 5 us. Decode tokens per GPU 3, 1, 2, 0;
  // token-expert pairs 5, 3, 3, 1 on experts 0..3, one expert per GPU (so metro routes like even split
  // and only the dispatch differs). A token's hidden state is 1024 x 2 = 2048 bytes.
  const hardware::Topology topo(2, 2, hardware::LinkSpec{100.0, 2.0}, hardware::LinkSpec{10.0, 5.0});
  const policies::Placement placement = one_expert_per_gpu();
  const std::vector<int> tokens{3, 1, 2, 0};
  const double hs = 2048.0;

  // All-to-all (even split's dispatch, and everyone's combine): GPU g sends share_g = tokens_g / 6 of
  // every expert's pairs. Sends intra / inter: 1.5, 5/6, 1/3, 0 / 2, 2/3, 8/3, 0 pair payloads; receives
  // intra / inter: 5/6, 1.5, 0, 1/3 / 5/3, 1, 2, 2/3. Busiest inter port: GPU 2 sending 8/3.
  const double a2a_ns = 5000.0 + 8.0 / 3.0 * hs / 10.0;
  const double a2a_intra = (1.5 + 5.0 / 6.0 + 1.0 / 3.0) * hs;
  const double a2a_inter = (2.0 + 2.0 / 3.0 + 8.0 / 3.0) * hs;
  // All-gather: GPU g sends its tokens_g hidden states to its 1 node peer and its 2 off-node peers:
  // sends intra 3, 1, 2, 0 and inter 6, 2, 4, 0; receives intra 1, 3, 0, 2 (its node peer's tokens)
  // and inter 2, 2, 4, 4 (the other node's). Busiest inter port: GPU 0 sending 6 tokens' states.
  const double ag_ns = 5000.0 + 6.0 * hs / 10.0;
  const double ag_intra = 6.0 * hs;
  const double ag_inter = 12.0 * hs;

  policies::EvenRouting even;
  const Priced e = price(even, tokens, false, topo, placement);
  REQUIRE(e.rec.dispatch_ns == Approx(a2a_ns));
  REQUIRE(e.rec.combine_ns == Approx(a2a_ns));
  REQUIRE(e.rec.intra_bytes == Approx(2.0 * a2a_intra));
  REQUIRE(e.rec.inter_bytes == Approx(2.0 * a2a_inter));

  policies::MetroRouting metro;
  const Priced m = price(metro, tokens, false, topo, placement);
  REQUIRE(m.rec.dispatch_ns == Approx(ag_ns));
  REQUIRE(m.rec.combine_ns == Approx(a2a_ns));
  REQUIRE(m.rec.intra_bytes == Approx(ag_intra + a2a_intra));
  REQUIRE(m.rec.inter_bytes == Approx(ag_inter + a2a_inter));
  REQUIRE(m.res.comm_ns == Approx(ag_ns + a2a_ns));
  // Everything else in the step is the same: the step is longer by the dispatch difference.
  REQUIRE(m.res.duration_ns - e.res.duration_ns == Approx(ag_ns - a2a_ns));

  // A prefill step under the default phases = "decode" is even split's, all-to-all and all.
  const Priced mp = price(metro, tokens, true, topo, placement);
  const Priced ep = price(even, tokens, true, topo, placement);
  REQUIRE(mp.rec.dispatch_ns == ep.rec.dispatch_ns);
  REQUIRE(mp.res.duration_ns == ep.res.duration_ns);
  REQUIRE(ep.rec.dispatch_ns == Approx(a2a_ns));
}

TEST_CASE("metro's all-gather dispatch on the network graph is the graph coster's all-gather") {
  const toml::table over = toml::parse("nodes = 1");
  core::ParamTable t({core::ParamLayer{&over, "test"},
                      core::ParamLayer{&hardware::cluster_presets().get("hgx-h200", "", ""), "hgx-h200"}},
                     "cluster");
  const auto graph = std::make_shared<const hardware::NetworkGraph>(hardware::parse_cluster_spec(t));
  REQUIRE(graph->num_gpus() == 8);
  const hardware::Topology topo(1, 8, hardware::LinkSpec{450.0, 1.0}, hardware::LinkSpec{50.0, 4.0});
  const policies::Placement placement{
      {policies::make_layer_placement(4, 8, 1, {0, 1, 2, 3, 0, 1, 2, 3})}};  // every expert twice
  const std::vector<int> tokens{3, 1, 2, 0, 4, 1, 1, 2};

  policies::EvenRouting even;
  policies::MetroRouting metro;
  const Priced e = price(even, tokens, false, topo, placement, graph);
  const Priced m = price(metro, tokens, false, topo, placement, graph);

  // The reference: the all-gather of each GPU's hidden states, then the all-to-all of metro's routing
  // (GPU g sends share_g of the pairs every GPU received).
  Eigen::ArrayXd bytes(8);
  for (int g = 0; g < 8; ++g) {
    bytes(g) = tokens[static_cast<std::size_t>(g)] * 2048.0;
  }
  hardware::CollectiveCoster reference(*graph);
  const hardware::CollectiveCost ag = reference.cost(hardware::all_gather_traffic(bytes));
  REQUIRE(ag.intra_bytes == Approx(bytes.sum() * 7.0));
  policies::MetroRouting routing;
  policies::RoutedLoad routed{std::vector<std::int32_t>(8, 0), false};
  const std::vector<std::int32_t> counts{5, 3, 3, 1};
  routing.route(policies::StepLayerLoad{counts, 0, 14}, placement.layers[0], routed);
  Eigen::ArrayXd pairs(8);
  for (int g = 0; g < 8; ++g) {
    pairs(g) = routed.slot_tokens[static_cast<std::size_t>(g)];
  }
  const Eigen::MatrixXd combine_traffic = (bytes / 14.0).matrix() * pairs.matrix().transpose();
  const hardware::CollectiveCost combine = reference.cost(combine_traffic);
  REQUIRE(m.rec.dispatch_ns == Approx(ag.time_ns));
  REQUIRE(m.rec.combine_ns == Approx(combine.time_ns));
  REQUIRE(m.rec.intra_bytes == Approx(ag.intra_bytes + combine.intra_bytes));
  REQUIRE(m.rec.inter_bytes == 0.0);
  // Even split keeps its all-to-all both ways.
  REQUIRE(e.rec.dispatch_ns == Approx(e.rec.combine_ns));
  REQUIRE(e.rec.dispatch_ns != Approx(m.rec.dispatch_ns));
}
