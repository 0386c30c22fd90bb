// SPDX-License-Identifier: Apache-2.0
#include "experiments/cli/accuracy_figures.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <sstream>

#include "calibration/measured_work.hpp"
#include "core/csv_lines.hpp"
#include "core/error.hpp"
#include "experiments/assembly/build_simulation.hpp"
#include "experiments/assembly/experiment_config.hpp"
#include "experiments/assembly/load_window.hpp"
#include "experiments/assembly/row_pricing.hpp"
#include "experiments/assembly/run_metrics.hpp"
#include "experiments/cli/cost_command.hpp"
#include "hardware/cluster_spec.hpp"
#include "hardware/gpu_spec.hpp"
#include "sim/observer.hpp"
#include "sim/simulator.hpp"

namespace epsim::experiments {
namespace {

[[noreturn]] void fail(const PointSpec& p, const FigureSpec& f, const std::string& what) {
  throw core::Error(fmt::format("{}: figure \"{}\": {}", p.file, f.name, what));
}

FigureResult result_of(const PointSpec& p, const FigureSpec& f, double predicted) {
  FigureResult r;
  r.point = p.name;
  r.gpu = p.gpu;
  r.phase = p.phase;
  r.figure = f.name;
  r.published = f.published;
  r.predicted = predicted;
  r.sample = f.sample;
  r.quantity = f.quantity;
  return r;
}

// Per step figure and EP group: the tokens and time of the steps its filter admits, and the range of
// what every step had, for the message when none passes.
class StepTally final : public serving::Observer {
 public:
  struct Sums {
    double tokens = 0.0;
    double duration_ns = 0.0;
    double tokens_per_request = 0.0;  // summed over the steps
    std::int64_t steps = 0;
  };
  explicit StepTally(std::vector<const FigureSpec*> figures) : figures_(std::move(figures)), sums_(figures_.size()) {}

  void on_step(const serving::StepRecord& s) override {
    ++steps_;
    lo_prefill_ = std::min(lo_prefill_, s.prefill_tokens);
    hi_prefill_ = std::max(hi_prefill_, s.prefill_tokens);
    lo_decode_ = std::min(lo_decode_, s.decode_tokens);
    hi_decode_ = std::max(hi_decode_, s.decode_tokens);
    for (std::size_t i = 0; i < figures_.size(); ++i) {
      const FigureSpec& f = *figures_[i];
      if (!f.filter.admits(s.prefill_tokens, s.decode_tokens)) {
        continue;
      }
      Sums& g = sums_[i][s.group];
      switch (f.tokens) {
        case StepTokens::prefill:
          g.tokens += static_cast<double>(s.prefill_tokens);
          break;
        case StepTokens::decode:
          g.tokens += static_cast<double>(s.decode_tokens);
          break;
        case StepTokens::input:
          g.tokens += static_cast<double>(s.prefill_tokens + s.cached_tokens);
          break;
        case StepTokens::output:
          g.tokens += static_cast<double>(s.output_tokens);
          break;
      }
      // Tokens one request emitted in the step, on average (per_output_token).
      g.tokens_per_request +=
          s.requests > 0 ? static_cast<double>(s.output_tokens) / static_cast<double>(s.requests) : 0.0;
      g.duration_ns += static_cast<double>(s.end_ns - s.start_ns);  // whole ns, as steps.csv's duration
      ++g.steps;
    }
  }
  const std::map<int, Sums>& sums(std::size_t i) const { return sums_[i]; }
  std::string range() const {
    return steps_ == 0 ? "the run had no steps"
                       : fmt::format("its {} steps had {}..{} prefill and {}..{} decode tokens", steps_, lo_prefill_,
                                     hi_prefill_, lo_decode_, hi_decode_);
  }

 private:
  std::vector<const FigureSpec*> figures_;
  std::vector<std::map<int, Sums>> sums_;
  std::int64_t steps_ = 0;
  std::int64_t lo_prefill_ = INT64_MAX, hi_prefill_ = 0, lo_decode_ = INT64_MAX, hi_decode_ = 0;
};

double step_figure(const PointSpec& p, const FigureSpec& f, const std::map<int, StepTally::Sums>& groups,
                   const ExperimentConfig& cfg, const StepTally& tally) {
  double rate = 0.0;
  double duration_ns = 0.0;
  double tokens_per_request = 0.0;
  std::int64_t steps = 0;
  for (const auto& [group, s] : groups) {
    tokens_per_request += s.tokens_per_request;
    if (s.steps > 0 && s.duration_ns > 0.0) {
      rate += s.tokens / (s.duration_ns / 1e9);  // EP groups run side by side: their rates add
    }
    duration_ns += s.duration_ns;
    steps += s.steps;
  }
  if (steps == 0) {
    fail(p, f, "no step of the run passed the figure's filter; " + tally.range());
  }
  if (f.measure == Measure::step_ms) {
    if (f.per_output_token) {
      if (tokens_per_request <= 0.0) {
        fail(p, f, "the filtered steps emitted no token (per_output_token)");
      }
      return duration_ns / tokens_per_request / 1e6;
    }
    const double ms = duration_ns / static_cast<double>(steps) / 1e6;
    return f.per_layer ? ms / static_cast<double>(cfg.model.num_layers) : ms;
  }
  const double gpus = cfg.cluster.num_gpus();
  return rate / (f.per == PerUnit::gpu ? gpus : gpus / cfg.cluster.gpus_per_node);
}

std::vector<FigureResult> price_run(const PointSpec& p, const SuiteFiles& files) {
  ExperimentConfig cfg =
      load_config_tables(parse_config_text(files.read(p.config), p.config), p.config, p.set, p.file + " [point.set]");
  cfg.outputs = OutputsConfig{};
  std::vector<const FigureSpec*> step_figures;
  for (const FigureSpec& f : p.figures) {
    if (f.measure == Measure::step_throughput || f.measure == Measure::step_ms) {
      step_figures.push_back(&f);
    }
  }
  serving::Simulator sim(build_simulation(cfg, profile_pool_windows(cfg)));
  StepTally tally(step_figures);
  sim.add_observer(&tally);
  const serving::SimulationResult res = sim.run();
  const NamedValues metrics = run_metrics(cfg, res);
  std::vector<FigureResult> out;
  std::size_t step_index = 0;
  for (const FigureSpec& f : p.figures) {
    double v = 0.0;
    if (f.measure == Measure::metric) {
      v = metric_value(metrics, f.metric);
      if (!std::isfinite(v)) {
        std::string names;
        for (const auto& [name, value] : metrics) {
          if (name.find('.') == std::string::npos || name.ends_with(".mean") || name.ends_with(".p50")) {
            names += (names.empty() ? "" : ", ") + name;
          }
        }
        fail(p, f, fmt::format("the run has no metric \"{}\" (or it is not a number); e.g. {}", f.metric, names));
      }
    } else if (f.measure == Measure::step_throughput || f.measure == Measure::step_ms) {
      v = step_figure(p, f, tally.sums(step_index++), cfg, tally);
    } else {
      continue;  // priced without the run
    }
    FigureResult r = result_of(p, f, v);
    r.family =
        f.measure == Measure::metric ? f.metric : (f.measure == Measure::step_ms ? "step_ms" : "step_throughput");
    out.push_back(std::move(r));
  }
  return out;
}

// The value following `flag` in `args`, or "".
std::string arg_after(const std::vector<std::string>& args, std::string_view flag) {
  for (std::size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == flag) {
      return args[i + 1];
    }
  }
  return {};
}

FigureResult price_cost(const PointSpec& p, const FigureSpec& f) {
  std::vector<std::string> args = f.args;
  args.emplace_back("--csv");
  std::ostringstream out;
  std::ostringstream err;
  int rc = 0;
  try {
    rc = cost_command(args, out, err);
  } catch (const std::exception& e) {
    fail(p, f, fmt::format("epsim cost {}: {}", fmt::join(f.args, " "), e.what()));
  }
  if (rc != 0) {
    fail(p, f, fmt::format("epsim cost {} failed: {}", fmt::join(f.args, " "), err.str()));
  }
  const std::string text = out.str();
  std::vector<std::vector<std::string>> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) {
      core::split_csv(line, lines.emplace_back());
    }
  }
  if (lines.size() != 2) {
    fail(p, f,
         fmt::format("epsim cost {} gave {} rows; a figure needs exactly one (one size, one shape)",
                     fmt::join(f.args, " "), lines.empty() ? 0 : lines.size() - 1));
  }
  double us = NAN;
  FigureResult r = result_of(p, f, 0.0);
  r.family = !arg_after(f.args, "--op").empty() ? arg_after(f.args, "--op") : arg_after(f.args, "--collective");
  for (std::size_t c = 0; c < lines[0].size() && c < lines[1].size(); ++c) {
    if (lines[0][c] == "latency_us" || lines[0][c] == "time_us") {
      if (!core::parse_number(lines[1][c], us)) {
        us = NAN;
      }
    } else if (lines[0][c] == "regime") {
      r.regime = lines[1][c];
    }
  }
  if (!std::isfinite(us)) {
    fail(p, f, "epsim cost printed no latency_us or time_us column");
  }
  r.predicted = us;
  return r;
}

// A row's shape as a figure name: its op and the shape columns it needs ("dense_gemm m=64 n=2112 k=7168 fp8").
std::string row_label(const calibration::Measurement& m) {
  std::string out(calibration::op_name(m.op));
  for (const std::string_view col : calibration::op_info(m.op).required) {
    if (col == "dtype") {
      out += fmt::format(" {}", hardware::precision_name(m.dtype));
    } else if (col == "bytes") {
      out += fmt::format(" bytes={}", m.bytes);
    } else if (col == "gpus") {
      out += fmt::format(" gpus={}", m.gpus);
    } else if (col == "gpus_per_node") {
      out += fmt::format(" per_node={}", m.gpus_per_node);
    } else if (auto member = calibration::shape_member(col)) {
      out += fmt::format(" {}={}", col, m.*member);
    }
  }
  if (m.op == calibration::MeasuredOp::attention_prefill || m.op == calibration::MeasuredOp::attention_decode) {
    out += m.causal ? " causal" : "";
  }
  return out;
}

std::vector<FigureResult> price_profile(const PointSpec& p, const FigureSpec& f, const SuiteFiles& files) {
  const calibration::MeasurementTable table = calibration::parse_measurement_table(files.read(f.table), f.table);
  std::optional<hardware::GpuSpec> gpu;
  if (!p.preset.empty()) {
    gpu = hardware::load_gpu_preset(p.preset);
  }
  std::vector<FigureResult> out;
  std::map<std::string, int> seen;
  for (const calibration::Measurement& m : table.rows) {
    if (!f.ops.empty() && std::find(f.ops.begin(), f.ops.end(), m.op) == f.ops.end()) {
      continue;
    }
    FigureSpec row = f;
    row.published = m.latency_us;
    row.name = f.name + ": " + row_label(m);
    if (const int n = ++seen[row.name]; n > 1) {
      row.name += fmt::format(" #{}", n);  // the same shape measured twice (another kernel, another run)
    }
    FigureResult r = result_of(p, row, 0.0);
    r.table = f.name;
    r.family = std::string(calibration::op_name(m.op));  // kernels: and their precision, below
    if (calibration::op_info(m.op).collective) {
      const std::string& name = m.cluster.empty() ? p.cluster : m.cluster;
      if (name.empty()) {
        fail(p, f,
             fmt::format("{}:{}: a collective row needs [point] `cluster` or the row's cluster column", f.table,
                         m.line));
      }
      const hardware::ClusterSpec c = cluster_for_row(hardware::load_cluster_preset(name), m);
      r.predicted = price_collective_row_us(m, c);
      calibration::Measurement tiny = m;
      tiny.bytes = 1.0;
      r.regime = calibration::regime_name(price_collective_row_us(tiny, c) > 0.5 * r.predicted
                                              ? calibration::Regime::latency
                                              : calibration::Regime::bandwidth);
      r.quantity = Quantity::collective;
    } else {
      if (!gpu) {
        fail(
            p, f,
            fmt::format("{}:{}: a kernel row needs [point] `preset` (the GPU preset to price it on)", f.table, m.line));
      }
      const hardware::GpuSpec& g = *gpu;
      r.predicted = price_kernel_row_us(m, g);
      r.family += fmt::format(" {}", hardware::precision_name(m.dtype));  // efficiencies differ by precision
      r.regime = calibration::regime_name(calibration::kernel_regime(g, m));
      r.quantity = Quantity::kernel;
    }
    out.push_back(std::move(r));
  }
  if (out.empty()) {
    fail(p, f, fmt::format("{} has no row of the figure's ops", f.table));
  }
  return out;
}

}  // namespace

std::vector<FigureResult> price_point(const PointSpec& point, const SuiteFiles& files) {
  std::vector<FigureResult> run;
  if (point.runs()) {
    try {
      run = price_run(point, files);
    } catch (const core::ConfigError&) {
      throw;
    } catch (const std::exception& e) {
      const std::string what = e.what();
      throw core::Error(what.starts_with(point.file) ? what : fmt::format("{}: {}", point.file, what));
    }
  }
  std::vector<FigureResult> out;
  std::size_t next_run = 0;
  for (const FigureSpec& f : point.figures) {
    switch (f.measure) {
      case Measure::step_throughput:
      case Measure::step_ms:
      case Measure::metric:
        out.push_back(run[next_run++]);
        break;
      case Measure::cost:
        out.push_back(price_cost(point, f));
        break;
      case Measure::profile: {
        std::vector<FigureResult> rows = price_profile(point, f, files);
        out.insert(out.end(), std::make_move_iterator(rows.begin()), std::make_move_iterator(rows.end()));
        break;
      }
    }
  }
  return out;
}

}  // namespace epsim::experiments
