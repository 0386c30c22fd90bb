#pragma once
// The cluster as a Boost graph of GPUs, scale-up switches, PCIe switches, host root complexes, NICs and
// leaf/spine switches; every physical link is two arcs (one per direction, each with the link's
// bandwidth). Each GPU pair's route is the fewest-hop path that does not transit another GPU (ties:
// the first found in insertion order, so routes are deterministic). All pairs' routes (GPUs squared in
// memory) are made on the first path() asked for; the port model's summary needs only their latencies.
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
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

  /// Arc ids from `src` to `dst` (empty when src == dst).
  std::span<const int> path(int src, int dst) const;
  /// Sum of the latencies of the path's arcs.
  double path_latency_ns(int src, int dst) const;

  /// The two-level summary the fast port model uses: per-GPU scale-up and scale-out bandwidth, and
  /// the largest intra- and inter-node path latency (plus the collective overhead) as alphas.
  Topology port_view() const;

 private:
  std::size_t pair(int src, int dst) const {
    return static_cast<std::size_t>(src) * static_cast<std::size_t>(gpus_) + static_cast<std::size_t>(dst);
  }
  struct Routes {
    std::once_flag once;
    std::vector<std::uint64_t> begin;  // [pair] -> offset into arcs (size pairs + 1)
    std::vector<int> arcs;
    std::vector<double> latency;
  };
  int add_vertex(VertexKind kind, int node);
  void add_link(int a, int b, const LinkSpec& link);
  void each_route(const std::function<void(int, int, std::span<const int>)>& visit) const;
  double route_latency_ns(std::span<const int> arcs) const;
  void find_largest_latencies();
  const Routes& routes() const;

  int gpus_;
  int gpus_per_node_;
  double overhead_ns_;
  LinkSpec scale_up_;
  double inter_bw_per_gpu_;
  std::vector<Vertex> vertices_;
  std::vector<Arc> arcs_;
  double intra_latency_ns_ = 0.0;                                // the largest route latency within a node
  double inter_latency_ns_ = 0.0;                                // and between nodes
  std::shared_ptr<Routes> routes_ = std::make_shared<Routes>();  // shared by copies: the graph never changes
};

}  // namespace epsim::hardware
