// SPDX-License-Identifier: Apache-2.0
#include "hardware/network_graph.hpp"

#include <algorithm>
#include <mutex>

#include "core/error.hpp"

namespace epsim::hardware {

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
      mesh_(s.scale_up == ScaleUp::mesh),
      inter_bw_per_gpu_(s.nic_link.effective_gbps() * s.nics_per_node / s.gpus_per_node) {
  // GPUs first, so GPU g is vertex g.
  for (int g = 0; g < gpus_; ++g) {
    add_vertex(VertexKind::gpu, g / s.gpus_per_node);
  }
  const bool multi_node = s.nodes > 1 && s.scale_out != ScaleOut::none;
  std::vector<int> nics;  // [node * nics_per_node + i]
  for (int n = 0; n < s.nodes; ++n) {
    const int host = add_scale_up(s, n);
    if (multi_node) {
      add_nics(s, n, host, nics);
    }
  }
  if (multi_node) {
    add_scale_out(s, nics);
  }
  index_arcs();
  find_largest_latencies();
}

int NetworkGraph::add_scale_up(const ClusterSpec& s, int n) {
  const int first = n * s.gpus_per_node;
  int host = -1;
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
  return host;
}

void NetworkGraph::add_nics(const ClusterSpec& s, int n, int host, std::vector<int>& nics) {
  const int first = n * s.gpus_per_node;
  const bool nic_per_gpu = s.nics_per_node == s.gpus_per_node;
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

void NetworkGraph::add_scale_out(const ClusterSpec& s, const std::vector<int>& nics) {
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

void NetworkGraph::index_arcs() {
  // Out-arcs per vertex in insertion order: the order a search examines them in, which breaks ties.
  out_begin_.assign(vertices_.size() + 1, 0);
  for (const Arc& a : arcs_) {
    ++out_begin_[static_cast<std::size_t>(a.from) + 1];
  }
  for (std::size_t v = 0; v < vertices_.size(); ++v) {
    out_begin_[v + 1] += out_begin_[v];
  }
  out_arcs_.resize(arcs_.size());
  std::vector<int> next(out_begin_.begin(), out_begin_.end() - 1);
  for (std::size_t a = 0; a < arcs_.size(); ++a) {
    out_arcs_[static_cast<std::size_t>(next[static_cast<std::size_t>(arcs_[a].from)]++)] = static_cast<int>(a);
  }
}

void NetworkGraph::start_search(Search& s, int src) const {
  s.pred.assign(vertices_.size(), -1);
  s.queue.clear();
  s.queue.push_back(src);
  s.head = 0;
}

// Breadth first, examining each vertex's arcs in insertion order; a GPU other than the source is reached
// but never left (routes do not transit GPUs). A vertex's arc is fixed when it is reached, so a search
// stopped early gives the routes a full one would.
bool NetworkGraph::search_until(Search& s, int src, int dst) const {
  const auto reached = [&](int v) { return v == src || s.pred[static_cast<std::size_t>(v)] >= 0; };
  if (dst >= 0 && reached(dst)) {  // dst < 0: search everything
    return true;
  }
  while (s.head < s.queue.size()) {
    const int u = s.queue[s.head++];
    if (u != src && vertices_[static_cast<std::size_t>(u)].kind == VertexKind::gpu) {
      continue;
    }
    bool found = false;
    for (int k = out_begin_[static_cast<std::size_t>(u)]; k < out_begin_[static_cast<std::size_t>(u) + 1]; ++k) {
      const int a = out_arcs_[static_cast<std::size_t>(k)];
      const int t = arcs_[static_cast<std::size_t>(a)].to;
      if (!reached(t)) {
        s.pred[static_cast<std::size_t>(t)] = a;
        s.queue.push_back(t);
        found = found || t == dst;
      }
    }
    if (found) {
      return true;
    }
  }
  return false;
}

NetworkGraph::Route NetworkGraph::route_of(const Search& s, int src, int dst) const {
  Route r;
  for (int v = dst; v != src;) {
    const int a = s.pred[static_cast<std::size_t>(v)];
    r.arcs.push_back(a);
    v = arcs_[static_cast<std::size_t>(a)].from;
  }
  std::reverse(r.arcs.begin(), r.arcs.end());
  r.latency_ns = route_latency_ns(r.arcs);
  return r;
}

void NetworkGraph::unreachable(int src, int dst) const {
  throw core::Error("network graph: GPU " + std::to_string(dst) + " is unreachable from GPU " + std::to_string(src));
}

void NetworkGraph::find_largest_latencies() {
  // The port model's alphas: the largest intra- and inter-node route latency. Every pair is walked (a
  // full search per source, latencies summed along the search tree in route order), none is kept.
  Search s;
  std::vector<double> latency(vertices_.size(), 0.0);
  for (int src = 0; src < gpus_; ++src) {
    start_search(s, src);
    search_until(s, src, -1);  // to the end
    latency[static_cast<std::size_t>(src)] = 0.0;
    for (std::size_t k = 1; k < s.queue.size(); ++k) {  // queue order: a vertex after its predecessor
      const auto v = static_cast<std::size_t>(s.queue[k]);
      const Arc& a = arcs_[static_cast<std::size_t>(s.pred[v])];
      latency[v] = latency[static_cast<std::size_t>(a.from)] + a.latency_ns;
    }
    for (int dst = 0; dst < gpus_; ++dst) {
      if (dst == src) {
        continue;
      }
      if (s.pred[static_cast<std::size_t>(dst)] < 0) {
        unreachable(src, dst);
      }
      double& most = node_of(src) == node_of(dst) ? intra_latency_ns_ : inter_latency_ns_;
      most = std::max(most, latency[static_cast<std::size_t>(dst)]);
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

void NetworkGraph::prepare_routes(int first_gpu, int gpus) const {
  Search s;
  std::lock_guard lock(routes_->mutex);
  for (int src = first_gpu; src < first_gpu + gpus; ++src) {
    start_search(s, src);
    for (int dst = first_gpu; dst < first_gpu + gpus; ++dst) {
      if (routes_->routes.contains(pair(src, dst))) {
        continue;
      }
      if (dst != src && !search_until(s, src, dst)) {
        unreachable(src, dst);
      }
      routes_->routes.emplace(pair(src, dst), dst == src ? Route{} : route_of(s, src, dst));
    }
  }
}

const NetworkGraph::Route& NetworkGraph::kept_route(int src, int dst) const {
  // Callers from several threads may share a graph (copies share the routes).
  std::lock_guard lock(routes_->mutex);
  const auto it = routes_->routes.find(pair(src, dst));
  if (it != routes_->routes.end()) {
    return it->second;
  }
  Search s;
  start_search(s, src);
  if (dst != src && !search_until(s, src, dst)) {
    unreachable(src, dst);
  }
  return routes_->routes.emplace(pair(src, dst), dst == src ? Route{} : route_of(s, src, dst)).first->second;
}

std::size_t NetworkGraph::routes_kept() const {
  std::lock_guard lock(routes_->mutex);
  return routes_->routes.size();
}

std::span<const int> NetworkGraph::path(int src, int dst) const {
  return kept_route(src, dst).arcs;
}

double NetworkGraph::path_latency_ns(int src, int dst) const {
  return kept_route(src, dst).latency_ns;
}

Topology NetworkGraph::port_view() const {
  const int nodes = gpus_ / gpus_per_node_;
  LinkSpec intra{scale_up_.effective_gbps(), (intra_latency_ns_ + overhead_ns_) / 1e3, 1.0, scale_up_.nvls_gbps};
  intra.nccl_hw = scale_up_.nccl_hw;
  intra.nccl_ll_max_gbps = scale_up_.nccl_ll_max_gbps;
  if (mesh_ && gpus_per_node_ > 1) {
    // A GPU's port on a mesh is its links to every peer: spread traffic (an all-to-all, a collective's
    // channels over disjoint rings) uses them all at once, where a single pair link would charge one.
    intra.mesh_peers = gpus_per_node_ - 1;
    intra.bw_gbps *= intra.mesh_peers;
  }
  return Topology(
      nodes, gpus_per_node_, intra,
      LinkSpec{inter_bw_per_gpu_ > 0.0 ? inter_bw_per_gpu_ : 1.0, (inter_latency_ns_ + overhead_ns_) / 1e3});
}

}  // namespace epsim::hardware
