// SPDX-License-Identifier: Apache-2.0
#include "experiments/cli/cost_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/program_options.hpp>

#include "experiments/assembly/builders.hpp"
#include "experiments/cli/collective_cost.hpp"
#include "experiments/cli/command_line.hpp"
#include "experiments/cli/cost_table.hpp"
#include "experiments/cli/shape_cost.hpp"
#include "hardware/gpu_spec.hpp"
#include "hardware/measured_cost_model.hpp"
#include "models/model_spec.hpp"

namespace po = boost::program_options;

namespace epsim::experiments {
namespace {

// Bounds of `epsim cost`'s size-like options: far beyond any GPU (65,536 experts, 16 Mi tokens a call)
// yet small enough that a table of them is priced in moments.
constexpr std::int64_t k_max_cost_experts = std::int64_t{1} << 16;
constexpr std::int64_t k_max_cost_tokens = std::int64_t{1} << 24;
constexpr std::size_t k_max_cost_rows = 4096;

std::vector<std::int64_t> parse_token_list(const std::string& s) {
  std::vector<std::int64_t> out;
  for (const std::string& item : split_commas(s)) {
    try {
      std::size_t used = 0;
      const long long v = std::stoll(item, &used);
      if (used != item.size() || v < 1 || v > k_max_cost_tokens) {
        throw std::invalid_argument(item);
      }
      out.push_back(v);
      if (out.size() > k_max_cost_rows) {
        throw std::invalid_argument(item);
      }
    } catch (const std::exception&) {
      throw UsageError(
          fmt::format("--tokens: expected a comma-separated list of at most {} integers in [1, {}], got \"{}\"",
                      k_max_cost_rows, k_max_cost_tokens, item));
    }
  }
  return out;
}

}  // namespace

int cost_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (wants_collective(args)) {  // its own options and pricing: collective_cost.hpp
    try {
      return collective_cost_command(args, out, err);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  if (wants_shape(args)) {  // one kernel of any shape: shape_cost.hpp
    try {
      return shape_cost_command(args, out, err);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  po::options_description d = common_options();
  d.add_options()("gpu", po::value<std::string>(), "GPU preset (epsim list gpus) or preset file (.toml)")(
      "model", po::value<std::string>(), "model preset (epsim list models)")(
      "config", po::value<std::string>(),
      "an experiment instead of --gpu/--model: its model on its GPU --gpu-index, priced by the run's cost model "
      "(speed factor, stress weighting, the prefill pool's GPU)")(
      "set", po::value<std::vector<std::string>>()->composing(), "with --config: override a config key")(
      "gpu-index", po::value<int>()->default_value(0), "with --config: which GPU of the cluster")(
      "tokens", po::value<std::string>()->default_value("1,2,4,8,16,32,64,128,256,512,1024,2048,4096,8192"),
      "comma-separated token counts")(
      "experts-active", po::value<std::int64_t>()->default_value(0),
      "activated experts on the GPU (0 = expected under uniform routing: local x (1 - (1 - 1/local)^tokens), "
      "each given the expected share rounded up and padded to the tile)")(
      "local-experts", po::value<std::int64_t>()->default_value(0),
      "experts resident on the GPU (0 = routed / 8, or the config's slots per GPU)")(
      "context", po::value<std::int64_t>()->default_value(1024), "cached tokens behind each decode token")(
      "speed", po::value<double>()->default_value(1.0), "without --config: the GPU's speed factor")("csv", "print CSV");
  if (std::find(args.begin(), args.end(), "--help") != args.end() ||
      std::find(args.begin(), args.end(), "-h") != args.end()) {
    out << "usage: epsim cost (--gpu NAME --model NAME [--speed S] | --config TOML [--set key=value]... "
           "[--gpu-index N]) [--tokens LIST] [--experts-active N] [--context N] [--csv]\n\n"
        << d << "\n"
        << shape_cost_help() << "\n"
        << collective_cost_help();
    return 0;
  }
  const po::variables_map vm = parse_options(args, d, {});
  CostTableOptions o;
  o.tokens = parse_token_list(vm["tokens"].as<std::string>());
  o.experts_active = vm["experts-active"].as<std::int64_t>();
  o.local_experts = vm["local-experts"].as<std::int64_t>();
  o.context = vm["context"].as<std::int64_t>();
  o.csv = vm.count("csv") > 0;
  const double speed = vm["speed"].as<double>();
  // Every size-like option has a bound that names it (a billion experts priced one by one never ends).
  if (o.experts_active < 0 || o.experts_active > k_max_cost_experts || o.local_experts < 0 ||
      o.local_experts > k_max_cost_experts || o.context < 0 || o.context > k_max_cost_tokens ||
      !(speed > 0.0 && speed <= 1e3)) {
    throw UsageError(fmt::format(
        "--experts-active and --local-experts must be in [0, {}], --context in [0, {}] and --speed in (0, 1000]",
        k_max_cost_experts, k_max_cost_tokens));
  }
  if (vm.count("config")) {
    if (vm.count("gpu") || vm.count("model") || !vm["speed"].defaulted()) {
      throw UsageError("--config gives the GPU, the model and the speed; drop --gpu, --model and --speed");
    }
    const ExperimentConfig cfg = load_experiment(vm, err);
    const int index = vm["gpu-index"].as<int>();
    if (index < 0 || index >= cfg.cluster.num_gpus()) {
      throw UsageError(fmt::format("--gpu-index: expected a GPU of the cluster's {} (0 .. {}), got {}",
                                   cfg.cluster.num_gpus(), cfg.cluster.num_gpus() - 1, index));
    }
    // The GPU's pool: a prefill pool of its own EP size holds another number of slots per GPU, and may
    // run other kernels (DeepEP's low-latency ones write the masked layout: no permutation).
    const serving::PoolSpec* pool = &cfg.pools.front();
    for (const serving::PoolSpec& p : cfg.pools) {
      pool = index >= p.shape.first_gpu && index < p.shape.first_gpu + p.gpus() ? &p : pool;
    }
    if (o.local_experts == 0) {
      o.local_experts = pool->slots_per_gpu(cfg.model.routed_experts);
    }
    const hardware::EpCommConfig& comm = pool->comm;
    o.masked_layout = comm.algorithm == hardware::DispatchAlgorithm::deepep_low_latency;
    const auto cost = make_cost_model(cfg);  // the run's own (builders.hpp)
    const hardware::RooflineCostModel& roofline = hardware::roofline_of(*cost);
    out << cost_table(cfg.model, *cost, roofline.gpu_of(index), index, roofline.speed(index), o);
    return 0;
  }
  if (!vm.count("gpu") || !vm.count("model")) {
    throw UsageError("give --gpu and --model, or --config");
  }
  const std::string gpu_name = vm["gpu"].as<std::string>();
  const std::string model_name = vm["model"].as<std::string>();
  if (const std::string m = hardware::gpu_presets().unknown_message(gpu_name); !m.empty()) {
    throw UsageError("--gpu: " + m);
  }
  if (const std::string m = models::model_presets().unknown_message(model_name); !m.empty()) {
    throw UsageError("--model: " + m);
  }
  // One GPU at exactly this speed factor (no stress weighting).
  const hardware::RooflineCostModel cost(hardware::load_gpu_preset(gpu_name), {speed});
  out << cost_table(models::load_model_preset(model_name), cost, cost.gpu(), 0, speed, o);
  return 0;
}

}  // namespace epsim::experiments
