// SPDX-License-Identifier: Apache-2.0
#include "experiments/cli/place_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>

#include <toml++/toml.h>
#include <sstream>

#include "core/atomic_file.hpp"
#include "core/csv_lines.hpp"
#include "core/error.hpp"
#include "core/toml_guard.hpp"
#include "engines/layer_layout.hpp"
#include "engines/placement_formats.hpp"
#include "engines/routing_importers.hpp"
#include "engines/vllm_placement.hpp"
#include "experiments/assembly/builders.hpp"
#include "experiments/assembly/experiment_config.hpp"
#include "experiments/cli/command_line.hpp"
#include "experiments/cli/place_inputs.hpp"
#include "experiments/cli/recorded_load.hpp"
#include "hardware/cluster_spec.hpp"
#include "hardware/roofline.hpp"
#include "models/model_spec.hpp"
#include "policies/eplb/eplb_placement.hpp"
#include "policies/placement_policy.hpp"
#include "policies/registry.hpp"
#include "policies/vibe/vibe_placement.hpp"

namespace po = boost::program_options;

namespace epsim::experiments {
namespace {

// --model's spec, when given.
std::optional<models::ModelSpec> model_of(const po::variables_map& vm) {
  if (!vm.count("model")) {
    return std::nullopt;
  }
  const std::string name = vm["model"].as<std::string>();
  if (const std::string m = models::model_presets().unknown_message(name); !m.empty()) {
    throw std::invalid_argument("--model: " + m);
  }
  return models::load_model_preset(name);
}

// The loads of --load: epsim's JSON or CSV, or an engine's recording streamed through its importer (the
// window of --from-step / --window-steps, step by step only for a policy that scores steps).
LoadFile read_load(const std::filesystem::path& path, const po::variables_map& vm,
                   const std::optional<models::ModelSpec>& model, const policies::PolicyNeeds& needs) {
  const engines::RoutingImporter* importer = nullptr;
  if (vm.count("load-format")) {
    importer = engines::find_routing_importer(vm["load-format"].as<std::string>());
    if (importer == nullptr) {
      throw std::invalid_argument("--load-format: unknown format \"" + vm["load-format"].as<std::string>() +
                                  "\" (epsim trace import --help lists them)");
    }
  } else {
    importer = engines::detect_routing_format(path);
  }
  if (importer == nullptr) {
    return path.extension() == ".csv" ? read_load_csv(path) : read_load_json(path);
  }
  engines::RoutingImportOptions o;
  o.model = model;
  o.top_k = vm.count("top-k") ? vm["top-k"].as<int>() : 0;
  o.tokens_per_step = vm["tokens-per-step"].as<std::int64_t>();
  RecordingWindow w;
  w.from_step = vm["from-step"].as<std::int64_t>();
  w.steps = vm["window-steps"].as<std::int64_t>();
  if (w.from_step < 0 || w.steps < 0 || o.tokens_per_step < 0) {
    throw std::invalid_argument("--from-step, --window-steps and --tokens-per-step must be >= 0");
  }
  w.keep_steps = needs.step_window;
  w.coactivation = needs.coactivation && !vm.count("coactivation");
  w.transitions = needs.transitions;
  return load_recording(path, *importer, o, w);
}

// The command's options.
po::options_description place_options() {
  po::options_description d("place options");
  d.add_options()("help,h", "help")("policy", po::value<std::string>()->default_value("eplb"), "placement policy")(
      "load", po::value<std::string>(),
      "expert loads: JSON {\"weight\": [[...]]} and/or {\"window\": [[[...]]]} per step, CSV "
      "layer,expert,tokens or step,layer,expert,tokens, or an engine's recording (vLLM routed experts .jsonl, a "
      "TensorRT-LLM statistics directory, an EPLB load history .json, an epsim trace)")(
      "load-format", po::value<std::string>(),
      "the recording's format when its name does not tell (trace import --help)")(
      "from-step", po::value<std::int64_t>()->default_value(0), "recordings: steps skipped before the window")(
      "window-steps", po::value<std::int64_t>()->default_value(0),
      "recordings: steps in the window (0 = all after --from-step)")(
      "top-k", po::value<int>(), "count-only recordings without --model: experts per token")(
      "tokens-per-step", po::value<std::int64_t>()->default_value(0),
      "vLLM routed experts: tokens per step (0 = one request per step)")(
      "curves", po::value<std::string>(), "per-GPU cost curves C_g(n), CSV gpu,tokens,latency_us (GEM, ViBE)")(
      "config", po::value<std::string>(),
      "experiment TOML whose GPUs, variability and model give the cost curves instead (policy.cost_profile)")(
      "option", po::value<std::vector<std::string>>(), "policy option KEY=VALUE (TOML value), repeatable")(
      "seed", po::value<std::string>()->default_value("42"), "seed of randomised policies (GEM's restarts)")(
      "coactivation", po::value<std::string>(), "co-selection counts for GRACE, CSV layer,expert_a,expert_b,tokens")(
      "gpus", po::value<int>(), "GPUs of the EP group (num_gpus)")("nodes", po::value<int>(), "nodes (num_nodes)")(
      "groups", po::value<int>(), "expert groups (num_groups)")("slots", po::value<int>(),
                                                                "physical slots in all (num_replicas)")(
      "cluster", po::value<std::string>(), "cluster preset: nodes = gpus / its GPUs per node")(
      "model", po::value<std::string>(), "model preset: checks the expert count, default groups")(
      "out", po::value<std::string>(), "output file (default: standard output)")(
      "check", po::value<std::string>(),
      "instead of placing: read FILE, a placement in --format (an engine's), check it against --model and --gpus, "
      "and with --load report its predicted per-GPU balance")(
      "format", po::value<std::string>()->default_value("epsim"),
      "epsim, or the file an engine loads: sglang, sglang-logical-count, trtllm, vllm-ascend, vllm (EplbState; "
      "upstream vLLM loads no placement file), vllm-slots (docs/engines.md)");
  return d;
}

// Checks the loads of `f` (named `src` in messages), totals a window without a weight; returns the
// experts per layer.
std::size_t check_loads(LoadFile& f, const std::string& src) {
  if (!f.window.empty()) {
    const std::size_t layers = f.window[0].size();
    const std::size_t width = layers > 0 ? f.window[0][0].size() : 0;
    for (std::size_t s = 0; s < f.window.size(); ++s) {
      if (f.window[s].size() != layers) {
        throw core::Error(
            fmt::format("{}: window step {} has {} layers, step 0 has {}", src, s, f.window[s].size(), layers));
      }
      for (std::size_t l = 0; l < layers; ++l) {
        if (f.window[s][l].size() != width) {
          throw core::Error(fmt::format("{}: window step {} layer {} has {} experts, expected {}", src, s, l,
                                        f.window[s][l].size(), width));
        }
      }
    }
    if (f.weight.empty()) {  // the total over the window
      f.weight.assign(layers, std::vector<double>(width, 0.0));
      for (const auto& step : f.window) {
        for (std::size_t l = 0; l < layers; ++l) {
          for (std::size_t e = 0; e < width; ++e) {
            f.weight[l][e] += step[l][e];
          }
        }
      }
    } else if (f.weight.size() != layers || f.weight[0].size() != width) {
      throw core::Error(fmt::format("{}: the window is {} layers x {} experts, the weight {} x {}", src, layers, width,
                                    f.weight.size(), f.weight[0].size()));
    }
  }
  if (f.weight.empty() || f.weight[0].empty()) {
    throw core::Error(src + ": no loads");
  }
  const std::size_t experts = f.weight[0].size();
  for (std::size_t l = 0; l < f.weight.size(); ++l) {
    if (f.weight[l].size() != experts) {
      throw core::Error(fmt::format("{}: ragged loads: layer {} has {} experts, layer 0 has {}", src, l,
                                    f.weight[l].size(), experts));
    }
    for (std::size_t e = 0; e < experts; ++e) {
      if (!(f.weight[l][e] >= 0.0)) {
        throw core::Error(fmt::format("{}: negative load {} at layer {}, expert {}", src, f.weight[l][e], l, e));
      }
    }
  }
  return experts;
}

// Flags override the file's shape; presets fill what is still missing; the shape is checked.
void resolve_shape(LoadFile& f, const po::variables_map& vm, const std::optional<models::ModelSpec>& model,
                   std::size_t experts, const std::string& src) {
  const auto flag = [&](const char* name, int& value) {
    if (vm.count(name)) {
      value = vm[name].as<int>();
    }
  };
  flag("gpus", f.num_gpus);
  flag("nodes", f.num_nodes);
  flag("groups", f.num_groups);
  flag("slots", f.num_replicas);
  if (model) {
    if (static_cast<std::size_t>(model->routed_experts) != experts) {
      throw core::Error(fmt::format("{}: {} experts per layer, the model {} has {}", src, experts,
                                    vm["model"].as<std::string>(), model->routed_experts));
    }
    if (f.num_groups == 0) {
      f.num_groups = static_cast<int>(model->expert_groups);
    }
  }
  if (f.num_gpus <= 0) {
    throw std::invalid_argument("the number of GPUs is needed: --gpus or num_gpus in the load file");
  }
  if (vm.count("cluster") && !vm.count("nodes")) {
    const std::string name = vm["cluster"].as<std::string>();
    if (const std::string m = hardware::cluster_presets().unknown_message(name); !m.empty()) {
      throw std::invalid_argument("--cluster: " + m);
    }
    const int per_node = hardware::load_cluster_preset(name).gpus_per_node;
    f.num_nodes = std::max(1, f.num_gpus / per_node);
  }
  f.num_nodes = std::max(f.num_nodes, 1);
  f.num_groups = std::max(f.num_groups, 1);
  if (f.num_replicas == 0) {
    f.num_replicas = static_cast<int>(experts);
  }
  if (f.num_replicas % f.num_gpus != 0) {
    throw core::Error(fmt::format("num_replicas ({}) must be a multiple of num_gpus ({})", f.num_replicas, f.num_gpus));
  }
  if (experts % static_cast<std::size_t>(f.num_groups) != 0) {
    throw core::Error(fmt::format("the {} experts do not divide into num_groups = {}", experts, f.num_groups));
  }
}

// The policy's input from the loads and the shape.
policies::PlacementInput placement_input(const LoadFile& f, std::size_t experts, const std::string& src,
                                         std::uint64_t seed) {
  policies::PlacementInput in =
      policies::PlacementInput::shape(static_cast<int>(f.weight.size()), static_cast<int>(experts), f.num_gpus,
                                      f.num_nodes, f.num_replicas / f.num_gpus, f.num_groups);
  std::vector<double> total;
  std::vector<double> per_step;
  for (const auto& row : f.weight) {
    total.insert(total.end(), row.begin(), row.end());
  }
  for (const auto& step : f.window) {
    for (const auto& row : step) {
      for (const double x : row) {
        if (!(x >= 0.0)) {
          throw core::Error(fmt::format("{}: negative load {} in the window", src, x));
        }
        per_step.push_back(x);
      }
    }
  }
  in.set_load_window(std::move(total), std::move(per_step));
  in.seed = seed;
  return in;
}

// Cost curves (--curves, or an experiment's --config through the run's builders) and co-selection
// counts into `in`; returns the cost model exact curves point to (null when none).
std::unique_ptr<hardware::CostModel> attach_inputs(policies::PlacementInput& in, const po::variables_map& vm,
                                                   const LoadFile& f, std::size_t experts, const std::string& src) {
  if (vm.count("curves") && vm.count("config")) {
    throw std::invalid_argument("--curves and --config both give cost curves; use one");
  }
  if (vm.count("curves")) {
    in.set_cost_curves(read_curves(vm["curves"].as<std::string>(), f.num_gpus));
  }
  if (vm.count("coactivation")) {
    in.set_coactivation(read_coactivation(vm["coactivation"].as<std::string>(), in.num_layers, in.num_experts));
  } else if (!f.coactivation.empty()) {
    in.set_coactivation(f.coactivation);
  }
  if (!f.transitions.empty()) {
    in.set_transitions(f.transitions);
  }
  std::unique_ptr<hardware::CostModel> cost;  // outlives the curves of --config in exact mode
  if (vm.count("config")) {
    const ExperimentConfig cfg = load_config(vm["config"].as<std::string>(), {});
    if (static_cast<std::size_t>(cfg.model.routed_experts) != experts) {
      throw core::Error(fmt::format("{}: {} experts per layer, the model of {} has {}", src, experts,
                                    vm["config"].as<std::string>(), cfg.model.routed_experts));
    }
    // The GPUs a run would place for: those of its primary pool's first group (builders.hpp), after the
    // GPUs of the pools before it.
    const int first = cfg.primary_pool().shape.first_gpu;
    if (cfg.cluster.num_gpus() < first + f.num_gpus) {
      throw core::Error(fmt::format("{}: {} GPUs from GPU {} (the first that decodes) exceed its {}",
                                    vm["config"].as<std::string>(), f.num_gpus, first, cfg.cluster.num_gpus()));
    }
    cost = make_cost_model(cfg);
    in.set_cost_curves(make_curves(cfg, *cost, first, f.num_gpus, f.num_replicas / f.num_gpus));
  }
  return cost;
}

// --option KEY=VALUE, each a line of TOML, into the policy's options table.
toml::table option_table(const po::variables_map& vm) {
  toml::table options;
  if (vm.count("option")) {
    for (const std::string& kv : vm["option"].as<std::vector<std::string>>()) {
      try {
        core::check_toml_key_depth(kv, "--option");
        const toml::table t = toml::parse(kv);
        for (const auto& [k, node] : t) {
          options.insert_or_assign(k, node);
        }
      } catch (const toml::parse_error& e) {
        throw std::invalid_argument("--option " + kv + ": expected KEY=VALUE in TOML (" + std::string(e.description()) +
                                    ")");
      }
    }
  }
  return options;
}

// Predicted tokens per GPU of one layer: each expert's tokens split evenly over its replicas.
std::vector<double> gpu_tokens(const policies::LayerPlacement& layer, const std::vector<double>& weight) {
  std::vector<double> load(static_cast<std::size_t>(layer.num_gpus), 0.0);
  for (int s = 0; s < layer.num_slots(); ++s) {
    const int e = layer.phy2log[static_cast<std::size_t>(s)];
    if (e >= 0) {
      load[static_cast<std::size_t>(layer.gpu_of_slot(s))] +=
          weight[static_cast<std::size_t>(e)] / layer.logcnt[static_cast<std::size_t>(e)];
    }
  }
  return load;
}

// Max / mean GPU load of a placement on its loads: "mean over layers / worst layer".
std::string balance_text(const policies::Placement& p, const std::vector<std::vector<double>>& weight) {
  double sum = 0.0;
  double worst = 0.0;
  for (std::size_t l = 0; l < p.layers.size(); ++l) {
    const std::vector<double> load = gpu_tokens(p.layers[l], weight[l]);
    const double mean = std::accumulate(load.begin(), load.end(), 0.0) / static_cast<double>(load.size());
    const double ratio = mean > 0.0 ? *std::max_element(load.begin(), load.end()) / mean : 1.0;
    sum += ratio;
    worst = std::max(worst, ratio);
  }
  return fmt::format("{:.3f} / {:.3f}", sum / static_cast<double>(std::max<std::size_t>(p.layers.size(), 1)), worst);
}

// The placement as epsim's JSON (with predicted per-GPU loads and, given curves, times).
nlohmann::ordered_json placement_json(const policies::Placement& p, const LoadFile& f,
                                      const policies::PlacementInput& in, const std::string& policy_name) {
  nlohmann::ordered_json j;
  engines::EplbMaps maps = engines::eplb_maps(p);
  nlohmann::ordered_json gpu_load = nlohmann::ordered_json::array();
  nlohmann::ordered_json gpu_time_us = nlohmann::ordered_json::array();
  for (std::size_t l = 0; l < p.layers.size(); ++l) {
    const auto& layer = p.layers[l];
    gpu_load.push_back(gpu_tokens(layer, f.weight[l]));
    if (in.has_cost_curves()) {
      // Predicted expert time per GPU at the window's mean tokens per step.
      std::vector<double> mean = f.weight[l];
      for (double& x : mean) {
        x /= std::max(1, in.load_window().steps());
      }
      std::vector<double> us =
          policies::predicted_gpu_ns(layer.phy2log, mean, in.cost_curves(), layer.num_gpus, layer.slots_per_gpu);
      for (double& x : us) {
        x /= 1e3;
      }
      gpu_time_us.push_back(us);
    }
  }
  j["policy"] = policy_name;
  j["num_replicas"] = f.num_replicas;
  j["num_groups"] = f.num_groups;
  j["num_nodes"] = f.num_nodes;
  j["num_gpus"] = f.num_gpus;
  j["phy2log"] = std::move(maps.phy2log);
  j["log2phy"] = std::move(maps.log2phy);
  j["logcnt"] = std::move(maps.logcnt);
  j["gpu_load"] = gpu_load;
  if (in.has_cost_curves()) {
    j["gpu_time_us"] = gpu_time_us;
  }
  return j;
}

// --check FILE: an engine's placement file read back, checked, and (with --load) its balance predicted.
int check_placement_file(const po::variables_map& vm, const engines::PlacementFormat& format,
                         const std::optional<models::ModelSpec>& model, std::ostream& out) {
  if (format.read == nullptr || !model || !vm.count("gpus")) {
    throw std::invalid_argument("--check FILE needs --format of a placement (not " + std::string(format.name) +
                                "), --model NAME and --gpus P");
  }
  const std::filesystem::path path = vm["check"].as<std::string>();
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw core::Error(path.string() + ": cannot read");
  }
  const std::string text = core::read_whole_input(in, path.string());
  const engines::LayerLayout layout = engines::layer_layout(*model);
  const int gpus = vm["gpus"].as<int>();
  const policies::Placement p = format.read(text, layout, static_cast<int>(model->routed_experts), gpus, path.string());
  const auto& first = p.layers.front();
  int redundant = 0;
  for (const auto& layer : p.layers) {
    redundant = std::max(redundant, layer.num_slots() - layer.num_experts);
  }
  out << fmt::format("{}: {} placement of {} MoE layers x {} experts on {} GPUs, {} slots per GPU ({} redundant)\n",
                     path.string(), format.name, p.layers.size(), first.num_experts, gpus, first.slots_per_gpu,
                     redundant);
  if (vm.count("load")) {
    LoadFile f = read_load(vm["load"].as<std::string>(), vm, model, policies::PolicyNeeds{});
    check_loads(f, vm["load"].as<std::string>());
    if (f.weight.size() != p.layers.size() || f.weight[0].size() != static_cast<std::size_t>(first.num_experts)) {
      throw core::Error(fmt::format("{}: {} layers x {} experts of loads for a placement of {} x {}",
                                    vm["load"].as<std::string>(), f.weight.size(), f.weight[0].size(), p.layers.size(),
                                    first.num_experts));
    }
    double sum = 0.0;
    double worst = 0.0;
    std::size_t worst_layer = 0;
    for (std::size_t l = 0; l < p.layers.size(); ++l) {
      const std::vector<double> load = gpu_tokens(p.layers[l], f.weight[l]);
      double total = 0.0;
      for (const double x : load) {
        total += x;
      }
      const double ratio = total > 0.0 ? *std::max_element(load.begin(), load.end()) * gpus / total : 1.0;
      sum += ratio;
      if (ratio > worst) {
        worst = ratio;
        worst_layer = l;
      }
    }
    out << fmt::format(
        "predicted per-GPU load max/mean (replicas share their expert's tokens evenly): {:.3f} over "
        "layers, worst {:.3f} at MoE layer {} (hidden layer {})\n",
        sum / static_cast<double>(p.layers.size()), worst, worst_layer, layout.moe_layers[worst_layer]);
  }
  return 0;
}

// The inputs the policy declared and the command line did not give: one error naming the options that do.
void require_declared_inputs(const policies::PolicyNeeds& needs, const policies::PlacementInput& in,
                             const std::string& policy_name) {
  if (needs.cost_curves && !in.has_cost_curves()) {
    throw std::invalid_argument("--policy " + policy_name + " needs cost curves: --curves CSV or --config TOML");
  }
  if (needs.coactivation && !in.has_coactivation()) {
    throw std::invalid_argument("--policy " + policy_name +
                                " needs co-selection counts: --coactivation CSV, or a recording with per-token ids");
  }
  if (needs.transitions && !in.has_transitions()) {
    throw std::invalid_argument("--policy " + policy_name +
                                " needs cross-layer transitions: --load a recording with per-token ids (vLLM's "
                                "routed experts, an epsim trace with token ids), or --option cross_layer=false");
  }
}

}  // namespace

int place_command(const std::vector<std::string>& args, std::ostream& out) {
  const po::options_description d = place_options();
  if (std::find(args.begin(), args.end(), "--help") != args.end()) {
    out << "usage: epsim place --policy NAME --load FILE [--gpus P] [--nodes N] [--groups G] [--slots R] "
           "[--cluster NAME] [--model NAME] [--curves CSV | --config TOML] [--option K=V]... [--seed S] "
           "[--coactivation CSV] [--from-step S] [--window-steps N] "
           "[--out FILE] [--format epsim|sglang|sglang-logical-count|trtllm|vllm-ascend|vllm|vllm-slots]\n"
           "       epsim place --check FILE --format F --model NAME --gpus P [--load FILE]\n\n"
           "Engines: sglang and trtllm number hidden layers (dense ones included) and need --model; vllm-ascend "
           "and the vllm files number MoE layers. Upstream vLLM cannot load a placement file today: --format vllm "
           "writes its EplbState maps (for tools and patches), --format vllm-slots the [MoE layers][slots] list its "
           "open placement-file work reads.\n\n"
        << d;
    return 0;
  }
  const po::variables_map vm = parse_command_line(args, d);
  check_output_options(vm, {"out"});
  const std::string format = vm["format"].as<std::string>();
  const engines::PlacementFormat* engine_format = engines::find_placement_format(format);
  if (format != "epsim" && engine_format == nullptr) {
    throw std::invalid_argument("--format: expected epsim, " + engines::placement_format_names() + ", got \"" + format +
                                "\"");
  }
  if (engine_format != nullptr && engine_format->hidden_layer_ids && !vm.count("model") && !vm.count("check")) {
    throw std::invalid_argument("--format " + format +
                                " numbers hidden layers (dense ones included): give --model NAME");
  }
  if (vm.count("check")) {
    if (engine_format == nullptr) {
      throw std::invalid_argument("--check FILE needs --format, the engine's format of FILE");
    }
    return check_placement_file(vm, *engine_format, model_of(vm), out);
  }
  if (!vm.count("load")) {
    throw std::invalid_argument("--load FILE is required (the loads to place from)");
  }
  const std::string policy_name = vm["policy"].as<std::string>();
  if (const std::string m = policies::placement_registry().unknown_message(policy_name); !m.empty()) {
    throw std::invalid_argument("--policy: " + m);
  }
  toml::table options = option_table(vm);
  // An engine that keeps one slot per expert and device loads EPLB's distinct variant (eplb.hpp), unless
  // --option distinct_per_gpu says otherwise; what it costs in balance is reported below.
  const bool auto_distinct = engine_format != nullptr && engine_format->one_replica_per_device &&
                             policy_name == "eplb" && !options.contains("distinct_per_gpu");
  if (auto_distinct) {
    options.insert_or_assign("distinct_per_gpu", true);
  }
  core::ParamTable policy_options({core::ParamLayer{&options, "--option"}}, "policy.placement_options");
  const auto policy = policies::placement_registry().create(policy_name, policy_options);

  const std::filesystem::path load_path = vm["load"].as<std::string>();
  if (!std::filesystem::exists(load_path)) {
    throw core::Error(load_path.string() + ": no such file");
  }
  const std::optional<models::ModelSpec> model = model_of(vm);
  LoadFile f = read_load(load_path, vm, model, policy->needs());
  const std::string src = load_path.string();
  const std::size_t experts = check_loads(f, src);
  resolve_shape(f, vm, model, experts, src);
  policies::PlacementInput in = placement_input(
      f, experts, src,
      static_cast<std::uint64_t>(whole_number_option(vm["seed"].as<std::string>(), "--seed", 0, INT64_MAX)));
  const std::unique_ptr<hardware::CostModel> cost = attach_inputs(in, vm, f, experts, src);
  require_declared_inputs(policy->needs(), in, policy_name);
  const policies::Placement p = policy->place(in);

  std::string text;
  if (engine_format != nullptr) {
    const engines::LayerLayout layout =
        model ? engines::layer_layout(*model) : engines::all_moe_layout(static_cast<int>(p.layers.size()));
    if (model && layout.num_moe_layers() != static_cast<int>(p.layers.size())) {
      throw core::Error(fmt::format("{}: {} MoE layers of loads, the model {} has {}", src, p.layers.size(),
                                    model->name, layout.num_moe_layers()));
    }
    text = engine_format->write({p, layout, f.weight});
  } else {
    text = placement_json(p, f, in, policy_name).dump() + "\n";
  }
  if (vm.count("out")) {
    core::write_file_atomically(vm["out"].as<std::string>(), text);
    out << fmt::format("{} placement of {} layers x {} experts on {} GPUs ({} slots) written to {} ({})\n", policy_name,
                       p.layers.size(), experts, f.num_gpus, f.num_replicas, vm["out"].as<std::string>(),
                       engine_format != nullptr ? std::string(engine_format->loader) : std::string("epsim"));
    if (auto_distinct) {
      const policies::Placement plain = policies::EplbPlacement().place(in);
      out << fmt::format(
          "{} keeps one slot per expert and device: EPLB's distinct variant (--option distinct_per_gpu=true), "
          "max / mean GPU load {} (EPLB as DeepSeek ships it: {}; mean over layers, worst layer)\n",
          format, balance_text(p, f.weight), balance_text(plain, f.weight));
    }
  } else {
    out << text;
  }
  return 0;
}

}  // namespace epsim::experiments
