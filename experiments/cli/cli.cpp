// SPDX-License-Identifier: Apache-2.0
#include "experiments/cli/cli.hpp"

#include <fmt/format.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <toml++/toml.h>
#include <algorithm>
#include <array>
#include <boost/program_options.hpp>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <optional>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/file_kind.hpp"
#include "core/message_text.hpp"
#include "core/signal_cleanup.hpp"
#include "core/staged_directory.hpp"
#include "experiments/assembly/build_simulation.hpp"
#include "experiments/assembly/experiment_config.hpp"
#include "experiments/assembly/results_writer.hpp"
#include "experiments/assembly/run_outputs.hpp"
#include "experiments/cli/accuracy_command.hpp"
#include "experiments/cli/calibrate_command.hpp"
#include "experiments/cli/command_line.hpp"
#include "experiments/cli/cost_command.hpp"
#include "experiments/cli/listings.hpp"
#include "experiments/cli/place_command.hpp"
#include "experiments/cli/report_command.hpp"
#include "experiments/cli/study_preview.hpp"
#include "experiments/cli/sweep_command.hpp"
#include "experiments/cli/trace_commands.hpp"
#include "experiments/cli/version_text.hpp"
#include "experiments/studies/slo_search.hpp"
#include "report/svg_export.hpp"
#include "workloads/request_generator.hpp"
#include "workloads/routing_source.hpp"
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

// Warnings and logs go to stderr ("epsim: warning: ..."), never into a command's output.
void use_stderr_logger() {
  static const bool once = [] {
    auto logger = spdlog::stderr_logger_mt("epsim-stderr");
    logger->set_pattern("epsim: %l: %v");
    spdlog::set_default_logger(logger);
    return true;
  }();
  (void)once;
}

void set_log_level(const std::string& level) {
  const auto l = spdlog::level::from_str(level);
  if (l == spdlog::level::off && level != "off") {
    throw UsageError("--log-level: unknown level \"" + level + "\"; valid: trace, debug, info, warn, error, off");
  }
  spdlog::set_level(l);
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
  if (report) {
    cfg.outputs.steps_csv = true;
    cfg.outputs.events_csv = true;
    cfg.outputs.gpu_layers_csv = true;
  }
  const std::string stem =
      vm.count("config") ? std::filesystem::path(vm["config"].as<std::string>()).stem().string() : "demo";
  const std::filesystem::path dir = vm.count("out") ? vm["out"].as<std::string>() : "results/" + stem;
  spdlog::info("config {} loaded: {} on {} GPUs", cfg.source, cfg.model.name, cfg.cluster.num_gpus());
  // The results directory is staged beside --out and replaces it as a unit at the end; making it now
  // reports a bad --out before the simulation, not after.
  core::StagedDirectory staged(dir, run_output_names());

  const auto t0 = std::chrono::steady_clock::now();
  serving::Simulator sim(build_simulation(cfg, profile_pool_windows(cfg)));
  const RunOutputs outputs(sim, cfg);
  // Progress on stderr once a run has taken a few seconds: simulated time against the workload's
  // duration, or finished requests against its count.
  auto last_report = t0;
  sim.set_progress(
      [&](const serving::RunProgress& p) {
        const auto now = std::chrono::steady_clock::now();
        if (now - t0 < std::chrono::seconds(3) || now - last_report < std::chrono::seconds(1)) {
          return;
        }
        last_report = now;
        const double sim_s = core::to_seconds(p.now_ns);
        const std::string target =
            cfg.workload.duration_s > 0.0 ? fmt::format(" of ~{:.0f} s", cfg.workload.duration_s) : "";
        const std::string of = cfg.workload.num_requests > 0 ? fmt::format("/{}", cfg.workload.num_requests) : "";
        err << fmt::format("epsim run: simulated {:.1f} s{}, {}{} requests finished ({} arrived)\n", sim_s, target,
                           p.requests_finished, of, p.requests_arrived)
            << std::flush;
      },
      2048);
  const serving::SimulationResult res = sim.run();
  if (res.routing_loops > 0) {
    warn(err, fmt::format("{}: the routing trace {} looped {} time(s): the run outlasts it, so its routing repeats",
                          cfg.source, cfg.routing.trace.file, res.routing_loops));
  }
  if (const workloads::GroupLimitReport& g = res.routing_group_limit; g.tokens_over_limit > 0) {
    // A measured trace is still data: the run goes on, but its routing breaks the model's group limit.
    warn(err, fmt::format("{}: the routing trace {} breaks the model's group limit (at most {} of {} expert groups per "
                          "token): {} of {} tokens (token x MoE layer, {:.2f} %) reach more, up to {} groups; first "
                          "at step {}, MoE layer {}",
                          cfg.source, cfg.routing.trace.file, cfg.model.topk_group, cfg.model.expert_groups,
                          g.tokens_over_limit, g.tokens_checked,
                          100.0 * static_cast<double>(g.tokens_over_limit) / static_cast<double>(g.tokens_checked),
                          g.max_groups, g.first_step, g.first_layer));
  }
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::filesystem::path report_file;
  {
    // Results, report and the swap into place are not cut by Ctrl-C (it takes effect right after).
    const core::SignalBlock block;
    write_results(staged.path(), cfg, res, outputs.logs());
    if (report) {
      // SVGs need Node.js; the run's report is still whole without them (the page draws its own figures).
      const bool svg = report::program_available(report::node_program());
      if (!svg) {
        warn(err, fmt::format("no {} on the PATH: report figures written without their SVGs (Debian: apt install "
                              "nodejs)",
                              report::node_program()));
      }
      report_file = staged.target() / write_run_report(staged.path(), svg, staged.target()).filename();
    }
    staged.commit();
  }
  out << human_summary(cfg, res);
  out << fmt::format("wall time {:.2f} s ({:.0f}x real time); results in {}\n", wall_s,
                     wall_s > 0 ? res.summary.makespan_s / wall_s : 0.0, dir.string());
  if (report) {
    out << fmt::format("report: {}\n", report_file.string());
  }
  return 0;
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
  // Per replication: the bracket [highest rate that held, lowest that failed) and the long probe at it.
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
  const ExperimentConfig cfg = load_experiment(vm, err);
  // Every check run makes before simulating is made here by the same code: the simulation is built
  // (placement, cost curves, load window, memory plan, routing source, arrivals), just not run.
  const serving::Simulator sim(build_simulation(cfg, profile_pool_windows(cfg)));
  std::string workload =
      fmt::format("{} requests at {} req/s", cfg.workload.num_requests, cfg.workload.arrivals.rate_rps);
  if (cfg.workload.arrivals.kind == workloads::ArrivalConfig::Kind::replay) {
    // run reads the replayed rows as it goes; every row it would read is read here, so a bad row deep in
    // the file (or a file without rows) fails here too.
    workloads::RequestGenerator rows(cfg.workload, core::RandomStreams(cfg.seed_of(SeedFamily::workload)));
    std::int64_t n = 0;
    while (rows.next()) {
      ++n;
    }
    workload = fmt::format("replays {} request(s) from {}", n, cfg.workload.arrivals.replay_file);
  }
  out << fmt::format("{}: ok ({} on {} x {} GPUs, {}, {})\n", cfg.source, cfg.model.name, cfg.cluster.num_gpus(),
                     cfg.gpu.name, ep_description(cfg), workload);
  return 0;
}

int cmd_list(const std::vector<std::string>& args, std::ostream& out, std::ostream& /*err*/) {
  po::options_description d = common_options();
  d.add_options()("what", po::value<std::string>()->default_value("all"),
                  "models, gpus, clusters, links, policies, keys or all (all but keys)")(
      "section", po::value<std::string>()->default_value(""), "keys: only this section's (e.g. scheduler)")(
      "markdown", po::bool_switch(), "keys: as a markdown table (docs/configuration.md)")(
      "except", po::value<std::vector<std::string>>()->composing(),
      "keys: leave out this subsection's keys (repeatable; one documented on its own)");
  po::positional_options_description pos;
  pos.add("what", 1).add("section", 1);
  const po::variables_map vm = parse_options(args, d, pos);
  if (vm.count("help")) {
    out << "usage: epsim list [models|gpus|clusters|links|policies]\n       epsim list keys [SECTION] "
           "[--markdown] [--except SUBSECTION]...\n\n"
        << d;
    return 0;
  }
  const std::string what = vm["what"].as<std::string>();
  const std::string section = vm["section"].as<std::string>();
  const bool markdown = vm["markdown"].as<bool>();
  const std::vector<std::string> except =
      vm.count("except") ? vm["except"].as<std::vector<std::string>>() : std::vector<std::string>{};
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
constexpr std::array<Command, 11> k_commands{{
    {"run", "run [CONFIG]", "run a simulation (no CONFIG: the embedded demo) and write a results directory", cmd_run},
    {"validate", "validate CONFIG", "check a configuration or a study file without running it", cmd_validate},
    {"list", "list [WHAT]",
     "list presets and policies: models, gpus, clusters, links, policies (default: all); config keys: keys [SECTION]",
     cmd_list},
    {"cost", "cost", "a model's per-layer cost curve on a GPU, or one collective's time (--collective)", cost_command},
    {"calibrate", "calibrate", "measured GPU profiles: import them, fit presets to them, check the model against them",
     usage_checked<calibrate_command>},
    {"trace", "trace", "make, inspect and convert routing traces: gen, stats, convert",
     usage_checked<without_err<trace_command>>},
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
