// SPDX-License-Identifier: Apache-2.0
#include "experiments/assembly/row_pricing.hpp"

#include <fmt/format.h>

#include "calibration/measured_work.hpp"
#include "core/error.hpp"
#include "hardware/all_to_all.hpp"
#include "hardware/collectives.hpp"
#include "hardware/nccl_all_reduce.hpp"
#include "hardware/network_graph.hpp"
#include "hardware/roofline.hpp"

namespace epsim::experiments {

double price_kernel_row_us(const calibration::Measurement& row, const hardware::GpuSpec& gpu) {
  return hardware::roofline_cost(gpu, calibration::kernel_work(gpu, row)).total_ns / 1e3;
}

hardware::ClusterSpec cluster_for_row(const hardware::ClusterSpec& base, const calibration::Measurement& row) {
  hardware::ClusterSpec c = base;
  c.gpus_per_node = row.gpus_per_node;
  c.nodes = (row.gpus + row.gpus_per_node - 1) / row.gpus_per_node;
  if (c.scale_out == hardware::ScaleOut::rail) {
    c.nics_per_node = c.gpus_per_node;  // a rail-optimised node has one NIC per GPU
  }
  if (c.nodes > 1 && c.scale_out == hardware::ScaleOut::none) {
    throw core::Error(
        fmt::format("line {}: {} GPUs at {} per node cross nodes, but cluster \"{}\" has no scale-out "
                    "fabric",
                    row.line, row.gpus, row.gpus_per_node, base.name));
  }
  return c;
}

int whole_node_gpus(const hardware::NetworkGraph& graph, int gpus) {
  const int per_node = graph.gpus_per_node();
  return gpus <= per_node ? gpus : (gpus + per_node - 1) / per_node * per_node;
}

std::unique_ptr<hardware::CollectiveModel> group_collective_model(std::shared_ptr<const hardware::NetworkGraph> graph,
                                                                  const hardware::CollectiveConfig& cfg, int gpus) {
  const int group = whole_node_gpus(*graph, gpus);
  const int per_node = std::min(group, graph->gpus_per_node());
  const hardware::Topology ports = graph->port_view();
  const hardware::Topology topo(group / per_node, per_node, ports.intra(), ports.inter());
  hardware::CollectiveConfig model = cfg;
  model.exchange_curve = nullptr;  // the model alone: measured corrections are the caller's
  model.all_reduce_curve = nullptr;
  return hardware::make_collective_model(model, topo, model.uses_graph(group) ? std::move(graph) : nullptr, 0);
}

hardware::CollectiveCost all_reduce_cost(const hardware::NetworkGraph& graph, int gpus, double bytes,
                                         hardware::NcclCost* choice) {
  const hardware::Topology ports = graph.port_view();
  const hardware::NcclCost nccl = hardware::nccl_all_reduce_on(ports, gpus, bytes);
  if (choice != nullptr) {
    *choice = nccl;
  }
  const auto n = static_cast<double>(gpus);
  const int per_node = graph.gpus_per_node();
  const int nodes = (gpus + per_node - 1) / per_node;
  hardware::CollectiveCost c;
  c.time_ns = nccl.time_ns;
  // NVLS: every GPU pushes its buffer into the switch once; NVLS tree: so inside each node, and each node
  // below the root sends one buffer up and receives one down. Ring and tree: every GPU sends about 2 (n-1)/n
  // of its buffer; across nodes a ring leaves each node with 2 (n-1)/n of a buffer, a tree as NVLS tree.
  if (nccl.algo == hardware::NcclAlgo::nvls || nccl.algo == hardware::NcclAlgo::nvls_tree) {
    c.inter_bytes = 2.0 * (nodes - 1) * bytes;
    c.intra_bytes = n * bytes;
    return c;
  }
  const double total = 2.0 * (n - 1.0) * bytes;
  c.inter_bytes = nodes == 1                              ? 0.0
                  : nccl.algo == hardware::NcclAlgo::ring ? nodes * 2.0 * (n - 1.0) / n * bytes
                                                          : 2.0 * (nodes - 1) * bytes;
  c.intra_bytes = total - c.inter_bytes;
  return c;
}

double price_collective_row_us(const calibration::Measurement& row, const hardware::ClusterSpec& base) {
  const auto graph = std::make_shared<const hardware::NetworkGraph>(cluster_for_row(base, row));
  const int n = row.gpus;
  const double b = row.bytes;
  switch (row.op) {
    case calibration::MeasuredOp::all_reduce:
      return all_reduce_cost(*graph, n, b).time_ns / 1e3;
    case calibration::MeasuredOp::all_to_all: {
      // b / n from every GPU to every other: share 1 / n x pairs 1 x b, on the model a run picks for n GPUs.
      const int group = whole_node_gpus(*graph, n);
      Eigen::ArrayXd share = Eigen::ArrayXd::Zero(group);
      Eigen::ArrayXd pairs = Eigen::ArrayXd::Zero(group);
      share.head(n).setConstant(1.0 / n);
      pairs.head(n).setConstant(1.0);
      return group_collective_model(graph, hardware::CollectiveConfig{}, n)
                 ->all_to_all_separable(share, pairs, b)
                 .time_ns /
             1e3;
    }
    case calibration::MeasuredOp::send_recv: {
      Eigen::MatrixXd m = Eigen::MatrixXd::Zero(n, n);
      for (int g = 0; g < n; ++g) {
        m(g, (g + 1) % n) += b;
      }
      hardware::CollectiveCoster coster(*graph);
      return coster.cost(m).time_ns / 1e3;
    }
    default:
      throw core::Error(
          fmt::format("line {}: {} is a kernel, not a collective", row.line, calibration::op_name(row.op)));
  }
}

}  // namespace epsim::experiments
