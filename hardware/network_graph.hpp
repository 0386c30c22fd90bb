// SPDX-License-Identifier: Apache-2.0
#pragma once
// The cluster as a graph of GPUs, scale-up switches, PCIe switches, host root complexes, NICs and
// leaf/spine switches; every physical link is two arcs (one per direction, each with the link's
// bandwidth). Each GPU pair's route is the fewest-hop path that does not transit another GPU (ties:
// the first found in insertion order, so routes are deterministic). Routes are found on demand (a
// breadth-first search from the source that stops once its destinations are reached) and kept only for
// the pairs asked for: a run asks for its EP groups' pairs and its transfers', so memory grows with GPUs,
// never with GPUs squared. The port model's summary needs only the largest latencies, walked once.
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "hardware/cluster_spec.hpp"
#include "hardware/topology.hpp"

namespace epsim::hardware {

enum class VertexKind : std::uint8_t { gpu, scale_up_switch, pcie_switch, host, nic, leaf, spine };

class NetworkGraph {
 public:
  struct Arc {
    int from = 0;
    int to = 0;
    double bw_gbps = 0.0;     ///< bytes per ns
    double latency_ns = 0.0;  ///< added by traversing the arc
  };
  struct Vertex {
    VertexKind kind = VertexKind::gpu;
    int node = -1;  ///< -1 for switches shared by nodes
  };

  explicit NetworkGraph(const ClusterSpec& spec);

  int num_gpus() const { return gpus_; }
  int gpus_per_node() const { return gpus_per_node_; }
  int node_of(int gpu) const { return gpu / gpus_per_node_; }
  std::size_t num_vertices() const { return vertices_.size(); }
  const Vertex& vertex(int v) const { return vertices_[static_cast<std::size_t>(v)]; }
  int num_arcs() const { return static_cast<int>(arcs_.size()); }
  const Arc& arc(int id) const { return arcs_[static_cast<std::size_t>(id)]; }
  double collective_overhead_ns() const { return overhead_ns_; }

  /// Arc ids from `src` to `dst` (empty when src == dst). The span stays valid as long as the graph.
  std::span<const int> path(int src, int dst) const;
  /// Sum of the latencies of the path's arcs.
  double path_latency_ns(int src, int dst) const;
  /// Finds the routes between every two of the GPUs [first_gpu, first_gpu + gpus) at once (one search per
  /// source), so that a group's path() calls find them kept.
  void prepare_routes(int first_gpu, int gpus) const;
  /// Routes kept so far (memory: a run keeps its groups' pairs, not every pair).
  std::size_t routes_kept() const;

  /// The two-level summary the fast port model uses: per-GPU scale-up and scale-out bandwidth, and
  /// the largest intra- and inter-node path latency (plus the collective overhead) as alphas.
  Topology port_view() const;

 private:
  std::uint64_t pair(int src, int dst) const {
    return static_cast<std::uint64_t>(src) * static_cast<std::uint64_t>(gpus_) + static_cast<std::uint64_t>(dst);
  }
  struct Route {
    std::vector<int> arcs;
    double latency_ns = 0.0;
  };
  struct RouteCache {
    std::mutex mutex;
    std::unordered_map<std::uint64_t, Route> routes;  // node-based: a kept route never moves
  };
  /// Breadth-first search state from one source GPU: the arc that discovered each vertex.
  struct Search {
    std::vector<int> pred;  // -1: not reached
    std::vector<int> queue;
    std::size_t head = 0;
  };
  int add_vertex(VertexKind kind, int node);
  void add_link(int a, int b, const LinkSpec& link);
  // Node `node`'s scale-up fabric (switch, mesh or PCIe tree); returns its host vertex, -1 if none yet.
  int add_scale_up(const ClusterSpec& s, int node);
  // Node `node`'s NICs (one per GPU behind its own PCIe link, or shared ones on the host), appended to `nics`.
  void add_nics(const ClusterSpec& s, int node, int host, std::vector<int>& nics);
  // The leaves the NICs attach to and the spine over them.
  void add_scale_out(const ClusterSpec& s, const std::vector<int>& nics);
  void index_arcs();
  void start_search(Search& s, int src) const;
  /// Expands the search until GPU `dst` is reached (true) or nothing is left (false).
  bool search_until(Search& s, int src, int dst) const;
  Route route_of(const Search& s, int src, int dst) const;
  const Route& kept_route(int src, int dst) const;
  [[noreturn]] void unreachable(int src, int dst) const;
  double route_latency_ns(std::span<const int> arcs) const;
  void find_largest_latencies();

  int gpus_;
  int gpus_per_node_;
  double overhead_ns_;
  LinkSpec scale_up_;
  bool mesh_;  // scale-up links join GPU pairs (Infinity Fabric), not GPUs to a switch
  double inter_bw_per_gpu_;
  std::vector<Vertex> vertices_;
  std::vector<Arc> arcs_;
  std::vector<int> out_begin_;     // [vertex] -> offset into out_arcs_ (size vertices + 1)
  std::vector<int> out_arcs_;      // each vertex's arcs in insertion order
  double intra_latency_ns_ = 0.0;  // the largest route latency within a node
  double inter_latency_ns_ = 0.0;  // and between nodes
  std::shared_ptr<RouteCache> routes_ = std::make_shared<RouteCache>();  // shared by copies: the graph never changes
};

}  // namespace epsim::hardware
