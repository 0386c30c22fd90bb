// SPDX-License-Identifier: Apache-2.0
#include "policies/metro/min_activated_exact.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>

#include "core/error.hpp"

namespace epsim::policies {

namespace {
using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
using Graph = boost::adjacency_list<
    boost::vecS, boost::vecS, boost::directedS, boost::no_property,
    boost::property<boost::edge_capacity_t, std::int64_t,
                    boost::property<boost::edge_residual_capacity_t, std::int64_t,
                                    boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;
using Edge = Graph::edge_descriptor;
using Vertex = Graph::vertex_descriptor;
}  // namespace

// Vertices: source 0, expert e at 1 + e, GPU g at 1 + E + g, sink 1 + E + G.
struct MinActivatedExact::Network {
  const LayerPlacement* placement = nullptr;  // identity of the placement it was built for
  int num_experts = 0;
  int num_gpus = 0;
  int slots_per_gpu = 0;
  std::vector<int> phy2log;  // its content, to notice a changed placement at the same address
  Graph graph;
  Vertex source = 0;
  Vertex sink = 0;
  std::vector<Edge> from_source;  // [expert]: capacity 1 if it has tokens, else 0
  std::vector<Edge> to_sink;      // [gpu]: capacity K
  std::vector<int> arc_begin;     // expert e's expert -> GPU arcs are [arc_begin[e], arc_begin[e + 1])
  std::vector<Edge> arcs;
  std::vector<int> arc_gpu;

  bool built_for(const LayerPlacement& p) const {
    return placement == &p && num_experts == p.num_experts && num_gpus == p.num_gpus &&
           slots_per_gpu == p.slots_per_gpu && phy2log == p.phy2log;
  }

  Edge add_arc(Vertex from, Vertex to, std::int64_t capacity) {
    const Edge e = boost::add_edge(from, to, graph).first;
    const Edge r = boost::add_edge(to, from, graph).first;
    boost::put(boost::edge_capacity, graph, e, capacity);
    boost::put(boost::edge_capacity, graph, r, 0);
    boost::put(boost::edge_reverse, graph, e, r);
    boost::put(boost::edge_reverse, graph, r, e);
    return e;
  }

  void build(const LayerPlacement& p) {
    placement = &p;
    num_experts = p.num_experts;
    num_gpus = p.num_gpus;
    slots_per_gpu = p.slots_per_gpu;
    phy2log = p.phy2log;
    const auto vertices = static_cast<std::size_t>(num_experts) + static_cast<std::size_t>(num_gpus) + 2;
    graph.clear();  // (not `graph = Graph(n)`: BGL copies on assignment)
    for (std::size_t v = 0; v < vertices; ++v) {
      boost::add_vertex(graph);
    }
    source = 0;
    sink = vertices - 1;
    from_source.clear();
    to_sink.clear();
    arc_begin.assign(1, 0);
    arcs.clear();
    arc_gpu.clear();
    const auto gpu_vertex = [&](int g) { return 1 + static_cast<Vertex>(num_experts) + static_cast<Vertex>(g); };
    for (int e = 0; e < num_experts; ++e) {
      from_source.push_back(add_arc(source, 1 + static_cast<Vertex>(e), 0));
      // One arc per GPU holding a replica: two replicas on one GPU activate the same GPU once.
      const std::size_t first = arcs.size();
      for (const int s : p.replicas(e)) {
        const int g = p.gpu_of_slot(s);
        if (std::find(arc_gpu.begin() + static_cast<std::ptrdiff_t>(first), arc_gpu.end(), g) == arc_gpu.end()) {
          arcs.push_back(add_arc(1 + static_cast<Vertex>(e), gpu_vertex(g), 1));
          arc_gpu.push_back(g);
        }
      }
      arc_begin.push_back(static_cast<int>(arcs.size()));
    }
    for (int g = 0; g < num_gpus; ++g) {
      to_sink.push_back(add_arc(gpu_vertex(g), sink, 0));
    }
  }
};

MinActivatedExact::MinActivatedExact() = default;
MinActivatedExact::~MinActivatedExact() = default;
MinActivatedExact::MinActivatedExact(MinActivatedExact&&) noexcept = default;
MinActivatedExact& MinActivatedExact::operator=(MinActivatedExact&&) noexcept = default;

MinActivatedExact::Network& MinActivatedExact::network_for(const LayerPlacement& placement) {
  for (const auto& n : networks_) {
    if (n->placement == &placement) {
      if (!n->built_for(placement)) {
        n->build(placement);
      }
      return *n;
    }
  }
  // Bounded: a simulation has one placement per MoE layer; beyond that, old addresses are stale.
  if (networks_.size() >= 1024) {
    networks_.clear();
  }
  networks_.push_back(std::make_unique<Network>());
  networks_.back()->build(placement);
  return *networks_.back();
}

bool MinActivatedExact::feasible(Network& net, std::span<const std::int32_t> expert_tokens, int active,
                                 int max_activated) {
  ++probes_;
  for (int e = 0; e < net.num_experts; ++e) {
    boost::put(boost::edge_capacity, net.graph, net.from_source[static_cast<std::size_t>(e)],
               expert_tokens[static_cast<std::size_t>(e)] > 0 ? 1 : 0);
  }
  for (const Edge& t : net.to_sink) {
    boost::put(boost::edge_capacity, net.graph, t, max_activated);
  }
  const std::int64_t flow = boost::push_relabel_max_flow(net.graph, net.source, net.sink);
  return flow == active;
}

void MinActivatedExact::take_assignment(const Network& net, std::span<const std::int32_t> expert_tokens,
                                        const LayerPlacement& placement) {
  std::fill(expert_slot_.begin(), expert_slot_.end(), -1);
  for (int e = 0; e < net.num_experts; ++e) {
    if (expert_tokens[static_cast<std::size_t>(e)] <= 0) {
      continue;
    }
    int gpu = -1;
    for (int a = net.arc_begin[static_cast<std::size_t>(e)]; a < net.arc_begin[static_cast<std::size_t>(e) + 1]; ++a) {
      // A saturated unit arc carries the expert's one unit of flow.
      if (boost::get(boost::edge_residual_capacity, net.graph, net.arcs[static_cast<std::size_t>(a)]) == 0) {
        gpu = net.arc_gpu[static_cast<std::size_t>(a)];
        break;
      }
    }
    int slot = -1;
    for (const int s : placement.replicas(e)) {
      if (placement.gpu_of_slot(s) == gpu && (slot < 0 || s < slot)) {
        slot = s;
      }
    }
    expert_slot_[static_cast<std::size_t>(e)] = slot;
  }
}

int MinActivatedExact::solve(std::span<const std::int32_t> expert_tokens, const LayerPlacement& placement,
                             int upper_bound) {
  probes_ = 0;
  expert_slot_.assign(static_cast<std::size_t>(placement.num_experts), -1);
  // Lower bound: the active experts spread perfectly, and no GPU below the experts only it can take.
  forced_per_gpu_.assign(static_cast<std::size_t>(placement.num_gpus), 0);
  int active = 0;
  for (int e = 0; e < placement.num_experts; ++e) {
    if (expert_tokens[static_cast<std::size_t>(e)] <= 0) {
      continue;
    }
    ++active;
    const std::span<const int> slots = placement.replicas(e);
    const int g = placement.gpu_of_slot(slots[0]);
    if (std::all_of(slots.begin(), slots.end(), [&](int s) { return placement.gpu_of_slot(s) == g; })) {
      ++forced_per_gpu_[static_cast<std::size_t>(g)];
    }
  }
  if (active == 0) {
    return 0;
  }
  int lo = std::max((active + placement.num_gpus - 1) / placement.num_gpus,
                    *std::max_element(forced_per_gpu_.begin(), forced_per_gpu_.end()));
  int hi = upper_bound >= 0 ? upper_bound : active;
  if (hi < lo) {
    throw core::Error(fmt::format("min-activated routing: upper bound {} is below the lower bound {}", hi, lo));
  }
  Network& net = network_for(placement);
  int assigned = -1;  // the K whose flow expert_slot_ holds
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (feasible(net, expert_tokens, active, mid)) {
      hi = mid;
      take_assignment(net, expert_tokens, placement);
      assigned = mid;
    } else {
      lo = mid + 1;
    }
  }
  if (assigned != lo) {
    if (!feasible(net, expert_tokens, active, lo)) {
      throw core::Error(fmt::format("min-activated routing: upper bound {} is not feasible", lo));
    }
    take_assignment(net, expert_tokens, placement);
  }
  return lo;
}

}  // namespace epsim::policies
