// SPDX-License-Identifier: Apache-2.0
#pragma once
// `epsim cost --collective KIND`: the model's price of one collective at a list of sizes, so users can
// hold the communication model against their own measurements (nccl-tests, DeepEP's tests). Each kind
// is priced the way a run prices it:
// - dispatch / combine: one EP exchange (hardware/collective_model.hpp) under uniform routing over a
//   linear placement (experts / ep per GPU), with the algorithm's model (NCCL ports or graph, DeepEP
//   normal, DeepEP low latency) and its wire datatype; DeepEP normal's fan-out from a fixed-seed sample
//   of tokens (sim/fanout_estimator.hpp) so the output is deterministic;
// - all_reduce: the algorithm and protocol NCCL's tuning model picks (ring, tree, NVLS; LL, LL128,
//   Simple; hardware/nccl_tuning.hpp), inside a node as the step executor's TP all-reduce and across
//   nodes, as calibrate prices a measured all-reduce (experiments/assembly/row_pricing.hpp);
// - all_gather, send_recv: on the same model: the network graph up to graph_max_gpus GPUs, per-GPU ports
//   beyond, from per-GPU inputs (memory linear in the GPUs; the graph is refused beyond 1,024).
// Sizes are bounded (1 .. 2^24 tokens, 1 byte .. 1 TiB per GPU, 4,096 sizes): out of bounds, inf or nan
// is a usage error.
// Usage errors are std::invalid_argument naming the option.
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "hardware/cluster_spec.hpp"
#include "hardware/ep_comm.hpp"
#include "hardware/hardware_config.hpp"

namespace epsim::experiments {

enum class CollectiveKind : std::uint8_t { dispatch, combine, all_reduce, all_gather, send_recv };

struct CollectiveRequest {
  CollectiveKind kind = CollectiveKind::send_recv;
  hardware::ClusterSpec cluster;
  hardware::CollectiveConfig collectives;  ///< port or graph model for the nccl exchange
  hardware::EpCommConfig comm;             ///< algorithm and its fitted costs
  // dispatch / combine
  std::vector<std::int64_t> tokens;  ///< tokens per GPU (rows)
  std::int64_t hidden = 0;
  int top_k = 0;
  int experts = 0;
  int ep = 0;
  int groups = 1;
  int topk_group = 1;
  hardware::WireDtype dtype = hardware::WireDtype::bf16;
  int fanout_tokens = 4096;  ///< tokens sampled for DeepEP normal's node / GPU fan-out
  // all_reduce, all_gather, send_recv
  std::vector<double> bytes;  ///< bytes per GPU (rows)
  int gpus = 0;               ///< all_reduce / all_gather: GPUs 0 .. gpus-1
  int peer = 1;               ///< send_recv: GPU 0 -> GPU peer
};

struct CollectiveRow {
  double size = 0.0;  ///< tokens per GPU or bytes per GPU
  double time_us = 0.0;
  double gbps = 0.0;           ///< achieved bandwidth (busbw for all_reduce / all_gather, bytes sent per GPU otherwise)
  double nvlink_bytes = 0.0;   ///< all GPUs together, inside nodes
  double network_bytes = 0.0;  ///< all GPUs together, between nodes
  std::string
      via;  ///< what priced it: nccl, deepep_normal, graph, ports; all_reduce: NCCL's choice (ring/LL, nvls/Simple ...)
};

/// One row per size; throws std::invalid_argument when the request does not fit its cluster.
std::vector<CollectiveRow> price_collective(const CollectiveRequest& r);

/// The rows as a table (a header line saying what was priced) or CSV.
std::string collective_table(const CollectiveRequest& r, const std::vector<CollectiveRow>& rows, bool csv);

/// Whether `epsim cost` arguments ask for a collective (--collective given).
bool wants_collective(const std::vector<std::string>& args);

/// `epsim cost --collective ...`: parses, prices, prints. Writes config warnings to `err`.
int collective_cost_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

/// The collective mode's part of `epsim cost --help`.
std::string collective_cost_help();

}  // namespace epsim::experiments
