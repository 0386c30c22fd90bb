// SPDX-License-Identifier: Apache-2.0
#include "experiments/cli/shape_cost.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <memory>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "core/error.hpp"
#include "experiments/assembly/builders.hpp"
#include "experiments/assembly/experiment_config.hpp"
#include "experiments/cli/command_line.hpp"
#include "hardware/measured_cost_model.hpp"
#include "hardware/roofline.hpp"

namespace po = boost::program_options;

namespace epsim::experiments {
namespace {

using calibration::MeasuredOp;
using calibration::Measurement;

[[noreturn]] void usage(const std::string& what) {
  throw std::invalid_argument(what);
}

// The integer shape keys of the kernel ops, as the table's columns (dtype is not one).
std::int64_t Measurement::*int_key(std::string_view key) {
  std::int64_t Measurement::*member = calibration::shape_member(key);
  if (member == nullptr) {  // callers pass only the ops' integer keys
    throw std::logic_error("shape_cost: no integer shape key " + std::string(key));
  }
  return member;
}

// The op's shape columns, then its optional ones (the only optional one is expert_ffn's active_experts).
std::vector<std::string_view> op_keys(MeasuredOp op) {
  const auto& required = calibration::op_info(op).required;
  std::vector<std::string_view> keys(required.begin(), required.end());
  if (op == MeasuredOp::expert_ffn) {
    keys.emplace_back("active_experts");
  }
  return keys;
}

std::string joined(const std::vector<std::string_view>& names) {
  return fmt::format("{}", fmt::join(names, ", "));
}

// The op's keys with their defaults, for messages and --help.
std::string keys_help(MeasuredOp op) {
  std::string out = joined(op_keys(op));
  out.replace(out.find("dtype"), 5, "dtype (default bf16)");
  if (op == MeasuredOp::expert_ffn) {
    out += " (default: expected under uniform routing)";
  }
  return out;
}

std::string kernel_op_names() {
  std::vector<std::string_view> names;
  for (const calibration::OpInfo& i : calibration::measured_ops()) {
    if (!i.collective) {
      names.push_back(i.name);
    }
  }
  return joined(names);
}

MeasuredOp parse_kernel_op(const std::string& name) {
  MeasuredOp op{};
  if (!calibration::parse_op(name, op) || calibration::op_info(op).collective) {
    usage(
        fmt::format("--op: unknown kernel op \"{}\"; valid: {} (collectives: --collective)", name, kernel_op_names()));
  }
  return op;
}

// One value of `key` into row `m`.
void set_value(Measurement& m, std::string_view key, const std::string& value) {
  if (key == "dtype") {
    if (value != "bf16" && value != "fp8") {
      usage(fmt::format("--shape dtype: expected bf16 or fp8, got \"{}\"", value));
    }
    m.dtype = value == "fp8" ? hardware::Precision::fp8 : hardware::Precision::bf16;
    return;
  }
  std::int64_t v = 0;
  const char* end = value.data() + value.size();
  const auto [ptr, ec] = std::from_chars(value.data(), end, v);
  if (ec != std::errc() || ptr != end || v < 1) {
    usage(fmt::format("--shape {}: expected a positive whole number, got \"{}\"", key, value));
  }
  m.*int_key(key) = v;
}

std::vector<std::string> split_values(const std::string& key, const std::string& list) {
  std::vector<std::string> out = split_commas(list);
  if (std::any_of(out.begin(), out.end(), [](const std::string& v) { return v.empty(); })) {
    usage(fmt::format("--shape {}: expected a value or a comma-separated list, got \"{}\"", key, list));
  }
  return out;
}

std::string cell(const Measurement& m, std::string_view key) {
  if (key == "dtype") {
    return m.dtype == hardware::Precision::fp8 ? "fp8" : "bf16";
  }
  return std::to_string(m.*int_key(key));
}

}  // namespace

ShapeRequest parse_shape_request(const std::string& op_name, const std::vector<std::string>& shapes,
                                 const std::string& gpu) {
  ShapeRequest r;
  r.op = parse_kernel_op(op_name);
  const std::vector<std::string_view> keys = op_keys(r.op);
  std::map<std::string, std::vector<std::string>, std::less<>> values;
  for (const std::string& s : shapes) {
    const std::size_t eq = s.find('=');
    const std::string key = s.substr(0, eq);
    if (eq == std::string::npos || std::find(keys.begin(), keys.end(), key) == keys.end()) {
      usage(fmt::format("--shape: expected KEY=VALUES with a key of op {} ({}), got \"{}\"", op_name, keys_help(r.op),
                        s));
    }
    if (values.count(key)) {
      usage(fmt::format("--shape: key {} given twice", key));
    }
    values[key] = split_values(key, s.substr(eq + 1));
    if (values[key].size() > 1) {
      if (!r.sweep.empty()) {
        usage(fmt::format("--shape: only one key may list values, got lists for {} and {}", r.sweep, key));
      }
      r.sweep = key;
    }
  }
  std::vector<std::string_view> missing;
  for (const std::string_view k : calibration::op_info(r.op).required) {
    if (k != "dtype" && !values.count(k)) {  // dtype defaults to bf16, as the table's empty cell
      missing.push_back(k);
    }
  }
  if (!missing.empty()) {
    usage(fmt::format("--shape: op {} is missing {}; its keys: {}", op_name, joined(missing), keys_help(r.op)));
  }
  const std::vector<std::string> sweep = r.sweep.empty() ? std::vector<std::string>{""} : values[r.sweep];
  r.rows.reserve(sweep.size());
  for (const std::string& swept : sweep) {
    Measurement m;
    m.gpu = gpu;
    m.op = r.op;
    m.latency_us = 1.0;  // a placeholder so the table's check accepts the row; the price replaces it
    for (const auto& [key, list] : values) {
      set_value(m, key, key == r.sweep ? swept : list.front());
    }
    try {
      calibration::validate_measurement(m, r.sweep.empty() ? "--shape" : fmt::format("--shape {}={}", r.sweep, swept));
    } catch (const core::Error& e) {
      usage(e.what());
    }
    r.rows.push_back(std::move(m));
  }
  return r;
}

std::vector<ShapeRow> price_shapes(const ShapeRequest& r, const hardware::CostModel& cost,
                                   const hardware::GpuSpec& spec, int gpu_index) {
  std::vector<ShapeRow> out;
  out.reserve(r.rows.size());
  for (const Measurement& m : r.rows) {
    ShapeRow row;
    row.shape = m;
    const hardware::KernelWork w = calibration::kernel_work(spec, m);
    if (m.op == MeasuredOp::expert_ffn) {
      row.pairs = static_cast<double>(m.tokens * m.top_k);
      row.active = calibration::active_experts_of(m);
      row.padded = calibration::padded_expert_tokens(spec, m);
    }
    row.flops = w.flops;
    row.bytes = w.bytes;
    row.regime = calibration::kernel_regime(spec, m);
    row.latency_us = cost.kernel_ns(gpu_index, w) / 1e3;
    row.shape.latency_us = row.latency_us;
    out.push_back(std::move(row));
  }
  return out;
}

std::string shape_table(const ShapeRequest& r, const std::vector<ShapeRow>& rows, const hardware::GpuSpec& spec,
                        double speed, bool csv) {
  const auto& keys = calibration::op_info(r.op).required;
  const bool expert = r.op == MeasuredOp::expert_ffn;
  std::string out;
  if (csv) {
    out = fmt::format("{}{},flops,bytes,regime,latency_us\n", fmt::join(keys, ","),
                      expert ? ",pairs,active_experts,padded_tokens" : "");
    for (const ShapeRow& row : rows) {
      for (const std::string_view k : keys) {
        out += cell(row.shape, k) + ",";
      }
      if (expert) {
        out += fmt::format("{},{},{},", row.pairs, row.active, row.padded);
      }
      out += fmt::format("{},{},{},{}\n", row.flops, row.bytes, calibration::regime_name(row.regime), row.latency_us);
    }
    return out;
  }
  out = fmt::format(
      "{} on {} (speed {}); regime: arithmetic intensity under half the ridge = memory, over twice = "
      "compute\n",
      calibration::op_name(r.op), spec.name, speed);
  if (expert) {
    out += fmt::format(
        "active experts: given, else expected under uniform routing; each active expert's share of the pairs "
        "rounded up and padded to the tile rule {}/{}\n",
        spec.moe_tile_small, spec.moe_tile_large);
  }
  const auto width = [](std::string_view k) { return std::max<std::size_t>(k.size(), 6); };
  for (const std::string_view k : keys) {
    out += fmt::format("{:>{}} ", k, width(k));
  }
  out += expert ? fmt::format("{:>8} {:>8} {:>9} ", "pairs", "active", "padded") : "";
  out += fmt::format("{:>11} {:>11} {:>8} {:>12}\n", "FLOPs", "bytes", "regime", "latency us");
  for (const ShapeRow& row : rows) {
    for (const std::string_view k : keys) {
      out += fmt::format("{:>{}} ", cell(row.shape, k), width(k));
    }
    out += expert ? fmt::format("{:>8} {:>8.2f} {:>9.1f} ", row.pairs, row.active, row.padded) : "";
    out += fmt::format("{:>11.4g} {:>11.4g} {:>8} {:>12.2f}\n", row.flops, row.bytes,
                       calibration::regime_name(row.regime), row.latency_us);
  }
  return out;
}

bool wants_shape(const std::vector<std::string>& args) {
  return std::any_of(args.begin(), args.end(),
                     [](const std::string& a) { return a == "--op" || a.starts_with("--op="); });
}

namespace {

po::options_description shape_options() {
  po::options_description d("kernel shape options (epsim cost --op OP)");
  const std::string op_help = "the kernel: " + kernel_op_names();  // copied by add_options
  d.add_options()("help,h", "show this help")("op", po::value<std::string>(), op_help.c_str())(
      "shape", po::value<std::vector<std::string>>()->multitoken()->composing(),
      "KEY=VALUE shape columns of the measurement table (below); one key may list values, one row each")(
      "gpu", po::value<std::string>(), "GPU preset (epsim list gpus) or preset file (.toml)")(
      "speed", po::value<double>(), "with --gpu: the GPU's speed factor (default 1)")(
      "config", po::value<std::string>(),
      "an experiment instead of --gpu: its GPU --gpu-index, priced by its run's "
      "cost model")("set", po::value<std::vector<std::string>>()->composing(), "with --config: override a config key")(
      "gpu-index", po::value<int>(), "with --config: which GPU of the cluster (default 0)")("csv", "print CSV");
  return d;
}

// The GPU the shapes are priced on: a preset at a speed, or a GPU of an experiment's run.
struct PricedGpu {
  std::unique_ptr<hardware::CostModel> cost;
  int index = 0;
};

PricedGpu priced_gpu(const po::variables_map& vm, std::ostream& err) {
  const bool config = vm.count("config") > 0;
  if (config == (vm.count("gpu") > 0)) {
    usage("give --gpu NAME|FILE.toml or --config TOML (one of them)");
  }
  if (config && vm.count("speed")) {
    usage("--speed: the config gives the GPU's speed; drop --speed");
  }
  if (!config && (vm.count("set") || vm.count("gpu-index"))) {
    usage(vm.count("set") ? "--set: applies with --config only" : "--gpu-index: applies with --config only");
  }
  if (!config) {
    const std::string name = vm["gpu"].as<std::string>();
    if (const std::string m = hardware::gpu_presets().unknown_message(name); !m.empty()) {
      usage("--gpu: " + m);
    }
    const double speed = vm.count("speed") ? vm["speed"].as<double>() : 1.0;
    if (!(speed > 0.0)) {
      usage(fmt::format("--speed: expected a positive factor, got {}", speed));
    }
    return {std::make_unique<hardware::RooflineCostModel>(hardware::load_gpu_preset(name), std::vector<double>{speed}),
            0};
  }
  const auto sets = vm.count("set") ? vm["set"].as<std::vector<std::string>>() : std::vector<std::string>{};
  const ExperimentConfig cfg = load_config(vm["config"].as<std::string>(), sets);
  for (const std::string& w : cfg.warnings) {
    err << "epsim: warning: " << w << "\n";
  }
  const int index = vm.count("gpu-index") ? vm["gpu-index"].as<int>() : 0;
  if (index < 0 || index >= cfg.cluster.num_gpus()) {
    usage(fmt::format("--gpu-index: expected a GPU of the cluster's {} (0 .. {}), got {}", cfg.cluster.num_gpus(),
                      cfg.cluster.num_gpus() - 1, index));
  }
  return {make_cost_model(cfg), index};  // the run's own (builders.hpp)
}

}  // namespace

int shape_cost_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const po::variables_map vm = parse_command_line(args, shape_options());
  if (vm.count("help")) {
    out << shape_cost_help();
    return 0;
  }
  const std::string op = vm["op"].as<std::string>();
  (void)parse_kernel_op(op);  // a bad --op before the GPU is loaded
  const PricedGpu g = priced_gpu(vm, err);
  const hardware::RooflineCostModel& roofline = hardware::roofline_of(*g.cost);
  const hardware::GpuSpec& spec = roofline.gpu_of(g.index);
  const auto shapes = vm.count("shape") ? vm["shape"].as<std::vector<std::string>>() : std::vector<std::string>{};
  const ShapeRequest r = parse_shape_request(op, shapes, spec.name);
  out << shape_table(r, price_shapes(r, *g.cost, spec, g.index), spec, roofline.speed(g.index), vm.count("csv") > 0);
  return 0;
}

std::string shape_cost_help() {
  std::ostringstream s;
  s << "usage: epsim cost --op OP --shape KEY=VALUES... (--gpu NAME|FILE.toml [--speed S] | --config TOML "
       "[--set key=value]... [--gpu-index N]) [--csv]\n"
       "  the shape keys of each op (the measurement table's columns, calibration/measurement_table.hpp):\n";
  for (const calibration::OpInfo& i : calibration::measured_ops()) {
    if (!i.collective) {
      s << fmt::format("    {}: {}\n", i.name, keys_help(i.op));
    }
  }
  s << "  dtype: bf16 or fp8; one key may list comma-separated values (one row each)\n"
       "  e.g. epsim cost --op expert_ffn --gpu h100 --shape tokens=1,8,64 experts=8 top_k=2 hidden=4096 "
       "intermediate=14336\n\n"
    << shape_options();
  return s.str();
}

}  // namespace epsim::experiments
