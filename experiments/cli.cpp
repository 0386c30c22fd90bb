#include "experiments/cli.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <toml++/toml.h>
#include <boost/program_options.hpp>
#include <chrono>
#include <filesystem>

#include "experiments/build_simulation.hpp"
#include "experiments/experiment_config.hpp"
#include "experiments/results_writer.hpp"
#include "hardware/gpu_spec.hpp"
#include "models/model_spec.hpp"
#include "policies/placement_policy.hpp"
#include "policies/registry.hpp"
#include "policies/routing_policy.hpp"
#include "sim/core/error.hpp"
#include "version.hpp"

namespace po = boost::program_options;

namespace epsim::experiments {
namespace {

constexpr const char* k_usage = R"(usage: epsim <command> [options]

commands:
  run [CONFIG]      run a simulation (no CONFIG: the embedded demo) and write a results directory
  validate CONFIG   check a configuration without running it
  list [WHAT]       list presets and policies: models, gpus, policies (default: all)

options:
  --help            show help (also: epsim <command> --help)
  --version         print the version
)";

struct UsageError : core::Error {
  using core::Error::Error;
};

po::variables_map parse(const std::vector<std::string>& args, const po::options_description& desc,
                        const po::positional_options_description& pos) {
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(desc).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  return vm;
}

void set_log_level(const std::string& level) {
  const auto l = spdlog::level::from_str(level);
  if (l == spdlog::level::off && level != "off") {
    throw UsageError("--log-level: unknown level \"" + level + "\"; valid: trace, debug, info, warn, error, off");
  }
  spdlog::set_level(l);
}

po::options_description common_options() {
  po::options_description d("options");
  d.add_options()("help,h", "show this help")("log-level", po::value<std::string>()->default_value("warn"),
                                              "trace, debug, info, warn, error, off");
  return d;
}

ExperimentConfig load(const po::variables_map& vm) {
  const auto sets = vm.count("set") ? vm["set"].as<std::vector<std::string>>() : std::vector<std::string>{};
  if (vm.count("config")) {
    return load_config(vm["config"].as<std::string>(), sets);
  }
  return load_config_text(embedded_demo_config(), "embedded demo (examples/demo.toml)", sets);
}

int cmd_run(const std::vector<std::string>& args, std::ostream& out) {
  po::options_description d = common_options();
  d.add_options()("config", po::value<std::string>(), "TOML experiment file (default: the embedded demo)")(
      "set", po::value<std::vector<std::string>>()->composing(), "override a config key: --set key=value (repeatable)")(
      "out", po::value<std::string>(), "results directory (default: results/<config name>)")(
      "seed", po::value<std::uint64_t>(), "override run.seed");
  po::positional_options_description pos;
  pos.add("config", 1);
  const po::variables_map vm = parse(args, d, pos);
  if (vm.count("help")) {
    out << "usage: epsim run [CONFIG] [--set key=value]... [--out DIR] [--seed N]\n\n" << d;
    return 0;
  }
  set_log_level(vm["log-level"].as<std::string>());
  ExperimentConfig cfg = load(vm);
  if (vm.count("seed")) {
    cfg.seed = vm["seed"].as<std::uint64_t>();
  }
  const std::string stem =
      vm.count("config") ? std::filesystem::path(vm["config"].as<std::string>()).stem().string() : "demo";
  const std::filesystem::path dir = vm.count("out") ? vm["out"].as<std::string>() : "results/" + stem;
  spdlog::info("config {} loaded: {} on {} GPUs", cfg.source, cfg.model.name, cfg.cluster.num_gpus());

  const auto t0 = std::chrono::steady_clock::now();
  serving::Simulator sim(build_simulation(cfg));
  const serving::SimulationResult res = sim.run();
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  write_results(dir, cfg, res);

  out << human_summary(cfg, res);
  out << fmt::format("wall time {:.2f} s ({:.0f}x real time); results in {}\n", wall_s,
                     wall_s > 0 ? res.summary.makespan_s / wall_s : 0.0, dir.string());
  return 0;
}

int cmd_validate(const std::vector<std::string>& args, std::ostream& out) {
  po::options_description d = common_options();
  d.add_options()("config", po::value<std::string>(), "TOML experiment file")(
      "set", po::value<std::vector<std::string>>()->composing(), "override a config key: --set key=value");
  po::positional_options_description pos;
  pos.add("config", 1);
  const po::variables_map vm = parse(args, d, pos);
  if (vm.count("help")) {
    out << "usage: epsim validate CONFIG [--set key=value]...\n\n" << d;
    return 0;
  }
  if (!vm.count("config")) {
    throw UsageError("validate needs a CONFIG file");
  }
  set_log_level(vm["log-level"].as<std::string>());
  const ExperimentConfig cfg = load(vm);
  out << fmt::format("{}: ok ({} on {} x {} GPUs, EP{}, {} requests at {} req/s)\n", cfg.source, cfg.model.name,
                     cfg.cluster.num_gpus(), cfg.gpu.name, cfg.ep_size, cfg.workload.num_requests,
                     cfg.workload.rate_rps);
  return 0;
}

template <class Registry>
void list_registry(const Registry& r, std::ostream& out) {
  out << r.kind() << " policies:\n";
  for (const auto& e : r.entries()) {
    out << fmt::format("  {:<12} {}\n", e.name, e.description);
    for (const core::ParamDoc& p : r.docs(e)) {
      out << fmt::format("      {} ({}, default {}): {}\n", p.key, p.type, p.default_value, p.description);
    }
  }
}

int cmd_list(const std::vector<std::string>& args, std::ostream& out) {
  po::options_description d = common_options();
  d.add_options()("what", po::value<std::string>()->default_value("all"), "models, gpus, policies or all");
  po::positional_options_description pos;
  pos.add("what", 1);
  const po::variables_map vm = parse(args, d, pos);
  if (vm.count("help")) {
    out << "usage: epsim list [models|gpus|policies]\n\n" << d;
    return 0;
  }
  const std::string what = vm["what"].as<std::string>();
  if (what != "all" && what != "models" && what != "gpus" && what != "policies") {
    throw UsageError("list: unknown \"" + what + "\"; valid values are: models, gpus, policies");
  }
  if (what == "all" || what == "models") {
    out << "models:\n";
    for (const std::string& name : models::model_presets().names()) {
      core::ParamTable t({core::ParamLayer{&models::model_presets().get(name, "", ""), name}}, "");
      const models::ModelSpec m = models::parse_model_spec(t);
      out << fmt::format("  {:<18} {:<18} {:>3} layers ({} MoE), {:>3} experts top-{}, {} shared, hidden {}, {}\n",
                         name, m.name, m.num_layers, m.num_moe_layers(), m.routed_experts, m.top_k, m.shared_experts,
                         m.hidden_size, m.attention == models::AttentionKind::mla ? "MLA" : "GQA");
    }
  }
  if (what == "all" || what == "gpus") {
    out << "gpus:\n";
    for (const std::string& name : hardware::gpu_presets().names()) {
      core::ParamTable t({core::ParamLayer{&hardware::gpu_presets().get(name, "", ""), name}}, "");
      const hardware::GpuSpec g = hardware::parse_gpu_spec(t);
      out << fmt::format(
          "  {:<10} {:<24} BF16 {:>6.0f} TFLOP/s, FP8 {:>6.0f} TFLOP/s, HBM {:>5.0f} GB/s, {:>4.0f} GiB\n", name,
          g.name, g.bf16_tflops, g.fp8_tflops, g.hbm_gbps, g.memory_gib);
    }
  }
  if (what == "all" || what == "policies") {
    list_registry(policies::placement_registry(), out);
    list_registry(policies::routing_registry(), out);
  }
  return 0;
}

}  // namespace

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    out << k_usage;
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version") {
    out << "epsim " << k_version << "\n";
    return 0;
  }
  const std::string& cmd = args[0];
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  try {
    if (cmd == "run") {
      return cmd_run(rest, out);
    }
    if (cmd == "validate") {
      return cmd_validate(rest, out);
    }
    if (cmd == "list") {
      return cmd_list(rest, out);
    }
    err << "epsim: unknown command \"" << cmd << "\"; valid commands are: run, validate, list\n";
    return 2;
  } catch (const UsageError& e) {
    err << "epsim " << cmd << ": " << e.what() << "\n";
    return 2;
  } catch (const core::ConfigError& e) {
    err << "config error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    err << "epsim " << cmd << ": error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace epsim::experiments
