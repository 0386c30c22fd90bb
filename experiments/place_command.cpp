#include "experiments/place_command.hpp"

#include <fmt/format.h>

#include <boost/program_options.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "hardware/cluster_spec.hpp"
#include "models/model_spec.hpp"
#include "policies/placement_policy.hpp"
#include "policies/registry.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/csv_lines.hpp"
#include "sim/core/error.hpp"

namespace po = boost::program_options;

namespace epsim::experiments {
namespace {

struct LoadFile {
  std::vector<std::vector<double>> weight;  // [layer][expert]
  int num_replicas = 0;
  int num_groups = 0;
  int num_nodes = 0;
  int num_gpus = 0;
};

LoadFile read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  nlohmann::json j;
  try {
    in >> j;
  } catch (const nlohmann::json::exception& e) {
    throw core::Error(path.string() + ": invalid JSON: " + e.what());
  }
  LoadFile f;
  if (!j.contains("weight") || !j["weight"].is_array()) {
    throw core::Error(path.string() + ": expected {\"weight\": [[tokens per expert] per layer], ...}");
  }
  for (std::size_t l = 0; l < j["weight"].size(); ++l) {
    const auto& row = j["weight"][l];
    if (!row.is_array()) {
      throw core::Error(fmt::format("{}: weight[{}] is not a list", path.string(), l));
    }
    std::vector<double> r;
    for (std::size_t e = 0; e < row.size(); ++e) {
      if (!row[e].is_number()) {
        throw core::Error(fmt::format("{}: weight[{}][{}] is not a number", path.string(), l, e));
      }
      r.push_back(row[e].get<double>());
    }
    f.weight.push_back(std::move(r));
  }
  const auto optional_int = [&](const char* key) { return j.contains(key) ? j[key].get<int>() : 0; };
  f.num_replicas = optional_int("num_replicas");
  f.num_groups = optional_int("num_groups");
  f.num_nodes = optional_int("num_nodes");
  f.num_gpus = optional_int("num_gpus");
  return f;
}

LoadFile read_csv(const std::filesystem::path& path) {
  std::ifstream in(path);
  LoadFile f;
  core::CsvLines lines(in, "layer");
  std::vector<double> v;
  while (lines.next()) {
    const std::string& line = lines.line();
    const std::int64_t line_no = lines.line_no();
    if (!core::parse_csv_numbers(line, v)) {
      throw core::Error(
          fmt::format("{}: line {}: expected layer,expert,tokens numbers, got \"{}\"", path.string(), line_no, line));
    }
    if (v.size() != 3 || v[0] < 0 || v[1] < 0 || v[0] != std::floor(v[0]) || v[1] != std::floor(v[1])) {
      throw core::Error(
          fmt::format("{}: line {}: expected layer,expert,tokens with integer layer and expert, got \"{}\"",
                      path.string(), line_no, line));
    }
    const auto l = static_cast<std::size_t>(v[0]);
    const auto e = static_cast<std::size_t>(v[1]);
    if (f.weight.size() <= l) {
      f.weight.resize(l + 1);
    }
    if (f.weight[l].size() <= e) {
      f.weight[l].resize(e + 1, 0.0);
    }
    f.weight[l][e] += v[2];
  }
  return f;
}

}  // namespace

int place_command(const std::vector<std::string>& args, std::ostream& out) {
  po::options_description d("place options");
  d.add_options()("help,h", "help")("policy", po::value<std::string>()->default_value("eplb"), "placement policy")(
      "load", po::value<std::string>()->required(),
      "expert loads: JSON {\"weight\": [[...]], ...} or CSV layer,expert,tokens")(
      "gpus", po::value<int>(), "GPUs of the EP group (num_gpus)")("nodes", po::value<int>(), "nodes (num_nodes)")(
      "groups", po::value<int>(), "expert groups (num_groups)")("slots", po::value<int>(),
                                                                "physical slots in all (num_replicas)")(
      "cluster", po::value<std::string>(), "cluster preset: nodes = gpus / its GPUs per node")(
      "model", po::value<std::string>(), "model preset: checks the expert count, default groups")(
      "out", po::value<std::string>(), "output file (default: standard output)")(
      "format", po::value<std::string>()->default_value("epsim"), "epsim or vllm");
  if (std::find(args.begin(), args.end(), "--help") != args.end()) {
    out << "usage: epsim place --policy NAME --load FILE [--gpus P] [--nodes N] [--groups G] [--slots R] "
           "[--cluster NAME] [--model NAME] [--out FILE] [--format epsim|vllm]\n\n"
        << d;
    return 0;
  }
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(d).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw std::invalid_argument(e.what());
  }
  const std::string format = vm["format"].as<std::string>();
  if (format != "epsim" && format != "vllm") {
    throw std::invalid_argument("--format: expected epsim or vllm, got \"" + format + "\"");
  }
  const std::string policy_name = vm["policy"].as<std::string>();
  if (const std::string m = policies::placement_registry().unknown_message(policy_name); !m.empty()) {
    throw std::invalid_argument("--policy: " + m);
  }
  const std::filesystem::path load_path = vm["load"].as<std::string>();
  if (!std::filesystem::exists(load_path)) {
    throw core::Error(load_path.string() + ": no such file");
  }
  LoadFile f = load_path.extension() == ".csv" ? read_csv(load_path) : read_json(load_path);
  const std::string src = load_path.string();
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
  // Flags override the file; presets fill what is still missing.
  const auto flag = [&](const char* name, int& value) {
    if (vm.count(name)) {
      value = vm[name].as<int>();
    }
  };
  flag("gpus", f.num_gpus);
  flag("nodes", f.num_nodes);
  flag("groups", f.num_groups);
  flag("slots", f.num_replicas);
  if (vm.count("model")) {
    const std::string name = vm["model"].as<std::string>();
    if (const std::string m = models::model_presets().unknown_message(name); !m.empty()) {
      throw std::invalid_argument("--model: " + m);
    }
    const models::ModelSpec spec = models::load_model_preset(name);
    if (static_cast<std::size_t>(spec.routed_experts) != experts) {
      throw core::Error(
          fmt::format("{}: {} experts per layer, the model {} has {}", src, experts, name, spec.routed_experts));
    }
    if (f.num_groups == 0) {
      f.num_groups = static_cast<int>(spec.expert_groups);
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
  policies::PlacementInput in;
  in.num_layers = static_cast<int>(f.weight.size());
  in.num_experts = static_cast<int>(experts);
  in.num_gpus = f.num_gpus;
  in.num_nodes = f.num_nodes;
  in.slots_per_gpu = f.num_replicas / f.num_gpus;
  in.num_groups = f.num_groups;
  for (const auto& row : f.weight) {
    in.expert_load.insert(in.expert_load.end(), row.begin(), row.end());
  }
  core::ParamTable no_options(std::vector<core::ParamLayer>{}, "policy");
  const policies::Placement p = policies::placement_registry().create(policy_name, no_options)->place(in);

  nlohmann::ordered_json j;
  nlohmann::ordered_json phy2log = nlohmann::ordered_json::array();
  nlohmann::ordered_json log2phy = nlohmann::ordered_json::array();
  nlohmann::ordered_json logcnt = nlohmann::ordered_json::array();
  nlohmann::ordered_json gpu_load = nlohmann::ordered_json::array();
  int max_count = 0;
  for (const auto& layer : p.layers) {
    max_count = std::max(max_count, layer.max_replicas);
  }
  for (std::size_t l = 0; l < p.layers.size(); ++l) {
    const auto& layer = p.layers[l];
    phy2log.push_back(layer.phy2log);
    logcnt.push_back(layer.logcnt);
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (int e = 0; e < layer.num_experts; ++e) {
      std::vector<int> r(static_cast<std::size_t>(max_count), -1);
      const auto reps = layer.replicas(e);
      std::copy(reps.begin(), reps.end(), r.begin());
      rows.push_back(r);
    }
    log2phy.push_back(rows);
    // Predicted load: each expert's tokens split evenly over its replicas.
    std::vector<double> load(static_cast<std::size_t>(layer.num_gpus), 0.0);
    for (int s = 0; s < layer.num_slots(); ++s) {
      const int e = layer.phy2log[static_cast<std::size_t>(s)];
      if (e >= 0) {
        load[static_cast<std::size_t>(layer.gpu_of_slot(s))] +=
            f.weight[l][static_cast<std::size_t>(e)] / layer.logcnt[static_cast<std::size_t>(e)];
      }
    }
    gpu_load.push_back(load);
  }
  if (format == "vllm") {
    // vLLM's EplbState keeps three tensors per MoE layer; this file holds them as nested lists.
    j["physical_to_logical_map"] = phy2log;
    j["logical_to_physical_map"] = log2phy;
    j["logical_replica_count"] = logcnt;
  } else {
    j["policy"] = policy_name;
    j["num_replicas"] = f.num_replicas;
    j["num_groups"] = f.num_groups;
    j["num_nodes"] = f.num_nodes;
    j["num_gpus"] = f.num_gpus;
    j["phy2log"] = phy2log;
    j["log2phy"] = log2phy;
    j["logcnt"] = logcnt;
    j["gpu_load"] = gpu_load;
  }
  const std::string text = j.dump() + "\n";
  if (vm.count("out")) {
    core::write_file_atomically(vm["out"].as<std::string>(), text);
    out << fmt::format("{} placement of {} layers x {} experts on {} GPUs ({} slots) written to {}\n", policy_name,
                       p.layers.size(), experts, f.num_gpus, f.num_replicas, vm["out"].as<std::string>());
  } else {
    out << text;
  }
  return 0;
}

}  // namespace epsim::experiments
