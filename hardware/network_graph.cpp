#include "hardware/network_graph.hpp"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <functional>
#include <mutex>

#include "core/error.hpp"

namespace epsim::hardware {
namespace {

struct ArcId {
  int id = 0;
};
using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, boost::no_property, ArcId>;
using EdgeDesc = boost::graph_traits<Graph>::edge_descriptor;

// Keeps every arc except those leaving a GPU other than the search's source: routes never transit a GPU.
struct NoGpuTransit {
  const Graph* g = nullptr;
  const std::vector<NetworkGraph::Vertex>* vertices = nullptr;
  int source = 0;
  bool operator()(const EdgeDesc& e) const {
    const auto from = static_cast<int>(boost::source(e, *g));
    return from == source || (*vertices)[static_cast<std::size_t>(from)].kind != VertexKind::gpu;
  }
};

}  // namespace

int NetworkGraph::add_vertex(VertexKind kind, int node) {
  vertices_.push_back(Vertex{kind, node});
  return static_cast<int>(vertices_.size()) - 1;
}

void NetworkGraph::add_link(int a, int b, const LinkSpec& link) {
  // Arcs carry what transfers achieve, not the signalling rate.
  arcs_.push_back(Arc{a, b, link.effective_gbps(), link.latency_us * 1e3});
  arcs_.push_back(Arc{b, a, link.effective_gbps(), link.latency_us * 1e3});
}

NetworkGraph::NetworkGraph(const ClusterSpec& s)
    : gpus_(s.num_gpus()),
      gpus_per_node_(s.gpus_per_node),
      overhead_ns_(s.collective_overhead_us * 1e3),
      scale_up_(s.scale_up_link),
      inter_bw_per_gpu_(s.nic_link.effective_gbps() * s.nics_per_node / s.gpus_per_node) {
  // GPUs first, so GPU g is vertex g.
  for (int g = 0; g < gpus_; ++g) {
    add_vertex(VertexKind::gpu, g / s.gpus_per_node);
  }
  const bool multi_node = s.nodes > 1 && s.scale_out != ScaleOut::none;
  const bool nic_per_gpu = s.nics_per_node == s.gpus_per_node;
  std::vector<int> nics;  // [node * nics_per_node + i]
  for (int n = 0; n < s.nodes; ++n) {
    const int first = n * s.gpus_per_node;
    int host = -1;
    // Scale-up fabric.
    if (s.scale_up == ScaleUp::switch_fabric) {
      const int sw = add_vertex(VertexKind::scale_up_switch, n);
      for (int i = 0; i < s.gpus_per_node; ++i) {
        add_link(first + i, sw, s.scale_up_link);
      }
    } else if (s.scale_up == ScaleUp::mesh) {
      for (int i = 0; i < s.gpus_per_node; ++i) {
        for (int j = i + 1; j < s.gpus_per_node; ++j) {
          add_link(first + i, first + j, s.scale_up_link);
        }
      }
    } else {
      host = add_vertex(VertexKind::host, n);
      for (int i = 0; i < s.gpus_per_node; i += s.gpus_per_pcie_switch) {
        if (s.gpus_per_pcie_switch == 1) {
          add_link(first + i, host, s.scale_up_link);
          continue;
        }
        const int sw = add_vertex(VertexKind::pcie_switch, n);
        for (int k = 0; k < s.gpus_per_pcie_switch; ++k) {
          add_link(first + i + k, sw, s.scale_up_link);
        }
        add_link(sw, host, s.pcie_link);
      }
    }
    if (!multi_node) {
      continue;
    }
    // NICs: one per GPU behind its own PCIe link, or shared ones on the host.
    for (int i = 0; i < s.nics_per_node; ++i) {
      const int nic = add_vertex(VertexKind::nic, n);
      nics.push_back(nic);
      if (nic_per_gpu) {
        add_link(first + i, nic, s.pcie_link);
      } else {
        if (host < 0) {
          host = add_vertex(VertexKind::host, n);
          for (int g = 0; g < s.gpus_per_node; ++g) {
            add_link(first + g, host, s.pcie_link);
          }
        }
        add_link(host, nic, s.pcie_link);
      }
    }
  }
  if (multi_node) {
    // Leaves, then one non-blocking spine whose links carry a leaf's downlink bandwidth / oversubscription.
    std::vector<int> leaf_of_nic(nics.size());
    std::vector<int> leaves;
    std::vector<int> leaf_ports;
    if (s.scale_out == ScaleOut::rail) {
      for (int r = 0; r < s.nics_per_node; ++r) {
        leaves.push_back(add_vertex(VertexKind::leaf, -1));
        leaf_ports.push_back(s.nodes);
      }
      for (std::size_t k = 0; k < nics.size(); ++k) {
        leaf_of_nic[k] = static_cast<int>(k % static_cast<std::size_t>(s.nics_per_node));
      }
    } else {
      for (std::size_t k = 0; k < nics.size(); ++k) {
        const auto leaf = static_cast<int>(k / static_cast<std::size_t>(s.leaf_radix));
        if (leaf == static_cast<int>(leaves.size())) {
          leaves.push_back(add_vertex(VertexKind::leaf, -1));
          leaf_ports.push_back(0);
        }
        leaf_of_nic[k] = leaf;
        ++leaf_ports[static_cast<std::size_t>(leaf)];
      }
    }
    for (std::size_t k = 0; k < nics.size(); ++k) {
      add_link(nics[k], leaves[static_cast<std::size_t>(leaf_of_nic[k])], s.nic_link);
    }
    if (leaves.size() > 1) {
      const int spine = add_vertex(VertexKind::spine, -1);
      for (std::size_t l = 0; l < leaves.size(); ++l) {
        const LinkSpec up{s.nic_link.bw_gbps * leaf_ports[l] / s.oversubscription, s.nic_link.latency_us,
                          s.nic_link.efficiency};
        add_link(leaves[l], spine, up);
      }
    }
  }
  find_largest_latencies();
}

void NetworkGraph::find_largest_latencies() {
  // The port model's alphas: the largest intra- and inter-node route latency (routes walked, not kept).
  each_route([&](int src, int dst, std::span<const int> arcs) {
    double& most = node_of(src) == node_of(dst) ? intra_latency_ns_ : inter_latency_ns_;
    most = std::max(most, route_latency_ns(arcs));
  });
}

// Breadth-first search from every GPU without GPU transit; visit(src, dst, arcs) sees each pair's route
// from source to destination (src == dst: no arcs), sources in order, destinations in order.
void NetworkGraph::each_route(const std::function<void(int, int, std::span<const int>)>& visit) const {
  Graph g(vertices_.size());
  for (std::size_t a = 0; a < arcs_.size(); ++a) {
    boost::add_edge(static_cast<std::size_t>(arcs_[a].from), static_cast<std::size_t>(arcs_[a].to),
                    ArcId{static_cast<int>(a)}, g);
  }
  std::vector<EdgeDesc> pred(vertices_.size());
  std::vector<bool> reached(vertices_.size());
  std::vector<int> reversed;
  std::vector<int> forward;
  for (int src = 0; src < gpus_; ++src) {
    NoGpuTransit keep{&g, &vertices_, src};
    boost::filtered_graph<Graph, NoGpuTransit> fg(g, keep);
    std::fill(reached.begin(), reached.end(), false);
    reached[static_cast<std::size_t>(src)] = true;
    // Record tree edges: the predecessor arc of each newly discovered vertex.
    struct Visitor : boost::default_bfs_visitor {
      std::vector<EdgeDesc>* pred;
      std::vector<bool>* reached;
      const Graph* graph;
      void tree_edge(const EdgeDesc& e, const boost::filtered_graph<Graph, NoGpuTransit>& /*fg*/) const {
        const auto t = boost::target(e, *graph);
        (*pred)[t] = e;
        (*reached)[t] = true;
      }
    };
    Visitor vis;
    vis.pred = &pred;
    vis.reached = &reached;
    vis.graph = &g;
    boost::breadth_first_search(fg, static_cast<std::size_t>(src), boost::visitor(vis));
    for (int dst = 0; dst < gpus_; ++dst) {
      if (dst == src) {
        visit(src, dst, {});
        continue;
      }
      if (!reached[static_cast<std::size_t>(dst)]) {
        throw core::Error("network graph: GPU " + std::to_string(dst) + " is unreachable from GPU " +
                          std::to_string(src));
      }
      reversed.clear();
      for (auto v = static_cast<std::size_t>(dst); v != static_cast<std::size_t>(src);) {
        const EdgeDesc e = pred[v];
        reversed.push_back(g[e].id);
        v = boost::source(e, g);
      }
      forward.assign(reversed.rbegin(), reversed.rend());
      visit(src, dst, forward);
    }
  }
}

double NetworkGraph::route_latency_ns(std::span<const int> arcs) const {
  double lat = 0.0;
  for (const int a : arcs) {  // source to destination
    lat += arcs_[static_cast<std::size_t>(a)].latency_ns;
  }
  return lat;
}

const NetworkGraph::Routes& NetworkGraph::routes() const {
  // Every pair's path: GPUs squared in memory, so only made when a path is asked for (the graph collective
  // model, transfers), once, whichever thread asks first.
  std::call_once(routes_->once, [this] {
    Routes& r = *routes_;
    const auto pairs = static_cast<std::size_t>(gpus_) * static_cast<std::size_t>(gpus_);
    r.begin.assign(pairs + 1, 0);
    r.latency.assign(pairs, 0.0);
    each_route([&](int src, int dst, std::span<const int> arcs) {
      const std::size_t p = pair(src, dst);
      r.begin[p] = r.arcs.size();
      r.arcs.insert(r.arcs.end(), arcs.begin(), arcs.end());
      r.latency[p] = route_latency_ns(arcs);
    });
    r.begin[pairs] = r.arcs.size();
  });
  return *routes_;
}

std::span<const int> NetworkGraph::path(int src, int dst) const {
  const Routes& r = routes();
  const std::size_t p = pair(src, dst);
  return {r.arcs.data() + r.begin[p], static_cast<std::size_t>(r.begin[p + 1] - r.begin[p])};
}

double NetworkGraph::path_latency_ns(int src, int dst) const {
  return routes().latency[pair(src, dst)];
}

Topology NetworkGraph::port_view() const {
  const int nodes = gpus_ / gpus_per_node_;
  return Topology(
      nodes, gpus_per_node_,
      LinkSpec{scale_up_.effective_gbps(), (intra_latency_ns_ + overhead_ns_) / 1e3, 1.0, scale_up_.nvls_gbps},
      LinkSpec{inter_bw_per_gpu_ > 0.0 ? inter_bw_per_gpu_ : 1.0, (inter_latency_ns_ + overhead_ns_) / 1e3});
}

}  // namespace epsim::hardware
