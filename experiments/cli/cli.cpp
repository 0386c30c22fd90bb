// SPDX-License-Identifier: Apache-2.0
#include "experiments/cli/cli.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <toml++/toml.h>
#include <algorithm>
#include <array>
#include <boost/program_options.hpp>
#include <cmath>
#include <filesystem>
#include <optional>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/file_kind.hpp"
#include "core/message_text.hpp"
#include "experiments/assembly/experiment_config.hpp"
#include "experiments/assembly/results_writer.hpp"
#include "experiments/cli/accuracy_command.hpp"
#include "experiments/cli/calibrate_command.hpp"
#include "experiments/cli/command_line.hpp"
#include "experiments/cli/cost_command.hpp"
#include "experiments/cli/listings.hpp"
#include "experiments/cli/place_command.hpp"
#include "experiments/cli/report_command.hpp"
#include "experiments/cli/run_command.hpp"
#include "experiments/cli/study_preview.hpp"
#include "experiments/cli/sweep_command.hpp"
#include "experiments/cli/trace_commands.hpp"
#include "experiments/cli/version_text.hpp"
#include "experiments/cli/workload_commands.hpp"
#include "experiments/studies/slo_search.hpp"
#include "workloads/workload_bounds.hpp"

namespace po = boost::program_options;

namespace epsim::experiments {
namespace {

// --seed N: a usage error (exit 2) when N is not a whole number in [0, 2^63 - 1].
std::uint64_t seed_option(const po::variables_map& vm) {
  try {
    return static_cast<std::uint64_t>(whole_number_option(vm["seed"].as<std::string>(), "--seed", 0, INT64_MAX));
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

// "1,2.5,4" -> {1, 2.5, 4}.
std::vector<double> parse_number_list(const std::string& text, std::string_view option) {
  std::vector<double> out;
  for (const std::string& item : split_commas(text)) {
    try {
      std::size_t used = 0;
      out.push_back(std::stod(item, &used));
      if (used != item.size()) {
        throw std::invalid_argument(item);
      }
    } catch (const std::exception&) {
      throw UsageError(fmt::format("{}: \"{}\" is not a number (expected e.g. 10,20,40)", option,
                                   core::terminal_safe(core::excerpt(item))));
    }
    // inf and nan parse as numbers: a probe at an infinite rate ended in bad_alloc.
    if (!std::isfinite(out.back())) {
      throw UsageError(fmt::format("{}: \"{}\" is not a finite number", option, item));
    }
  }
  return out;
}

int cmd_run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description d = common_options();
  d.add_options()("config", po::value<std::string>(), "TOML experiment file (default: the embedded demo)")(
      "set", po::value<std::vector<std::string>>()->composing(), "override a config key: --set key=value (repeatable)")(
      "out", po::value<std::string>(), "results directory (default: results/<config name>)")(
      "seed", po::value<std::string>(), "override run.seed")(
      "report", "also write DIR/report.html and its figures (turns on steps.csv, events.csv, gpu_layers.csv)");
  po::positional_options_description pos;
  pos.add("config", 1);
  const po::variables_map vm = parse_options(args, d, pos);
  if (vm.count("help")) {
    out << "usage: epsim run [CONFIG] [--set key=value]... [--out DIR] [--seed N] [--report]\n\n" << d;
    return 0;
  }
  set_log_level(vm["log-level"].as<std::string>());
  ExperimentConfig cfg = load_experiment(vm, err);
  if (vm.count("seed")) {
    cfg.seed = seed_option(vm);
  }
  const bool report = vm.count("report") > 0;
  const std::string stem =
      vm.count("config") ? std::filesystem::path(vm["config"].as<std::string>()).stem().string() : "demo";
  const std::filesystem::path dir = vm.count("out") ? vm["out"].as<std::string>() : "results/" + stem;
  spdlog::info("config {} loaded: {} on {} GPUs", cfg.source, cfg.model.name, cfg.cluster.num_gpus());
  const ExperimentRun run = run_experiment(cfg, RunRequest{dir, report, &err, {}});
  for (const std::string& w : run.warnings) {
    warn(err, w);
  }
  out << human_summary(cfg, run.result);
  out << fmt::format("wall time {:.2f} s ({:.0f}x real time); results in {}\n", run.wall_s,
                     run.wall_s > 0 ? run.result.summary.makespan_s / run.wall_s : 0.0, dir.string());
  if (report) {
    out << fmt::format("report: {}\n", run.report_file.string());
  }
  return 0;
}

// The search's options from `epsim slo`'s command line (defaults already in `o`).
void read_slo_options(const po::variables_map& vm, SloSearchOptions& o) {
  o.target = vm["target"].as<double>();
  o.tolerance = vm["tolerance"].as<double>();
  o.max_probes = vm["max-probes"].as<int>();
  o.replications = vm["replications"].as<int>();
  o.duration_s = vm["duration"].as<double>();
  o.measured_requests = vm["requests"].as<std::int64_t>();
  o.warmup_fraction = vm["warmup"].as<double>();
  o.cooldown_fraction = vm["cooldown"].as<double>();
  o.steady_state = vm.count("burst") == 0;
  if (vm.count("rates")) {
    o.rates = parse_number_list(vm["rates"].as<std::string>(), "--rates");
    for (const double r : o.rates) {
      if (!(r >= workloads::k_min_rate_rps && r <= workloads::k_max_rate_rps)) {
        throw UsageError(fmt::format("--rates: {:g} req/s is outside [{:g}, {:g}]", r, workloads::k_min_rate_rps,
                                     workloads::k_max_rate_rps));
      }
    }
  }
}

// Per replication the bracket [highest rate that held, lowest that failed) and the long probe at it, then
// the answer in one line.
void print_slo_answer(const SloSearchResult& r, const SloSearchOptions& o, const std::filesystem::path& path,
                      const std::filesystem::path& json_path, std::ostream& out) {
  for (const SloReplication& rep : r.replications) {
    const std::string who = o.replications > 1 ? fmt::format("replication {}: ", &rep - r.replications.data()) : "";
    const std::string high =
        rep.censored() ? "none failed: a lower bound" : fmt::format("{:.3f}", rep.bracket_high_rps);
    std::string confirm;
    if (rep.confirmation) {
      const SloProbe& c = *rep.confirmation;
      confirm =
          fmt::format("; held on a {:g}x window: attainment {:.1f} %, p90 TTFT {:.0f} ms, {} measured requests",
                      c.window_scale, 100.0 * c.summary.slo_attainment, c.summary.ttft_ms.p90, c.summary.requests);
    }
    out << fmt::format("  {}bracket [{:.3f}, {}] req/s{}\n", who, rep.max_rate_rps, high, confirm);
  }
  const std::string interval =
      r.max_rate.n >= 2 ? fmt::format(" (mean of {} replications; interval {}, their brackets widened by their spread)",
                                      r.max_rate.n, format_rate_interval(r.max_rate_rps, r.interval))
                        : "";
  const std::string files = fmt::format("curve in {}, summary in {}", path.string(), json_path.string());
  if (r.bracketed) {
    out << fmt::format("max sustainable rate at {:.0f} % SLO attainment: {:.3f} req/s{} ({} probes; {})\n",
                       100.0 * o.target, r.max_rate_rps, interval, r.probes.size(), files);
  } else if (r.max_rate_rps > 0.0) {
    out << fmt::format(
        "not every replication found rates on both sides of {:.0f} % SLO attainment; highest rate that held: "
        "{}{:.3f} req/s{} ({})\n",
        100.0 * o.target, r.interval.censored > 0 ? ">= " : "", r.max_rate_rps, interval, files);
  } else {
    out << fmt::format("no probed rate reaches {:.0f} % SLO attainment ({})\n", 100.0 * o.target, files);
  }
}

int cmd_slo(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description d = common_options();
  SloSearchOptions o;
  d.add_options()("config", po::value<std::string>(), "TOML experiment file (default: the embedded demo)")(
      "set", po::value<std::vector<std::string>>()->composing(), "override a config key: --set key=value")(
      "target", po::value<double>()->default_value(0.9), "SLO attainment to sustain")(
      "tolerance", po::value<double>()->default_value(0.02), "stop when (hi - lo) / hi is this small")(
      "max-probes", po::value<int>()->default_value(40), "give up after this many simulations (per replication)")(
      "rates", po::value<std::string>(), "probe this grid instead of searching: comma-separated req/s, ascending")(
      "replications", po::value<int>()->default_value(1),
      "search again with the workload seed + 1, + 2...: the answer gets a 95 % interval")(
      "duration", po::value<double>()->default_value(0.0),
      "seconds of arrivals per probe (default: enough for --requests measured requests)")(
      "requests", po::value<std::int64_t>()->default_value(o.measured_requests),
      "measured requests per probe when the duration is automatic")(
      "warmup", po::value<double>()->default_value(o.warmup_fraction), "share of the arrivals excluded at the start")(
      "cooldown", po::value<double>()->default_value(o.cooldown_fraction), "share excluded at the end")(
      "burst", "no steady state: every probe serves the config's own workload (how a fixed burst drains)")(
      "out", po::value<std::string>(),
      "write the attainment-vs-rate curve here (default: results/<config>-slo.csv), the answer beside it as .json")(
      "seed", po::value<std::string>(), "override run.seed");
  po::positional_options_description pos;
  pos.add("config", 1);
  const po::variables_map vm = parse_options(args, d, pos);
  if (vm.count("help")) {
    out << "usage: epsim slo [CONFIG] [--target 0.9] [--rates 10,20,40] [--replications N] [--out FILE] [--set "
           "key=value]...\n\n"
        << d;
    return 0;
  }
  set_log_level(vm["log-level"].as<std::string>());
  ExperimentConfig cfg = load_experiment(vm, err);
  if (vm.count("seed")) {
    cfg.seed = seed_option(vm);
  }
  read_slo_options(vm, o);
  const std::string stem =
      vm.count("config") ? std::filesystem::path(vm["config"].as<std::string>()).stem().string() : "demo";
  const std::filesystem::path path = vm.count("out") ? vm["out"].as<std::string>() : "results/" + stem + "-slo.csv";
  core::check_output_file(path);  // before the search, not after it
  // The answer (brackets, confirmations) beside the curve.
  const std::filesystem::path json_path = std::filesystem::path(path).replace_extension(".json");
  if (json_path == path) {
    throw UsageError("--out names the curve's CSV file; the summary goes beside it as .json");
  }
  core::check_output_file(json_path);
  SloSearchResult r;
  try {
    r = search_max_rate(cfg, o, [&](const SloProbe& p) {
      // A probe whose queue a configured cap held back measures that setting (docs/serving.md).
      const std::string limits = limits_line(p.summary.caps);
      out << fmt::format(
          "  {}rate {:>9.3f} req/s: attainment {:5.1f} % (TTFT {:5.1f} %, TPOT {:5.1f} %), goodput {:.2f} req/s, "
          "{} measured requests{}{}\n",
          o.replications > 1 ? fmt::format("replication {}: ", p.replication) : "", p.rate_rps,
          100.0 * p.summary.slo_attainment, 100.0 * p.summary.slo_ttft_attainment,
          100.0 * p.summary.slo_tpot_attainment, p.summary.goodput_rps, p.summary.requests,
          p.confirmation ? fmt::format(" (long window, {:g}x)", p.window_scale) : "",
          limits.empty() ? "" : "\n    " + limits);
    });
  } catch (const core::ConfigError&) {
    throw;
  } catch (const core::Error& e) {
    throw UsageError(e.what());
  }
  if (!path.parent_path().empty()) {
    std::filesystem::create_directories(path.parent_path());
  }
  core::write_file_atomically(path, slo_curve_csv(r));
  core::write_file_atomically(json_path, slo_result_json(r, o));
  for (const std::string& w : r.warnings) {
    warn(err, w);
  }
  print_slo_answer(r, o, path, json_path, out);
  return 0;
}

int cmd_validate(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description d = common_options();
  d.add_options()("config", po::value<std::string>(), "TOML experiment file")(
      "set", po::value<std::vector<std::string>>()->composing(), "override a config key: --set key=value");
  po::positional_options_description pos;
  pos.add("config", 1);
  const po::variables_map vm = parse_options(args, d, pos);
  if (vm.count("help")) {
    out << "usage: epsim validate CONFIG [--set key=value]...\n       epsim validate STUDY.toml\n\nChecks a config as "
           "run does: parses it and builds the simulation (placement, cost curves, memory plan, inputs) without "
           "running it. A study file (one with a [study] table) is checked as sweep does: the file, then every "
           "point's configuration and simulation.\n\n"
        << d;
    return 0;
  }
  if (!vm.count("config")) {
    throw UsageError("validate needs a CONFIG file");
  }
  set_log_level(vm["log-level"].as<std::string>());
  if (is_study_file(vm["config"].as<std::string>())) {
    if (vm.count("set")) {
      throw UsageError("--set applies to an experiment; a study's base and axes are set in its file");
    }
    validate_study(vm["config"].as<std::string>(), out, err);
    return 0;
  }
  out << validate_experiment(load_experiment(vm, err));
  return 0;
}

int cmd_list(const std::vector<std::string>& args, std::ostream& out, std::ostream& /*err*/) {
  po::options_description d = common_options();
  d.add_options()("what", po::value<std::string>()->default_value("all"),
                  "models, gpus, clusters, links, policies, keys or all (all but keys)")(
      "section", po::value<std::string>()->default_value(""), "keys: only this section's (e.g. scheduler)")(
      "markdown", po::bool_switch(), "keys: as a markdown table (docs/configuration.md)")(
      "except", po::value<std::vector<std::string>>()->composing(),
      "keys: leave out this subsection's keys (repeatable; one documented on its own)")(
      "from-hf", po::value<std::string>(), "models: the [model] table read from this Hugging Face config.json")(
      "hf-ignore", po::value<std::vector<std::string>>()->composing(),
      "with --from-hf: accept this unknown config.json field (JSON path; repeatable), as [model] hf_ignore");
  po::positional_options_description pos;
  pos.add("what", 1).add("section", 1);
  const po::variables_map vm = parse_options(args, d, pos);
  if (vm.count("help")) {
    out << "usage: epsim list [models|gpus|clusters|links|policies]\n       epsim list keys [SECTION] "
           "[--markdown] [--except SUBSECTION]...\n       epsim list models --from-hf CONFIG.json "
           "[--hf-ignore FIELD]...\n\n"
        << d;
    return 0;
  }
  const std::string what = vm["what"].as<std::string>();
  const std::string section = vm["section"].as<std::string>();
  const bool markdown = vm["markdown"].as<bool>();
  const std::vector<std::string> except =
      vm.count("except") ? vm["except"].as<std::vector<std::string>>() : std::vector<std::string>{};
  const std::vector<std::string> hf_ignore =
      vm.count("hf-ignore") ? vm["hf-ignore"].as<std::vector<std::string>>() : std::vector<std::string>{};
  if (vm.count("from-hf") || !hf_ignore.empty()) {
    if (what != "models" || !vm.count("from-hf")) {
      throw UsageError(
          "list: --from-hf FILE goes with \"models\" (epsim list models --from-hf CONFIG.json), "
          "--hf-ignore with --from-hf");
    }
    print_hf_model(vm["from-hf"].as<std::string>(), hf_ignore, out);
    return 0;
  }
  if (what == "keys") {
    print_config_keys(section, except, markdown, out);
    return 0;
  }
  if (!section.empty() || markdown || !except.empty()) {
    throw UsageError(
        "list: a SECTION, --markdown and --except go with \"keys\" only (epsim list keys [SECTION] [--markdown])");
  }
  if (!print_listing(what, out)) {
    throw UsageError("list: unknown \"" + what +
                     "\"; valid values are: models, gpus, clusters, links, policies, keys (epsim list keys [SECTION])");
  }
  return 0;
}

}  // namespace

namespace {

// std::invalid_argument from `place`, `trace`, `sweep` and `report` is their usage error.
template <int (*Command)(const std::vector<std::string>&, std::ostream&, std::ostream&)>
int usage_checked(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  try {
    return Command(args, out, err);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

// The same for commands without an error stream.
template <int (*Command)(const std::vector<std::string>&, std::ostream&)>
int without_err(const std::vector<std::string>& args, std::ostream& out, std::ostream& /*err*/) {
  return Command(args, out);
}

struct Command {
  std::string_view name;
  std::string_view synopsis;
  std::string_view summary;
  int (*run)(const std::vector<std::string>&, std::ostream& out, std::ostream& err);
};

// Every command, as `epsim --help` lists it: a new command is one row.
constexpr std::array<Command, 12> k_commands{{
    {"run", "run [CONFIG]", "run a simulation (no CONFIG: the embedded demo) and write a results directory", cmd_run},
    {"validate", "validate CONFIG", "check a configuration or a study file without running it", cmd_validate},
    {"list", "list [WHAT]",
     "list presets and policies: models, gpus, clusters, links, policies (default: all); config keys: keys [SECTION]; "
     "a Hugging Face config.json as [model]: models --from-hf FILE",
     cmd_list},
    {"cost", "cost", "a model's per-layer cost curve on a GPU, or one collective's time (--collective)", cost_command},
    {"calibrate", "calibrate", "measured GPU profiles: import them, fit presets to them, check the model against them",
     usage_checked<calibrate_command>},
    {"trace", "trace", "make, inspect and convert routing traces: gen, stats, convert",
     usage_checked<without_err<trace_command>>},
    {"workload", "workload", "look at a request trace before replaying it: stats (csv, mooncake, azure, burstgpt)",
     usage_checked<without_err<workload_command>>},
    {"slo", "slo [CONFIG]", "find the highest arrival rate whose SLO attainment stays >= --target", cmd_slo},
    {"place", "place", "compute a placement (any policy) from a load file: epsim or vLLM format",
     usage_checked<without_err<place_command>>},
    {"sweep", "sweep STUDY", "run a study (grid, what-if, Monte Carlo, policy comparison) with intervals",
     usage_checked<sweep_command>},
    {"report", "report DIR...", "an HTML report (+ each figure's SVG and CSV) of study and run directories",
     usage_checked<report_command>},
    {"accuracy", "accuracy [SUITE]", "published measurements against epsim's predictions, in and out of sample",
     usage_checked<accuracy_command>},
}};

std::string usage() {
  std::string out = "usage: epsim <command> [options]\n\ncommands:\n";
  for (const Command& c : k_commands) {
    out += fmt::format("  {:<17} {}\n", c.synopsis, c.summary);
  }
  out +=
      "\noptions:\n  --help            show help (also: epsim <command> --help)\n  --version         print the "
      "version and the commit it was built from\n";
  return out;
}

}  // namespace

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  use_stderr_logger();
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    out << usage();
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version") {
    out << version_text();
    return 0;
  }
  const std::string& cmd = args[0];
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  const auto it = std::find_if(k_commands.begin(), k_commands.end(), [&](const Command& c) { return c.name == cmd; });
  if (it == k_commands.end()) {
    std::vector<std::string_view> names;
    names.reserve(k_commands.size());
    for (const Command& c : k_commands) {
      names.push_back(c.name);
    }
    err << "epsim: unknown command \"" << core::terminal_safe(core::excerpt(cmd))
        << "\"; valid commands are: " << fmt::format("{}", fmt::join(names, ", ")) << "\n";
    return 2;
  }
  // Messages quote user input (keys, labels, file contents): control characters are shown, never sent.
  try {
    return it->run(rest, out, err);
  } catch (const UsageError& e) {
    err << "epsim " << cmd << ": " << core::terminal_safe(e.what()) << "\n";
    return 2;
  } catch (const core::ConfigError& e) {
    err << "config error: " << core::terminal_safe(e.what()) << "\n";
    return 2;
  } catch (const std::exception& e) {
    err << "epsim " << cmd << ": error: " << core::terminal_safe(e.what()) << "\n";
    return 1;
  }
}

}  // namespace epsim::experiments
