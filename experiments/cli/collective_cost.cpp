// SPDX-License-Identifier: Apache-2.0
#include "experiments/cli/collective_cost.hpp"

#include <fmt/format.h>

#include <toml++/toml.h>
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <memory>
#include <numeric>
#include <optional>
#include <ostream>
#include <span>
#include <sstream>
#include <stdexcept>

#include "experiments/assembly/experiment_config.hpp"
#include "experiments/assembly/row_pricing.hpp"
#include "experiments/cli/command_line.hpp"
#include "hardware/collective_model.hpp"
#include "hardware/collectives.hpp"
#include "hardware/nccl_tuning.hpp"
#include "hardware/network_graph.hpp"
#include "models/model_spec.hpp"
#include "policies/placement.hpp"
#include "sim/fanout_estimator.hpp"
#include "sim/simulator.hpp"
#include "workloads/token_sampler.hpp"

namespace po = boost::program_options;

namespace epsim::experiments {
namespace {

struct KindName {
  CollectiveKind kind;
  std::string_view name;
};
constexpr std::array<KindName, 5> k_kinds{{{CollectiveKind::dispatch, "dispatch"},
                                           {CollectiveKind::combine, "combine"},
                                           {CollectiveKind::all_reduce, "all_reduce"},
                                           {CollectiveKind::all_gather, "all_gather"},
                                           {CollectiveKind::send_recv, "send_recv"}}};

std::string_view kind_name(CollectiveKind k) {
  return std::find_if(k_kinds.begin(), k_kinds.end(), [&](const KindName& n) { return n.kind == k; })->name;
}

bool is_exchange(CollectiveKind k) {
  return k == CollectiveKind::dispatch || k == CollectiveKind::combine;
}

[[noreturn]] void usage(const std::string& what) {
  throw std::invalid_argument(what);
}

// Far beyond any model (DeepSeek-V3: 7,168 and 256), small enough that bytes per token stay exact.
constexpr std::int64_t k_max_hidden = std::int64_t{1} << 20;
constexpr int k_max_experts = 1 << 16;

void check_exchange(const CollectiveRequest& r) {
  const int gpus = r.cluster.num_gpus();
  const int per_node = r.cluster.gpus_per_node;
  if (r.ep < 1 || r.ep > gpus) {
    usage(fmt::format("--ep: expected an EP group of 1 .. {} GPUs (the cluster's), got {}", gpus, r.ep));
  }
  if (r.ep > per_node && r.ep % per_node != 0) {
    usage(fmt::format("--ep: a group larger than a node spans whole nodes: expected a multiple of {} GPUs, got {}",
                      per_node, r.ep));
  }
  if (r.experts > k_max_experts) {
    usage(fmt::format("--experts: expected at most {} routed experts, got {}", k_max_experts, r.experts));
  }
  if (r.experts < 1 || r.experts % r.ep != 0) {
    usage(
        fmt::format("--ep: {} GPUs must divide --experts {} evenly (a linear placement puts experts / ep on each "
                    "GPU)",
                    r.ep, r.experts));
  }
  if (r.top_k < 1 || r.top_k > r.experts) {
    usage(fmt::format("--top-k: expected 1 .. {} (--experts), got {}", r.experts, r.top_k));
  }
  if (r.hidden < 1 || r.hidden > k_max_hidden) {
    usage(fmt::format("--hidden: expected a hidden size in [1, {}], got {}", k_max_hidden, r.hidden));
  }
  if (r.groups < 1 || r.experts % r.groups != 0) {
    usage(fmt::format("--groups: expected a divisor of --experts {}, got {}", r.experts, r.groups));
  }
  if (r.topk_group < 1 || r.topk_group > r.groups) {
    usage(fmt::format("--topk-group: expected 1 .. {} (--groups), got {}", r.groups, r.topk_group));
  }
  // The sampler draws top_k distinct experts from topk_group groups: they must hold enough.
  if (r.top_k > r.topk_group * (r.experts / r.groups)) {
    usage(fmt::format("--topk-group: {} groups of {} experts cannot hold --top-k {} distinct experts", r.topk_group,
                      r.experts / r.groups, r.top_k));
  }
}

// DeepEP normal's per-pair fan-out over the group's GPUs and nodes, from a fixed-seed sample of tokens
// under uniform routing (deterministic output, as the simulator's own estimate is per seed).
void sample_fanout(const CollectiveRequest& r, const hardware::Topology& group, Eigen::ArrayXd& gpu_fan,
                   Eigen::ArrayXd& node_fan) {
  models::ModelSpec m;
  m.name = "collective";
  m.hidden_size = r.hidden;
  m.num_layers = 1;
  m.routed_experts = r.experts;
  m.top_k = r.top_k;
  m.expert_groups = r.groups;
  m.topk_group = r.topk_group;
  workloads::TokenSampler sampler(r.experts, r.top_k, r.groups, r.topk_group);
  sampler.set_weights(std::vector<double>(static_cast<std::size_t>(r.experts), 1.0));
  core::Rng rng(2024);
  const auto k = static_cast<std::size_t>(r.top_k);
  std::vector<std::int32_t> sets(static_cast<std::size_t>(r.fanout_tokens) * k);
  for (std::size_t t = 0; t < static_cast<std::size_t>(r.fanout_tokens); ++t) {
    sampler.draw(rng, std::span<std::int32_t>(sets).subspan(t * k, k));
  }
  std::vector<int> linear(static_cast<std::size_t>(r.experts));
  std::iota(linear.begin(), linear.end(), 0);
  const policies::LayerPlacement placement =
      policies::make_layer_placement(r.experts, r.ep, r.experts / r.ep, std::move(linear));
  serving::FanoutEstimator est(m, group, 1, 1, core::Rng(1));
  est.compute(sets, placement, gpu_fan, node_fan);
}

std::vector<CollectiveRow> price_exchange(const CollectiveRequest& r) {
  check_exchange(r);
  auto graph = std::make_shared<const hardware::NetworkGraph>(r.cluster);
  const hardware::Topology group = serving::group_topology(graph->port_view(), r.ep);
  const auto model = hardware::make_collective_model(r.collectives, group, graph, 0, r.comm);
  Eigen::ArrayXd gpu_fan;
  Eigen::ArrayXd node_fan;
  if (r.comm.deduplicates()) {
    sample_fanout(r, group, gpu_fan, node_fan);
  }
  const double token_bytes = hardware::wire_bytes_per_token(r.dtype, r.hidden, r.comm.fp8_block);
  std::string via = hardware::algorithm_name(r.comm.algorithm);
  if (r.comm.algorithm == hardware::DispatchAlgorithm::nccl) {
    via += r.collectives.uses_graph(r.ep) ? "/graph" : "/ports";
  }
  const Eigen::ArrayXd share = Eigen::ArrayXd::Constant(r.ep, 1.0 / r.ep);
  std::vector<CollectiveRow> rows;
  for (const std::int64_t tokens : r.tokens) {
    // Uniform routing: every GPU receives its tokens x top_k pairs' worth from the whole group.
    const Eigen::ArrayXd pairs = Eigen::ArrayXd::Constant(r.ep, static_cast<double>(tokens * r.top_k));
    const hardware::EpTraffic t{&share, &pairs, nullptr, r.comm.deduplicates() ? &gpu_fan : nullptr,
                                r.comm.deduplicates() ? &node_fan : nullptr};
    const hardware::CollectiveCost c = model->ep_exchange(t, token_bytes);
    const double sent_per_gpu = (c.intra_bytes + c.inter_bytes) / r.ep;
    rows.push_back({static_cast<double>(tokens), c.time_ns / 1e3, c.time_ns > 0.0 ? sent_per_gpu / c.time_ns : 0.0,
                    c.intra_bytes, c.inter_bytes, via});
  }
  return rows;
}

// The graph model routes every GPU pair of its group (memory grows with their square): it prices groups
// up to this size, the port model any size.
constexpr int k_max_graph_gpus = 1024;

void check_graph_size(const CollectiveRequest& r, int group) {
  if (r.collectives.uses_graph(group) && group > k_max_graph_gpus) {
    usage(
        fmt::format("{} GPUs on the graph collective model (every GPU pair routed: memory grows with their "
                    "square): at most {}; give cluster.collective_model = \"ports\" or \"auto\"",
                    group, k_max_graph_gpus));
  }
}

// The model a run uses for a group of `gpus` GPUs: "graph" or "ports" (collective_model.hpp).
std::string model_name(const CollectiveRequest& r, int gpus) {
  return r.collectives.uses_graph(gpus) ? "graph" : "ports";
}

std::vector<CollectiveRow> price_all_reduce(const CollectiveRequest& r) {
  const int gpus = r.cluster.num_gpus();
  if (r.gpus < 2 || r.gpus > gpus) {
    usage(fmt::format("--gpus: all_reduce needs 2 .. {} GPUs (the cluster's), got {}", gpus, r.gpus));
  }
  const hardware::NetworkGraph graph(r.cluster);
  const auto n = static_cast<double>(r.gpus);
  const double ring_factor = 2.0 * (n - 1.0) / n;
  std::vector<CollectiveRow> rows;
  for (const double b : r.bytes) {
    // As a run's TP all-reduce inside a node and as calibrate prices an all-reduce row (row_pricing.hpp):
    // the algorithm and protocol NCCL's tuning model picks, named in `via`.
    hardware::NcclCost choice;
    const hardware::CollectiveCost c = all_reduce_cost(graph, r.gpus, b, &choice);
    rows.push_back({b, c.time_ns / 1e3, b / c.time_ns * ring_factor, c.intra_bytes, c.inter_bytes,
                    hardware::nccl_choice_name(choice.algo, choice.proto)});
  }
  return rows;
}

std::vector<CollectiveRow> price_on_graph(const CollectiveRequest& r) {
  const auto graph = std::make_shared<const hardware::NetworkGraph>(r.cluster);
  const int gpus = graph->num_gpus();
  const int per_node = graph->gpus_per_node();
  const bool gather = r.kind == CollectiveKind::all_gather;
  if (gather && (r.gpus < 2 || r.gpus > gpus)) {
    usage(fmt::format("--gpus: all_gather needs 2 .. {} GPUs (the cluster's), got {}", gpus, r.gpus));
  }
  if (!gather && (r.peer < 1 || r.peer >= gpus)) {
    usage(fmt::format("--peer: expected a GPU of the cluster other than 0 (1 .. {}), got {}", gpus - 1, r.peer));
  }
  // The group: the gathering GPUs, or GPU 0 to the peer, as whole nodes once past one node.
  const int group = whole_node_gpus(*graph, gather ? r.gpus : r.peer + 1);
  if (gather && group != r.gpus) {
    usage(
        fmt::format("--gpus: an all_gather larger than a node spans whole nodes: expected a multiple of {} GPUs, "
                    "got {}",
                    per_node, r.gpus));
  }
  check_graph_size(r, group);
  const auto model = group_collective_model(graph, r.collectives, group);
  // Per-GPU inputs only (memory grows with the GPUs): an all-gather's bytes per GPU, a send as the
  // separable traffic share(0) = 1 x pairs(peer) = 1.
  Eigen::ArrayXd share = Eigen::ArrayXd::Zero(group);
  Eigen::ArrayXd pairs = Eigen::ArrayXd::Zero(group);
  share(0) = 1.0;
  pairs(gather ? 0 : r.peer) = 1.0;
  std::vector<CollectiveRow> rows;
  for (const double b : r.bytes) {
    const hardware::CollectiveCost c =
        gather ? model->all_gather(Eigen::ArrayXd::Constant(group, b)) : model->all_to_all_separable(share, pairs, b);
    // nccl-tests' busbw: all_gather moves (n-1)/n of its n x bytes output through each GPU.
    const double moved = gather ? b * (r.gpus - 1) : b;
    rows.push_back({b, c.time_ns / 1e3, moved / c.time_ns, c.intra_bytes, c.inter_bytes, model_name(r, group)});
  }
  return rows;
}

// --- the command -------------------------------------------------------------------------------

// Bounds of the sizes priced: 16 Mi tokens per GPU and 1 TiB per GPU, far beyond any collective, and
// small enough that tokens x top_k x bytes per token and every byte count stay exact in a double.
constexpr std::int64_t k_max_tokens = std::int64_t{1} << 24;
constexpr double k_max_bytes = 1024.0 * 1024.0 * 1024.0 * 1024.0;
constexpr std::size_t k_max_sizes = 4096;

void check_count(std::size_t sizes, const char* option) {
  if (sizes > k_max_sizes) {
    usage(fmt::format("--{}: at most {} sizes, got more", option, k_max_sizes));
  }
}

std::vector<std::int64_t> parse_tokens(const std::string& s) {
  std::vector<std::int64_t> out;
  for (const std::string& item : split_commas(s)) {
    std::size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || v < 1 || v > k_max_tokens) {
      usage(fmt::format("--tokens: expected a comma-separated list of token counts in [1, {}], got \"{}\"",
                        k_max_tokens, item));
    }
    out.push_back(v);
    check_count(out.size(), "tokens");
  }
  return out;
}

// "1K,64K,1M,2G" -> bytes; K/M/G are binary, as nccl-tests' -b/-e.
std::vector<double> parse_bytes(const std::string& s) {
  std::vector<double> out;
  for (const std::string& item : split_commas(s)) {
    std::size_t used = 0;
    double v = 0.0;
    try {
      v = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    double scale = 1.0;
    if (used > 0 && used + 1 == item.size()) {
      const char suffix = static_cast<char>(std::toupper(static_cast<unsigned char>(item.back())));
      scale = suffix == 'K' ? 1024.0 : suffix == 'M' ? 1024.0 * 1024.0 : suffix == 'G' ? 1024.0 * 1024.0 * 1024.0 : 0.0;
      if (scale > 0.0) {
        ++used;
      }
    }
    const double bytes = std::round(v * scale);
    if (used == 0 || used != item.size() || !std::isfinite(v) || !(bytes >= 1.0 && bytes <= k_max_bytes)) {
      usage(
          fmt::format("--bytes: expected a comma-separated list of sizes from 1 byte to 1 TiB (bytes, or with K, "
                      "M, G binary suffixes: at most 1024G), got \"{}\"",
                      item));
    }
    out.push_back(bytes);
    check_count(out.size(), "bytes");
  }
  return out;
}

po::options_description collective_options() {
  po::options_description d("collective options (epsim cost --collective KIND)");
  d.add_options()("help,h", "show this help")("collective", po::value<std::string>(),
                                              "dispatch, combine, all_reduce, all_gather or send_recv")(
      "cluster", po::value<std::string>(), "cluster preset (epsim list clusters)")(
      "nodes", po::value<int>(), "with --cluster: nodes (default: enough for the collective's GPUs)")(
      "gpus-per-node", po::value<int>(), "with --cluster: GPUs per node (default: the preset's)")(
      "config", po::value<std::string>(), "an experiment instead of --cluster: its cluster, [communication] and model")(
      "set", po::value<std::vector<std::string>>()->composing(), "with --config: override a config key")(
      "model", po::value<std::string>(),
      "dispatch/combine: model preset giving --hidden, --top-k, --experts, --groups")(
      "tokens", po::value<std::string>(),
      "dispatch/combine: tokens per GPU, comma-separated (default 1,8,32,128,512,4096)")(
      "hidden", po::value<std::int64_t>(), "dispatch/combine: hidden size (default: the model's)")(
      "top-k", po::value<int>(), "dispatch/combine: experts per token (default: the model's)")(
      "experts", po::value<int>(), "dispatch/combine: routed experts (default: the model's)")(
      "ep", po::value<int>(), "dispatch/combine: EP group size in GPUs (default: the config's)")(
      "algorithm", po::value<std::string>(),
      "dispatch/combine: nccl, deepep_normal or deepep_low_latency "
      "(default: the config's, else nccl)")("dtype", po::value<std::string>(),
                                            "dispatch/combine: fp8 or bf16 on the wire (default: the algorithm's: "
                                            "DeepEP FP8 dispatch, BF16 combine; NCCL BF16)")(
      "groups", po::value<int>(),
      "dispatch/combine: expert groups of group-limited routing (default: the model's, else 1)")(
      "topk-group", po::value<int>(),
      "dispatch/combine: groups one token may use (default: the model's, else --groups)")(
      "bytes", po::value<std::string>(),
      "all_reduce/all_gather/send_recv: bytes per GPU, comma-separated, K/M/G "
      "binary suffixes (default 1K,64K,1M,16M,256M,1G)")("gpus", po::value<int>(),
                                                         "all_reduce/all_gather: GPUs 0 .. N-1 (default: one node's)")(
      "peer", po::value<int>(), "send_recv: GPU 0 sends to this GPU (default 1; another node's crosses the network)")(
      "csv", "print CSV");
  return d;
}

CollectiveKind parse_kind(const std::string& s) {
  for (const KindName& k : k_kinds) {
    if (k.name == s) {
      return k.kind;
    }
  }
  usage("--collective: unknown \"" + s + "\"; valid: dispatch, combine, all_reduce, all_gather, send_recv");
}

hardware::DispatchAlgorithm parse_algorithm(const std::string& s) {
  for (const auto a : {hardware::DispatchAlgorithm::nccl, hardware::DispatchAlgorithm::deepep_normal,
                       hardware::DispatchAlgorithm::deepep_low_latency}) {
    if (s == hardware::algorithm_name(a)) {
      return a;
    }
  }
  usage("--algorithm: unknown \"" + s + "\"; valid: nccl, deepep_normal, deepep_low_latency");
}

// Options that only some kinds read: giving one to another kind is a mistake worth naming.
void check_applicable(const po::variables_map& vm, CollectiveKind kind) {
  struct Scope {
    std::string_view option;
    std::string_view kinds;
    bool applies;
  };
  const bool ex = is_exchange(kind);
  const std::array<Scope, 13> scopes{
      {{"model", "dispatch and combine", ex},
       {"tokens", "dispatch and combine", ex},
       {"hidden", "dispatch and combine", ex},
       {"top-k", "dispatch and combine", ex},
       {"experts", "dispatch and combine", ex},
       {"ep", "dispatch and combine", ex},
       {"algorithm", "dispatch and combine", ex},
       {"dtype", "dispatch and combine", ex},
       {"groups", "dispatch and combine", ex},
       {"topk-group", "dispatch and combine", ex},
       {"bytes", "all_reduce, all_gather and send_recv", !ex},
       {"gpus", "all_reduce and all_gather", kind == CollectiveKind::all_reduce || kind == CollectiveKind::all_gather},
       {"peer", "send_recv", kind == CollectiveKind::send_recv}}};
  for (const Scope& s : scopes) {
    if (!s.applies && vm.count(std::string(s.option))) {
      usage(fmt::format("--{} applies to {}, not {}", s.option, s.kinds, kind_name(kind)));
    }
  }
}

hardware::ClusterSpec preset_cluster(const po::variables_map& vm, CollectiveRequest& r) {
  const std::string name = vm["cluster"].as<std::string>();
  if (const std::string m = hardware::cluster_presets().unknown_message(name); !m.empty()) {
    usage("--cluster: " + m);
  }
  const int per_node =
      vm.count("gpus-per-node") ? vm["gpus-per-node"].as<int>() : hardware::load_cluster_preset(name).gpus_per_node;
  if (per_node < 1) {
    usage(fmt::format("--gpus-per-node: expected a positive count, got {}", per_node));
  }
  // The GPUs the collective touches decide the default node count.
  if (r.gpus == 0) {
    r.gpus = per_node;
  }
  const int needed = is_exchange(r.kind) ? r.ep : r.kind == CollectiveKind::send_recv ? r.peer + 1 : r.gpus;
  const int nodes = vm.count("nodes") ? vm["nodes"].as<int>() : std::max(1, (needed + per_node - 1) / per_node);
  if (nodes < 1) {
    usage(fmt::format("--nodes: expected a positive count, got {}", nodes));
  }
  const toml::table over{{"nodes", nodes}, {"gpus_per_node", per_node}};
  core::ParamTable t({core::ParamLayer{&over, "--nodes/--gpus-per-node"},
                      core::ParamLayer{&hardware::cluster_presets().get(name, "--cluster", "cluster"),
                                       hardware::cluster_presets().label(name)}},
                     "cluster");
  return hardware::parse_cluster_spec(t);
}

CollectiveRequest make_request(const po::variables_map& vm, std::ostream& err) {
  CollectiveRequest r;
  r.kind = parse_kind(vm["collective"].as<std::string>());
  check_applicable(vm, r.kind);
  const bool config = vm.count("config") > 0;
  if (config == (vm.count("cluster") > 0)) {
    usage("give --cluster PRESET or --config TOML (one of them)");
  }
  if (config && (vm.count("nodes") || vm.count("gpus-per-node") || vm.count("model"))) {
    usage("--config gives the cluster and the model; drop --nodes, --gpus-per-node and --model");
  }
  if (!config && vm.count("set")) {
    usage("--set: applies with --config only");
  }
  r.peer = vm.count("peer") ? vm["peer"].as<int>() : 1;
  r.gpus = vm.count("gpus") ? vm["gpus"].as<int>() : 0;
  r.bytes = parse_bytes(vm.count("bytes") ? vm["bytes"].as<std::string>() : "1K,64K,1M,16M,256M,1G");
  r.tokens = parse_tokens(vm.count("tokens") ? vm["tokens"].as<std::string>() : "1,8,32,128,512,4096");
  std::optional<models::ModelSpec> model;
  if (config) {
    const auto sets = vm.count("set") ? vm["set"].as<std::vector<std::string>>() : std::vector<std::string>{};
    const ExperimentConfig cfg = load_config(vm["config"].as<std::string>(), sets);
    for (const std::string& w : cfg.warnings) {
      err << "epsim: warning: " << w << "\n";
    }
    r.cluster = cfg.cluster;
    r.collectives = cfg.collectives;
    r.comm = cfg.comm;
    r.ep = cfg.ep_size();
    model = cfg.model;
    r.gpus = r.gpus == 0 ? r.cluster.gpus_per_node : r.gpus;
  } else if (vm.count("model")) {
    const std::string name = vm["model"].as<std::string>();
    if (const std::string m = models::model_presets().unknown_message(name); !m.empty()) {
      usage("--model: " + m);
    }
    model = models::load_model_preset(name);
  }
  if (vm.count("ep")) {
    r.ep = vm["ep"].as<int>();
  }
  if (is_exchange(r.kind) && r.ep == 0) {
    usage("--ep: dispatch and combine need the EP group size (or --config, whose serving.ep_size it takes)");
  }
  const auto required = [&](const char* option, std::int64_t from_model) -> std::int64_t {
    if (vm.count(option)) {
      return option == std::string_view("hidden") ? vm[option].as<std::int64_t>() : vm[option].as<int>();
    }
    if (!model && is_exchange(r.kind)) {
      usage(fmt::format("--{}: required for {} without --model or --config", option, kind_name(r.kind)));
    }
    return from_model;
  };
  r.hidden = required("hidden", model ? model->hidden_size : 0);
  r.top_k = static_cast<int>(required("top-k", model ? model->top_k : 0));
  r.experts = static_cast<int>(required("experts", model ? model->routed_experts : 0));
  r.groups = vm.count("groups") ? vm["groups"].as<int>() : model ? static_cast<int>(model->expert_groups) : 1;
  r.topk_group = vm.count("topk-group")         ? vm["topk-group"].as<int>()
                 : model && !vm.count("groups") ? static_cast<int>(model->topk_group)
                                                : r.groups;
  if (vm.count("algorithm")) {
    const hardware::DispatchAlgorithm a = parse_algorithm(vm["algorithm"].as<std::string>());
    if (!config || a != r.comm.algorithm) {
      r.comm = hardware::algorithm_defaults(a);  // the config's fitted costs are for its own algorithm
    }
  } else if (!config) {
    r.comm = hardware::algorithm_defaults(hardware::DispatchAlgorithm::nccl);
  }
  r.dtype = r.kind == CollectiveKind::combine ? r.comm.combine_dtype : r.comm.dispatch_dtype;
  if (vm.count("dtype")) {
    const std::string d = vm["dtype"].as<std::string>();
    if (d != "fp8" && d != "bf16") {
      usage("--dtype: unknown \"" + d + "\"; valid: fp8, bf16");
    }
    r.dtype = d == "fp8" ? hardware::WireDtype::fp8 : hardware::WireDtype::bf16;
  }
  if (!config) {
    r.cluster = preset_cluster(vm, r);
  }
  return r;
}

}  // namespace

std::vector<CollectiveRow> price_collective(const CollectiveRequest& r) {
  switch (r.kind) {
    case CollectiveKind::dispatch:
    case CollectiveKind::combine:
      return price_exchange(r);
    case CollectiveKind::all_reduce:
      return price_all_reduce(r);
    case CollectiveKind::all_gather:
    case CollectiveKind::send_recv:
      return price_on_graph(r);
  }
  return {};
}

std::string collective_table(const CollectiveRequest& r, const std::vector<CollectiveRow>& rows, bool csv) {
  const bool ex = is_exchange(r.kind);
  const char* size = ex ? "tokens" : "bytes";
  std::string out;
  if (csv) {
    out = fmt::format("{},time_us,gbps,nvlink_bytes,network_bytes,via\n", size);
    for (const CollectiveRow& row : rows) {
      out += fmt::format("{},{},{},{},{},{}\n", row.size, row.time_us, row.gbps, row.nvlink_bytes, row.network_bytes,
                         row.via);
    }
    return out;
  }
  const std::string where = fmt::format("{} x {} GPUs of {}", r.cluster.nodes, r.cluster.gpus_per_node, r.cluster.name);
  if (ex) {
    out = fmt::format(
        "{} on {}: EP{}, {} ({} {} B/token), top-{} of {} experts, {} groups (limit {}); uniform routing, linear "
        "placement\n",
        kind_name(r.kind), where, r.ep, hardware::algorithm_name(r.comm.algorithm),
        r.dtype == hardware::WireDtype::fp8 ? "fp8" : "bf16",
        hardware::wire_bytes_per_token(r.dtype, r.hidden, r.comm.fp8_block), r.top_k, r.experts, r.groups,
        r.topk_group);
  } else if (r.kind == CollectiveKind::send_recv) {
    out = fmt::format("send_recv on {}: GPU 0 -> GPU {}; GB/s = bytes / time\n", where, r.peer);
  } else {
    out = fmt::format("{} on {}: GPUs 0 .. {}; GB/s = nccl-tests busbw\n", kind_name(r.kind), where, r.gpus - 1);
  }
  out += fmt::format("{:>12} {:>12} {:>10} {:>14} {:>14}  {}\n", size, "time us", "GB/s", "NVLink MB", "network MB",
                     "via");
  for (const CollectiveRow& row : rows) {
    out += fmt::format("{:>12} {:>12.2f} {:>10.2f} {:>14.3f} {:>14.3f}  {}\n", row.size, row.time_us, row.gbps,
                       row.nvlink_bytes / 1e6, row.network_bytes / 1e6, row.via);
  }
  if (ex) {
    out += "GB/s: bytes each GPU sends over time; MB: all GPUs together\n";
    if (r.comm.deduplicates() && r.comm.overlap_exchange_factor != 1.0) {
      out += fmt::format(
          "time: the exchange alone; beside the other half's compute under two-batch overlap it takes {}x "
          "(communication.overlap_exchange_factor)\n",
          r.comm.overlap_exchange_factor);
    }
  }
  return out;
}

bool wants_collective(const std::vector<std::string>& args) {
  return std::any_of(args.begin(), args.end(),
                     [](const std::string& a) { return a == "--collective" || a.starts_with("--collective="); });
}

int collective_cost_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const po::options_description d = collective_options();
  const po::variables_map vm = parse_command_line(args, d);
  if (vm.count("help")) {
    out << collective_cost_help();
    return 0;
  }
  const CollectiveRequest r = make_request(vm, err);
  out << collective_table(r, price_collective(r), vm.count("csv") > 0);
  return 0;
}

std::string collective_cost_help() {
  std::ostringstream s;
  s << "usage: epsim cost --collective KIND (--cluster PRESET [--nodes N] [--gpus-per-node N] | --config TOML "
       "[--set key=value]...)\n"
       "         dispatch|combine: [--model NAME] [--ep N] [--tokens LIST] [--hidden N] [--top-k N] [--experts N]\n"
       "                           [--algorithm A] [--dtype fp8|bf16] [--groups N] [--topk-group N]\n"
       "         all_reduce|all_gather: [--bytes LIST] [--gpus N]    send_recv: [--bytes LIST] [--peer GPU]\n"
       "         [--csv]\n\n"
    << collective_options();
  return s.str();
}

}  // namespace epsim::experiments
