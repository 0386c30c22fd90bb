// SPDX-License-Identifier: Apache-2.0
#include "experiments/cli/trace_commands.hpp"

#include <fmt/format.h>

#include <array>
#include <boost/program_options.hpp>
#include <filesystem>
#include <optional>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "engines/coactivation.hpp"
#include "engines/import_trtllm_stats.hpp"
#include "engines/routing_importers.hpp"
#include "experiments/assembly/experiment_config.hpp"
#include "experiments/cli/command_line.hpp"
#include "models/model_spec.hpp"
#include "workloads/trace_io.hpp"
#include "workloads/trace_stats.hpp"
#include "workloads/trace_tools.hpp"

namespace po = boost::program_options;

namespace epsim::experiments {
namespace {

constexpr const char* k_usage = R"(usage: epsim trace <gen|stats|convert|import> [options]

  gen [CONFIG] --out FILE   synthesise a trace from a config's model and [routing] (default: the demo's)
  stats FILE                skew, Gini, activity, correlated pairs, per-GPU shares, drift of a trace;
                            with --groups N --topk-group M (or --model NAME, a preset with expert_groups
                            and topk_group, e.g. deepseek-v3) also the tokens whose top-k experts reach
                            more than M of the N expert groups (needs per-token expert ids)
  convert IN OUT            CSV (step,layer,expert,tokens) or per-token JSON -> trace, or trace -> CSV
  import IN OUT             what an engine recorded -> trace, streamed: vLLM routed experts (.jsonl), a
                            TensorRT-LLM expert-statistics directory, an EPLB load history (.json)
)";

int gen(const std::vector<std::string>& args, std::ostream& out) {
  po::options_description d("trace gen options");
  d.add_options()("help,h", "help")("config", po::value<std::string>(), "experiment TOML (default: the embedded demo)")(
      "set", po::value<std::vector<std::string>>()->composing(), "override a config key")(
      "out", po::value<std::string>()->required(), "trace file to write")(
      "steps", po::value<std::int64_t>()->default_value(1000), "steps")(
      "tokens", po::value<std::int64_t>()->default_value(256), "tokens per step")(
      "prefill-share", po::value<double>()->default_value(0.0), "share of each step's tokens that are prefill")(
      "step-ms", po::value<double>()->default_value(50.0), "simulated ms between steps (drives topic drift)")(
      "tokens-per-request", po::value<std::int64_t>()->default_value(64), "tokens per request (topic blocks)")(
      "origin-gpus", po::value<int>()->default_value(0), "record tokens per (origin GPU, expert) over this many GPUs")(
      "token-experts", "record every token's top-k expert ids");
  po::positional_options_description pos;
  pos.add("config", 1);
  if (std::find(args.begin(), args.end(), "--help") != args.end()) {
    out << "usage: epsim trace gen [CONFIG] --out FILE [options]\n\n" << d;
    return 0;
  }
  const auto vm = parse_command_line(args, d, pos);
  check_output_options(vm, {"out", "json", "coactivation-out"});
  const auto sets = vm.count("set") ? vm["set"].as<std::vector<std::string>>() : std::vector<std::string>{};
  const ExperimentConfig cfg = vm.count("config") ? load_config(vm["config"].as<std::string>(), sets)
                                                  : load_config_text(embedded_demo_config(), "embedded demo", sets);
  workloads::SynthesisOptions o;
  o.steps = vm["steps"].as<std::int64_t>();
  o.tokens = vm["tokens"].as<std::int64_t>();
  o.prefill_share = vm["prefill-share"].as<double>();
  o.step_ms = vm["step-ms"].as<double>();
  o.tokens_per_request = vm["tokens-per-request"].as<std::int64_t>();
  o.origin_gpus = vm["origin-gpus"].as<int>();
  o.token_experts = vm.count("token-experts") > 0;
  o.expert_groups = static_cast<int>(cfg.model.expert_groups);
  o.topk_group = static_cast<int>(cfg.model.topk_group);
  o.token_seed = cfg.seed_of(SeedFamily::workload);
  if (o.steps < 1 || o.tokens < 1 || o.tokens_per_request < 1 || o.origin_gpus < 0 || o.prefill_share < 0.0 ||
      o.prefill_share > 1.0) {
    throw std::invalid_argument(
        "--steps, --tokens, --tokens-per-request must be >= 1, --origin-gpus >= 0, "
        "--prefill-share in [0, 1]");
  }
  workloads::SyntheticRouter router(cfg.routing.synthetic, static_cast<int>(cfg.model.num_moe_layers()),
                                    static_cast<int>(cfg.model.routed_experts), static_cast<int>(cfg.model.top_k),
                                    core::RandomStreams(cfg.seed_of(SeedFamily::workload)));
  const std::string path = vm["out"].as<std::string>();
  workloads::generate_trace(path, router, cfg.model.name, o);
  out << fmt::format("wrote {}: {} steps of {} tokens, {} MoE layers x {} experts, top-{}\n", path, o.steps, o.tokens,
                     cfg.model.num_moe_layers(), cfg.model.routed_experts, cfg.model.top_k);
  return 0;
}

int stats(const std::vector<std::string>& args, std::ostream& out) {
  po::options_description d("trace stats options");
  d.add_options()("help,h", "help")("trace", po::value<std::string>()->required(), "trace file")(
      "ep", po::value<int>()->default_value(8), "EP size for the per-GPU shares under linear placement")(
      "window", po::value<int>()->default_value(100), "steps per drift window")(
      "pairs", po::value<int>()->default_value(3), "correlated pairs per layer")("per-layer", "a row per layer")(
      "json", po::value<std::string>(), "also write the statistics as JSON to this file")(
      "groups", po::value<int>(), "group-limit check: expert groups (n_group; must divide the trace's experts)")(
      "topk-group", po::value<int>(), "group-limit check: groups a token may reach (topk_group), with --groups")(
      "model", po::value<std::string>(), "group-limit check: take --groups and --topk-group from this model preset");
  po::positional_options_description pos;
  pos.add("trace", 1);
  if (std::find(args.begin(), args.end(), "--help") != args.end()) {
    out << "usage: epsim trace stats FILE [--ep N] [--window W] [--pairs K] [--per-layer] [--json OUT]\n"
           "                        [--groups N --topk-group M | --model NAME]\n\n"
        << d;
    return 0;
  }
  const auto vm = parse_command_line(args, d, pos);
  check_output_options(vm, {"out", "json", "coactivation-out"});
  workloads::StatsOptions o;
  o.ep_size = vm["ep"].as<int>();
  o.window = vm["window"].as<int>();
  o.top_pairs = vm["pairs"].as<int>();
  if (o.window < 1 || o.top_pairs < 0) {
    throw std::invalid_argument("--window must be >= 1 and --pairs >= 0");
  }
  const std::string file = vm["trace"].as<std::string>();
  if (vm.count("model")) {
    if (vm.count("groups") || vm.count("topk-group")) {
      throw std::invalid_argument("give either --model or --groups with --topk-group, not both");
    }
    const models::ModelSpec m = models::load_model_preset(vm["model"].as<std::string>());
    const workloads::TraceReader reader(file);
    if (static_cast<std::int64_t>(reader.header().experts()) != m.routed_experts) {
      throw std::invalid_argument(fmt::format("--model {}: the model has {} routed experts, the trace {} has {}",
                                              m.name, m.routed_experts, file, reader.header().experts()));
    }
    o.expert_groups = static_cast<int>(m.expert_groups);
    o.topk_group = static_cast<int>(m.topk_group);
  } else if (vm.count("groups") != vm.count("topk-group")) {
    throw std::invalid_argument("--groups and --topk-group go together (or take both from --model NAME)");
  } else if (vm.count("groups")) {
    o.expert_groups = vm["groups"].as<int>();
    o.topk_group = vm["topk-group"].as<int>();
    if (o.expert_groups < 1 || o.topk_group < 1 || o.topk_group > o.expert_groups) {
      throw std::invalid_argument(fmt::format("--groups must be >= 1 and --topk-group in [1, --groups], got {} and {}",
                                              o.expert_groups, o.topk_group));
    }
  }
  const auto st = workloads::compute_trace_stats(file, o);
  out << workloads::format_trace_stats(st, vm.count("per-layer") > 0);
  if (vm.count("json")) {
    core::write_file_atomically(vm["json"].as<std::string>(), workloads::trace_stats_json(st));
  }
  return 0;
}

int convert(const std::vector<std::string>& args, std::ostream& out) {
  po::options_description d("trace convert options");
  d.add_options()("help,h", "help")("in", po::value<std::string>()->required(), "input: .csv, .json or a trace")(
      "out", po::value<std::string>()->required(), "output: .csv, or a trace")("layers", po::value<std::string>(),
                                                                               "CSV input: MoE layers")(
      "experts", po::value<std::string>(), "CSV input: experts per layer")("top-k", po::value<std::string>(),
                                                                           "CSV input: experts per token")(
      "model", po::value<std::string>()->default_value(""), "CSV input: model name for the header");
  po::positional_options_description pos;
  pos.add("in", 1).add("out", 1);
  if (std::find(args.begin(), args.end(), "--help") != args.end()) {
    out << "usage: epsim trace convert IN OUT [--layers L --experts E --top-k K]\n\n" << d;
    return 0;
  }
  const auto vm = parse_command_line(args, d, pos);
  check_output_options(vm, {"out", "json", "coactivation-out"});
  const std::filesystem::path in = vm["in"].as<std::string>();
  const std::filesystem::path to = vm["out"].as<std::string>();
  std::int64_t steps = 0;
  if (in.extension() == ".csv") {
    if (!vm.count("layers") || !vm.count("experts") || !vm.count("top-k")) {
      throw std::invalid_argument("converting a CSV needs --layers, --experts and --top-k");
    }
    trace::Header h;
    h.set_version(1);
    h.set_model(vm["model"].as<std::string>());
    const auto dim = [&](const char* name, std::int64_t max) {
      return static_cast<std::uint32_t>(
          whole_number_option(vm[name].as<std::string>(), fmt::format("--{}", name), 1, max));
    };
    h.set_moe_layers(dim("layers", workloads::k_max_trace_layers));
    h.set_experts(dim("experts", workloads::k_max_trace_experts));
    h.set_top_k(dim("top-k", h.experts()));
    steps = workloads::import_csv(in, h, to);
  } else if (in.extension() == ".json") {
    steps = workloads::import_token_json(in, to);
  } else if (to.extension() == ".csv") {
    steps = workloads::export_csv(in, to);
  } else {
    throw std::invalid_argument("convert: give a .csv or .json input (to a trace), or a trace input and a .csv output");
  }
  out << fmt::format("converted {} steps: {} -> {}\n", steps, in.string(), to.string());
  return 0;
}

int import_recording(const std::vector<std::string>& args, std::ostream& out) {
  po::options_description d("trace import options");
  d.add_options()("help,h", "help")("in", po::value<std::string>()->required(), "the recording (file or directory)")(
      "out", po::value<std::string>()->required(), "trace file to write")(
      "format", po::value<std::string>(), "the recording's format (default: told from its name and first bytes)")(
      "model", po::value<std::string>(), "model preset: checks layers, experts, top-k and group-limited routing")(
      "top-k", po::value<int>(), "count-only recordings without --model: experts per token")(
      "tokens-per-step", po::value<std::int64_t>()->default_value(0),
      "vLLM routed experts: tokens per trace step, requests packed in order (0 = one request per step)")(
      "coactivation-out", po::value<std::string>(),
      "also write co-selection counts, CSV layer,expert_a,expert_b,tokens (per-token recordings, or TensorRT-LLM's "
      "co-occurrence files)");
  po::positional_options_description pos;
  pos.add("in", 1).add("out", 1);
  if (std::find(args.begin(), args.end(), "--help") != args.end()) {
    out << "usage: epsim trace import IN OUT [--format F] [--model NAME] [--top-k K] [--tokens-per-step N] "
           "[--coactivation-out CSV]\n\nformats:\n";
    for (const auto& i : engines::routing_importers()) {
      out << fmt::format("  {:<22}{}\n", i.name, i.description);
    }
    out << "\n" << d;
    return 0;
  }
  const auto vm = parse_command_line(args, d, pos);
  check_output_options(vm, {"out", "json", "coactivation-out"});
  const std::filesystem::path in = vm["in"].as<std::string>();
  const std::filesystem::path to = vm["out"].as<std::string>();
  if (!std::filesystem::exists(in)) {
    throw core::Error(in.string() + ": no such file or directory");
  }
  const engines::RoutingImporter* importer = vm.count("format")
                                                 ? engines::find_routing_importer(vm["format"].as<std::string>())
                                                 : engines::detect_routing_format(in);
  if (importer == nullptr) {
    throw std::invalid_argument(vm.count("format") ? "--format: unknown format \"" + vm["format"].as<std::string>() +
                                                         "\" (trace import --help lists them)"
                                                   : in.string() + ": format not recognised; give --format");
  }
  engines::RoutingImportOptions o;
  if (vm.count("model")) {
    const std::string name = vm["model"].as<std::string>();
    if (const std::string m = models::model_presets().unknown_message(name); !m.empty()) {
      throw std::invalid_argument("--model: " + m);
    }
    o.model = models::load_model_preset(name);
    o.model_name = name;
  }
  o.top_k = vm.count("top-k") ? vm["top-k"].as<int>() : 0;
  o.tokens_per_step = vm["tokens-per-step"].as<std::int64_t>();
  if (o.tokens_per_step < 0) {
    throw std::invalid_argument("--tokens-per-step must be >= 0");
  }
  // A tee: every step into the trace, and into the co-selection tally when asked.
  struct Tee : engines::StepSink {
    engines::TraceFileSink file;
    bool want_tally = false;
    std::optional<engines::CoactivationTally> tally;
    trace::Header header;
    explicit Tee(std::filesystem::path p) : file(std::move(p)) {}
    void begin(const trace::Header& h) override {
      header = h;
      file.begin(h);
      if (want_tally && h.has_token_experts()) {
        tally.emplace(h);
      }
    }
    void step(const trace::Step& s) override {
      file.step(s);
      if (tally) {
        tally->add(s);
      }
    }
  } tee(to);
  tee.want_tally = vm.count("coactivation-out") > 0;
  const engines::ImportSummary sum = importer->run(in, o, tee);
  std::vector<double> co;
  if (tee.want_tally) {
    co = tee.tally                                 ? tee.tally->counts()
         : importer->name == "trtllm-expert-stats" ? engines::trtllm_coactivation(in, o)
                                                   : std::vector<double>{};
    if (co.empty()) {
      throw core::Error(in.string() +
                        ": no per-token expert ids (nor co-occurrence files) to count co-selections "
                        "from; nothing written");
    }
  }
  tee.file.close();
  if (tee.want_tally) {
    core::write_file_atomically(vm["coactivation-out"].as<std::string>(),
                                engines::coactivation_csv(co, tee.header.moe_layers(), tee.header.experts()));
  }
  out << fmt::format(
      "imported {} steps ({} tokens{}) of {} MoE layers x {} experts, top-{} ({}): {} -> {}\n", sum.steps, sum.tokens,
      sum.cached_tokens > 0 ? fmt::format(", {} prefix-cached tokens left out", sum.cached_tokens) : std::string(),
      sum.moe_layers, sum.experts, sum.top_k, importer->name, in.string(), to.string());
  return 0;
}

}  // namespace

int trace_command(const std::vector<std::string>& args, std::ostream& out) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    out << k_usage;
    return args.empty() ? 2 : 0;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  static constexpr std::array<std::pair<std::string_view, int (*)(const std::vector<std::string>&, std::ostream&)>, 4>
      k_subcommands{{{"gen", gen}, {"stats", stats}, {"convert", convert}, {"import", import_recording}}};
  for (const auto& [name, run] : k_subcommands) {
    if (args[0] == name) {
      return run(rest, out);
    }
  }
  throw std::invalid_argument("unknown trace command \"" + args[0] +
                              "\"; valid commands are: gen, stats, convert, import");
}

}  // namespace epsim::experiments
