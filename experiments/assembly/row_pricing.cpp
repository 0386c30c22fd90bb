#include "experiments/assembly/row_pricing.hpp"

#include <fmt/format.h>

#include "calibration/measured_work.hpp"
#include "core/error.hpp"
#include "hardware/collectives.hpp"
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

double price_collective_row_us(const calibration::Measurement& row, const hardware::ClusterSpec& base) {
  const hardware::ClusterSpec cluster = cluster_for_row(base, row);
  const hardware::NetworkGraph graph(cluster);
  const int n = row.gpus;
  const double b = row.bytes;
  Eigen::MatrixXd m = Eigen::MatrixXd::Zero(n, n);
  switch (row.op) {
    case calibration::MeasuredOp::all_reduce:
      if (n <= cluster.gpus_per_node) {
        return hardware::intra_node_all_reduce_ns(graph.port_view().intra(), n, b) / 1e3;
      }
      m = hardware::all_reduce_traffic(n, b);
      break;
    case calibration::MeasuredOp::all_to_all:
      m.setConstant(b / n);
      if (n > 16) {
        const hardware::Topology topo = graph.port_view();
        hardware::PerGpuTraffic t;
        hardware::aggregate_traffic(topo, m, t);
        return hardware::all_to_all_cost(topo, t).time_ns / 1e3;
      }
      break;
    case calibration::MeasuredOp::send_recv:
      for (int g = 0; g < n; ++g) {
        m(g, (g + 1) % n) += b;
      }
      break;
    default:
      throw core::Error(
          fmt::format("line {}: {} is a kernel, not a collective", row.line, calibration::op_name(row.op)));
  }
  hardware::CollectiveCoster coster(graph);
  return coster.cost(m).time_ns / 1e3;
}

}  // namespace epsim::experiments
