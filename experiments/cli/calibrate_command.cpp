// SPDX-License-Identifier: Apache-2.0
#include "experiments/cli/calibrate_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <ostream>
#include <stdexcept>

#include "calibration/collective_fit.hpp"
#include "calibration/fit_report.hpp"
#include "calibration/kernel_fit.hpp"
#include "calibration/measured_work.hpp"
#include "calibration/measurement_table.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "experiments/assembly/builders.hpp"
#include "experiments/assembly/experiment_config.hpp"
#include "experiments/assembly/row_pricing.hpp"
#include "experiments/cli/calibrate_import.hpp"
#include "experiments/cli/command_line.hpp"
#include "hardware/measured_cost_model.hpp"
#include "hardware/roofline.hpp"
#include "hardware/spec_toml.hpp"

namespace po = boost::program_options;

namespace epsim::experiments {
namespace {

bool wants_help(const std::vector<std::string>& args) {
  return std::find(args.begin(), args.end(), "--help") != args.end() ||
         std::find(args.begin(), args.end(), "-h") != args.end();
}

hardware::GpuSpec gpu_option(const std::string& name) {
  if (const std::string m = hardware::gpu_presets().unknown_message(name); !m.empty()) {
    throw std::invalid_argument("--gpu: " + m);
  }
  return hardware::load_gpu_preset(name);
}

hardware::ClusterSpec cluster_option(const std::string& name) {
  if (const std::string m = hardware::cluster_presets().unknown_message(name); !m.empty()) {
    throw std::invalid_argument("--cluster: " + m);
  }
  return hardware::load_cluster_preset(name);
}

// The rows of one GPU label (`--label`, else the table's only one); picking none is a usage error.
std::vector<calibration::Measurement> rows_of(const calibration::MeasurementTable& t, const std::string& label,
                                              const std::string& source) {
  try {
    return calibration::rows_of_label(t, label, source, "--label");
  } catch (const core::Error& e) {
    throw std::invalid_argument(e.what());
  }
}

// The cluster collective rows run on: --cluster, else the rows' own `cluster` (one for all).
hardware::ClusterSpec collective_cluster(const po::variables_map& vm, std::span<const calibration::Measurement> rows) {
  if (vm.count("cluster")) {
    return cluster_option(vm["cluster"].as<std::string>());
  }
  std::string named;
  for (const auto& m : rows) {
    if (!calibration::op_info(m.op).collective) {
      continue;
    }
    if (m.cluster.empty() || (!named.empty() && m.cluster != named)) {
      throw std::invalid_argument(fmt::format(
          "line {}: collective rows need a cluster for their links: give --cluster, or one `cluster` for every row",
          m.line));
    }
    named = m.cluster;
  }
  if (const std::string m = hardware::cluster_presets().unknown_message(named); !m.empty()) {
    throw core::Error("column 'cluster': " + m);
  }
  return hardware::load_cluster_preset(named);
}

std::string commented(const std::string& text) {
  std::string out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    out += "# " + text.substr(pos, end - pos) + "\n";
    pos = end + 1;
  }
  return out;
}

int fit_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description d("calibrate fit options");
  d.add_options()("help,h", "show this help")("table", po::value<std::string>(), "the measurement table (CSV)")(
      "gpu", po::value<std::string>(), "the GPU preset (name or .toml file) the fit starts from and rewrites")(
      "out", po::value<std::string>(), "write the calibrated GPU preset here (.toml)")(
      "label", po::value<std::string>(), "fit the rows of this `gpu` label (a table of several GPUs needs one)")(
      "cluster", po::value<std::string>(), "collectives: the cluster preset (name or .toml) whose links are fitted")(
      "cluster-out", po::value<std::string>(), "collectives: write the calibrated cluster preset here (.toml)")(
      "folds", po::value<int>()->default_value(5), "k of the k-fold held-out errors");
  if (wants_help(args)) {
    out << "usage: epsim calibrate fit TABLE --gpu NAME|FILE --out FILE.toml [--label L] [--cluster NAME|FILE "
           "--cluster-out FILE.toml] [--folds K]\n\n"
        << d;
    return 0;
  }
  po::positional_options_description pos;
  pos.add("table", 1);
  const po::variables_map vm = parse_command_line(args, d, pos);
  check_output_options(vm, {"out", "cluster-out"});
  if (!vm.count("table")) {
    throw std::invalid_argument("give the measurement table: epsim calibrate fit TABLE --gpu NAME --out FILE");
  }
  const int folds = vm["folds"].as<int>();
  if (folds < 2 || folds > 100) {
    throw std::invalid_argument(fmt::format("--folds: expected 2 .. 100, got {}", folds));
  }
  const std::string source = vm["table"].as<std::string>();
  const auto table = calibration::read_measurement_table(source);
  const auto rows = rows_of(table, vm.count("label") ? vm["label"].as<std::string>() : "", source);
  const bool kernels =
      std::any_of(rows.begin(), rows.end(), [](const auto& m) { return !calibration::op_info(m.op).collective; });
  const bool collectives =
      std::any_of(rows.begin(), rows.end(), [](const auto& m) { return calibration::op_info(m.op).collective; });
  // Both fits first, then every file checked with the readers' own validator, then written: a fit never
  // leaves a preset that `run`, `cost` or `calibrate check` refuse, nor one file of two.
  struct Output {
    std::string path;
    std::string text;
  };
  std::vector<Output> files;
  std::string printed;
  if (kernels) {
    if (!vm.count("gpu") || !vm.count("out")) {
      throw std::invalid_argument("kernel rows are fitted to a GPU preset: give --gpu NAME|FILE and --out FILE.toml");
    }
    const std::string gpu_name = vm["gpu"].as<std::string>();
    calibration::KernelFitOptions o;
    o.folds = folds;
    const calibration::KernelFit fit = calibration::fit_kernels(gpu_option(gpu_name), rows, o);
    const std::string report = calibration::kernel_fit_report(fit);
    hardware::GpuSpec gpu = fit.gpu;
    gpu.name += " (calibrated)";
    const std::string header = fmt::format(
        "# {}: GPU preset fitted by `epsim calibrate fit` to {} ({} rows), from GPU preset {}.\n"
        "# Per kernel family: fitted parameters (relative standard error) and {}-fold held-out errors.\n{}",
        gpu.name, source, rows.size(), gpu_name, folds, commented(report));
    files.push_back({vm["out"].as<std::string>(), hardware::gpu_spec_toml(gpu, header)});
    try {
      hardware::read_gpu_spec_toml(files.back().text, files.back().path);
    } catch (const core::Error& e) {
      throw core::Error(
          fmt::format("calibrate fit: the fitted GPU preset would be refused by every reader ({}); "
                      "nothing written",
                      e.what()));
    }
    printed += fmt::format(
        "kernels: {} rows of {} fitted from GPU preset {} ({}-fold held-out errors)\n\n{}\nwrote {}\n",
        fit.families.empty() ? 0 : rows.size(), source, gpu_name, folds, report, vm["out"].as<std::string>());
  }
  if (collectives) {
    const hardware::ClusterSpec base = collective_cluster(vm, rows);
    const calibration::CollectiveFit fit = calibration::fit_collectives(base, rows, price_collective_row_us, folds);
    const std::string report = calibration::collective_fit_report(fit);
    printed += fmt::format("{}collectives: fitted on cluster {} ({}-fold held-out errors)\n\n{}", kernels ? "\n" : "",
                           base.name, folds, report);
    if (vm.count("cluster-out")) {
      hardware::ClusterSpec c = fit.cluster;
      c.name += " (calibrated)";
      const std::string header = fmt::format("# {}: cluster preset fitted by `epsim calibrate fit` to {}.\n{}", c.name,
                                             source, commented(report));
      files.push_back({vm["cluster-out"].as<std::string>(), hardware::cluster_spec_toml(c, header)});
      try {
        hardware::read_cluster_spec_toml(files.back().text, files.back().path);
      } catch (const core::Error& e) {
        throw core::Error(fmt::format(
            "calibrate fit: the fitted cluster preset would be refused by every reader ({}); nothing written",
            e.what()));
      }
      printed += "wrote " + vm["cluster-out"].as<std::string>() + "\n";
    } else {
      err << "epsim: warning: the calibrated cluster was not written: give --cluster-out FILE.toml\n";
    }
  }
  for (const Output& f : files) {
    core::write_file_atomically(f.path, f.text);
  }
  out << printed;
  return 0;
}

// What prices a check's rows: a GPU for kernels, a cluster for collectives, each from the options, the
// config, or the row's own `gpu` / `cluster` name.
struct CheckModels {
  std::optional<hardware::GpuSpec> gpu;
  std::optional<hardware::ClusterSpec> cluster;
  std::map<std::string, hardware::GpuSpec> by_label;
  /// The config's cluster as a run builds it (speed factors, stress weighting, each pool's GPU): prices
  /// the kernel rows that name a gpu_id when the GPU is the config's (no --gpu).
  std::unique_ptr<hardware::CostModel> run_cost;

  /// A kernel row's price: on its gpu_id of the config's cluster, else on its GPU at nominal speed.
  double kernel_us(const calibration::Measurement& m, const std::string& source, const hardware::GpuSpec*& priced_on) {
    if (run_cost && m.gpu_id >= 0) {
      const hardware::RooflineCostModel& run = hardware::roofline_of(*run_cost);
      if (m.gpu_id >= run.num_gpus()) {
        throw core::Error(fmt::format("{}:{}: column 'gpu_id': {} is not a GPU of the config's cluster (0 .. {})",
                                      source, m.line, m.gpu_id, run.num_gpus() - 1));
      }
      priced_on = &run.gpu_of(m.gpu_id);
      return run.kernel_ns(m.gpu_id, calibration::kernel_work(*priced_on, m)) / 1e3;
    }
    priced_on = &gpu_for(m, source);
    return price_kernel_row_us(m, *priced_on);
  }

  const hardware::GpuSpec& gpu_for(const calibration::Measurement& m, const std::string& source) {
    if (gpu) {
      return *gpu;
    }
    auto it = by_label.find(m.gpu);
    if (it == by_label.end()) {
      if (!hardware::gpu_presets().contains(m.gpu)) {
        throw core::Error(
            fmt::format("{}:{}: gpu \"{}\" is neither a GPU preset nor a preset file: give --gpu or "
                        "--config",
                        source, m.line, m.gpu));
      }
      it = by_label.emplace(m.gpu, hardware::load_gpu_preset(m.gpu)).first;
    }
    return it->second;
  }
  hardware::ClusterSpec cluster_for(const calibration::Measurement& m, const std::string& source) const {
    if (cluster) {
      return *cluster;
    }
    if (m.cluster.empty() || !hardware::cluster_presets().contains(m.cluster)) {
      throw core::Error(
          fmt::format("{}:{}: a collective row needs a cluster: give --cluster or --config, or name a "
                      "cluster preset in its `cluster` column",
                      source, m.line));
    }
    return hardware::load_cluster_preset(m.cluster);
  }
};

int check_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description d("calibrate check options");
  d.add_options()("help,h", "show this help")("table", po::value<std::string>(), "the measurement table (CSV)")(
      "config", po::value<std::string>(), "price with this experiment's GPU and cluster")(
      "set", po::value<std::vector<std::string>>()->composing(), "with --config: override a config key")(
      "gpu", po::value<std::string>(), "price every kernel row on this GPU preset (name or .toml file)")(
      "cluster", po::value<std::string>(), "price every collective row on this cluster preset (name or .toml)")(
      "out", po::value<std::string>(), "write the table with a predicted_us column added");
  if (wants_help(args)) {
    out << "usage: epsim calibrate check TABLE [--config TOML [--set key=value]...] [--gpu NAME|FILE] [--cluster "
           "NAME|FILE] [--out FILE.csv]\n\n"
        << d;
    return 0;
  }
  po::positional_options_description pos;
  pos.add("table", 1);
  const po::variables_map vm = parse_command_line(args, d, pos);
  check_output_options(vm, {"out", "cluster-out"});
  if (!vm.count("table")) {
    throw std::invalid_argument("give the measurement table: epsim calibrate check TABLE");
  }
  CheckModels models;
  if (vm.count("config")) {
    const auto sets = vm.count("set") ? vm["set"].as<std::vector<std::string>>() : std::vector<std::string>{};
    const ExperimentConfig cfg = load_config(vm["config"].as<std::string>(), sets);
    for (const std::string& w : cfg.warnings) {
      err << "epsim: warning: " << w << "\n";
    }
    models.gpu = cfg.gpu;
    models.cluster = cfg.cluster;
    if (!vm.count("gpu")) {
      models.run_cost = make_cost_model(cfg);
    }
  }
  if (vm.count("gpu")) {
    models.gpu = gpu_option(vm["gpu"].as<std::string>());
  }
  if (vm.count("cluster")) {
    models.cluster = cluster_option(vm["cluster"].as<std::string>());
  }
  const std::string source = vm["table"].as<std::string>();
  const auto table = calibration::read_measurement_table(source);
  std::vector<calibration::CheckGroup> groups;
  std::vector<std::string> predicted;
  predicted.reserve(table.rows.size());
  for (const calibration::Measurement& m : table.rows) {
    double us = 0.0;
    std::string_view regime;
    if (calibration::op_info(m.op).collective) {
      const hardware::ClusterSpec c = models.cluster_for(m, source);
      us = price_collective_row_us(m, c);
      calibration::Measurement tiny = m;
      tiny.bytes = 1.0;
      regime = calibration::regime_name(price_collective_row_us(tiny, c) > 0.5 * us ? calibration::Regime::latency
                                                                                    : calibration::Regime::bandwidth);
    } else {
      const hardware::GpuSpec* g = nullptr;
      us = models.kernel_us(m, source, g);
      regime = calibration::regime_name(calibration::kernel_regime(*g, m));
    }
    calibration::add_check(groups, calibration::op_name(m.op), regime, us, m.latency_us);
    predicted.push_back(fmt::format("{:.6g}", us));
  }
  out << fmt::format("{}: {} rows priced by the model (error = (predicted - measured) / measured)\n\n{}", source,
                     table.rows.size(), calibration::check_report(groups));
  if (vm.count("gpu")) {  // rows priced on one GPU preset: say where they ran another library than it describes
    out << calibration::library_notes(gpu_option(vm["gpu"].as<std::string>()), table.rows);
  }
  if (vm.count("out")) {
    const std::vector<std::string> added{"predicted_us"};
    const std::vector<std::vector<std::string>> cells{predicted};
    core::write_file_atomically(vm["out"].as<std::string>(),
                                calibration::format_measurement_table(table, added, cells));
    out << "wrote " << vm["out"].as<std::string>() << "\n";
  }
  return 0;
}

}  // namespace

int calibrate_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const std::string usage =
      "usage: epsim calibrate import FORMAT FILE... --out TABLE.csv\n"
      "       epsim calibrate fit TABLE --gpu NAME|FILE --out FILE.toml [--cluster NAME --cluster-out FILE.toml]\n"
      "       epsim calibrate check TABLE [--config TOML] [--gpu NAME|FILE] [--out FILE.csv]\n"
      "(epsim calibrate SUBCOMMAND --help for each; the table's columns: docs/calibration.md)\n";
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    out << usage;
    return args.empty() ? 2 : 0;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "import") {
    return calibrate_import_command(rest, out, err);
  }
  if (args[0] == "fit") {
    return fit_command(rest, out, err);
  }
  if (args[0] == "check") {
    return check_command(rest, out, err);
  }
  throw std::invalid_argument("unknown calibrate subcommand \"" + args[0] + "\"; valid: import, fit, check");
}

}  // namespace epsim::experiments
