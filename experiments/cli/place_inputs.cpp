// SPDX-License-Identifier: Apache-2.0
#include "experiments/cli/place_inputs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/csv_lines.hpp"
#include "core/error.hpp"
#include "core/json_depth.hpp"

namespace epsim::experiments {

namespace {
// Bounds on a load CSV's ids, far beyond any model: 4,096 MoE layers, 65,536 experts, 100,000 steps.
constexpr double k_max_load_layers = 4096;
constexpr double k_max_load_experts = 65536;
constexpr double k_max_load_steps = 100000;

// A step-by-step load window, filled row by row and padded to a dense [step][layer][expert] table at the
// end (rows with no tokens may be left out). The dense size is bounded by the rows read, checked before
// any table grows: a 14-byte row "9110,0,9110,2" once padded to 664 MB.
class WindowBuilder {
 public:
  // Dense cells allowed: a floor (4 Mi cells, 32 MiB) plus 256 per row read, far more padding than a
  // decode window's sparsest rows need (one token, top-8 of 256 experts: 32 cells per row).
  static constexpr double k_floor_cells = 4194304;
  static constexpr double k_cells_per_row = 256;

  // Adds `tokens` at (s, l, e), read from `path` at `line_no` (named in errors).
  void add(std::size_t s, std::size_t l, std::size_t e, double tokens, const std::filesystem::path& path,
           std::int64_t line_no) {
    ++rows_;
    steps_ = std::max(steps_, s + 1);
    layers_ = std::max(layers_, l + 1);
    experts_ = std::max(experts_, e + 1);
    const double cells = static_cast<double>(steps_) * static_cast<double>(layers_) * static_cast<double>(experts_);
    if (cells > k_floor_cells + k_cells_per_row * static_cast<double>(rows_)) {
      throw core::Error(fmt::format(
          "{}: line {}: {} steps x {} layers x {} experts from {} row(s): too sparse to pad into a table (at most "
          "{:.0f} cells + {:.0f} per row)",
          path.string(), line_no, steps_, layers_, experts_, rows_, k_floor_cells, k_cells_per_row));
    }
    if (window_.size() <= s) {
      window_.resize(s + 1);
    }
    if (window_[s].size() <= l) {
      window_[s].resize(l + 1);
    }
    if (window_[s][l].size() <= e) {
      window_[s][l].resize(e + 1, 0.0);
    }
    double& cell = window_[s][l][e];
    cell += tokens;
    if (!std::isfinite(cell)) {
      throw core::Error(
          fmt::format("{}: line {}: step {}, layer {}, expert {}: the tokens sum past the largest number (a "
                      "load would print as null)",
                      path.string(), line_no, s, l, e));
    }
  }

  // The dense table: every step padded to the largest layer and expert seen.
  std::vector<std::vector<std::vector<double>>> take() {
    for (auto& step : window_) {
      step.resize(layers_);
      for (auto& row : step) {
        row.resize(experts_, 0.0);
      }
    }
    return std::move(window_);
  }

 private:
  std::vector<std::vector<std::vector<double>>> window_;
  std::size_t steps_ = 0;
  std::size_t layers_ = 0;
  std::size_t experts_ = 0;
  std::size_t rows_ = 0;
};

}  // namespace

LoadFile read_load_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) {
    throw core::Error(path.string() + ": cannot open");
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(core::read_json_text(in, path.string()));
  } catch (const nlohmann::json::exception& e) {
    throw core::Error(path.string() + ": invalid JSON: " + e.what());
  }
  LoadFile f;
  const bool has_weight = j.contains("weight") && j["weight"].is_array();
  const bool has_window = j.contains("window") && j["window"].is_array();
  if (!has_weight && !has_window) {
    throw core::Error(path.string() +
                      ": expected {\"weight\": [[tokens per expert] per layer], ...} or {\"window\": [[[tokens per "
                      "expert] per layer] per step], ...}");
  }
  // One [layer][expert] table; `where` names it in errors.
  const auto read_table = [&](const nlohmann::json& rows, const std::string& where) {
    std::vector<std::vector<double>> t;
    for (std::size_t l = 0; l < rows.size(); ++l) {
      const auto& row = rows[l];
      if (!row.is_array()) {
        throw core::Error(fmt::format("{}: {}[{}] is not a list", path.string(), where, l));
      }
      std::vector<double> r;
      for (std::size_t e = 0; e < row.size(); ++e) {
        if (!row[e].is_number()) {
          throw core::Error(fmt::format("{}: {}[{}][{}] is not a number", path.string(), where, l, e));
        }
        r.push_back(row[e].get<double>());
      }
      t.push_back(std::move(r));
    }
    return t;
  };
  if (has_window) {
    for (std::size_t s = 0; s < j["window"].size(); ++s) {
      if (!j["window"][s].is_array()) {
        throw core::Error(fmt::format("{}: window[{}] is not a list of layers", path.string(), s));
      }
      f.window.push_back(read_table(j["window"][s], fmt::format("window[{}]", s)));
    }
  }
  if (has_weight) {
    f.weight = read_table(j["weight"], "weight");
  }
  const auto optional_int = [&](const char* key) {
    if (!j.contains(key)) {
      return 0;
    }
    if (!j[key].is_number_integer()) {
      throw core::Error(fmt::format("{}: \"{}\": expected an integer", path.string(), key));
    }
    return j[key].get<int>();
  };
  f.num_replicas = optional_int("num_replicas");
  f.num_groups = optional_int("num_groups");
  f.num_nodes = optional_int("num_nodes");
  f.num_gpus = optional_int("num_gpus");
  return f;
}

LoadFile read_load_csv(const std::filesystem::path& path) {
  std::ifstream in(path);
  LoadFile f;
  // Two layouts: layer,expert,tokens (a total per expert) or step,layer,expert,tokens (a per-step window,
  // which GEM scores step by step). The header, if any, says which; else the first row's width.
  if (!in) {
    throw core::Error(path.string() + ": cannot read");
  }
  const std::string all = core::read_whole_input(in, path.string());
  std::size_t first = all.find_first_not_of(" \t\r\n");
  while (first != std::string::npos && all[first] == '#') {
    first = all.find_first_not_of(" \t\r\n", all.find('\n', first));
  }
  const bool stepped = first != std::string::npos && all.compare(first, 4, "step") == 0;
  std::istringstream body(all);
  core::CsvLines lines(body, stepped ? "step" : "layer", path.string());
  std::vector<double> v;
  WindowBuilder window;
  std::size_t width = stepped ? 4 : 0;
  const auto whole = [](double x) { return x >= 0 && x == std::floor(x); };
  while (lines.next()) {
    const std::string& line = lines.line();
    const std::int64_t line_no = lines.line_no();
    const char* expected = width == 4 ? "step,layer,expert,tokens" : "layer,expert,tokens";
    if (!core::parse_csv_numbers(line, v)) {
      throw core::Error(
          fmt::format("{}: line {}: expected {} numbers, got \"{}\"", path.string(), line_no, expected, line));
    }
    if (width == 0 && (v.size() == 3 || v.size() == 4)) {
      width = v.size();
      expected = width == 4 ? "step,layer,expert,tokens" : "layer,expert,tokens";
    }
    if (v.size() != width || !std::all_of(v.begin(), v.end() - 1, whole)) {
      throw core::Error(
          fmt::format("{}: line {}: expected {} with integer ids, got \"{}\"", path.string(), line_no, expected, line));
    }
    // Ids grow the tables: bound them before they do (a one-line `1e8,0,5` once asked for 2.3 GB).
    if (v[width - 3] >= k_max_load_layers || v[width - 2] >= k_max_load_experts ||
        (width == 4 && v[0] >= k_max_load_steps) || !std::isfinite(v[width - 1]) || v[width - 1] < 0) {
      throw core::Error(
          fmt::format("{}: line {}: expected layer < {}, expert < {}{} and tokens a finite number >= 0, "
                      "got \"{}\"",
                      path.string(), line_no, k_max_load_layers, k_max_load_experts,
                      width == 4 ? fmt::format(", step < {}", k_max_load_steps) : std::string(), line));
    }
    const auto l = static_cast<std::size_t>(v[width - 3]);
    const auto e = static_cast<std::size_t>(v[width - 2]);
    if (width == 4) {
      window.add(static_cast<std::size_t>(v[0]), l, e, v[3], path, line_no);
      continue;
    }
    if (f.weight.size() <= l) {
      f.weight.resize(l + 1);
    }
    if (f.weight[l].size() <= e) {
      f.weight[l].resize(e + 1, 0.0);
    }
    f.weight[l][e] += v[2];
    if (!std::isfinite(f.weight[l][e])) {
      throw core::Error(
          fmt::format("{}: line {}: layer {}, expert {}: the tokens sum past the largest number (a load "
                      "would print as null)",
                      path.string(), line_no, l, e));
    }
  }
  f.window = window.take();
  return f;
}

std::vector<double> read_coactivation(const std::filesystem::path& path, int layers, int experts) {
  std::ifstream in(path);
  if (!in) {
    throw core::Error(path.string() + ": cannot read");
  }
  const auto E = static_cast<std::size_t>(experts);
  std::vector<double> counts(static_cast<std::size_t>(layers) * E * E, 0.0);
  core::CsvLines lines(in, "layer", path.string());
  std::vector<double> v;
  while (lines.next()) {
    const bool ok = core::parse_csv_numbers(lines.line(), v) && v.size() == 4 &&
                    std::all_of(v.begin(), v.begin() + 3, [](double x) { return x >= 0 && x == std::floor(x); }) &&
                    v[3] >= 0 && v[0] < layers && v[1] < experts && v[2] < experts && v[1] != v[2];
    if (!ok) {
      throw core::Error(
          fmt::format("{}: line {}: expected layer,expert_a,expert_b,tokens (ids of this {} layers x "
                      "{} experts shape, a != b, tokens >= 0), got \"{}\"",
                      path.string(), lines.line_no(), layers, experts, lines.line()));
    }
    const auto l = static_cast<std::size_t>(v[0]);
    const auto a = static_cast<std::size_t>(v[1]);
    const auto b = static_cast<std::size_t>(v[2]);
    counts[(l * E + a) * E + b] += v[3];
    counts[(l * E + b) * E + a] += v[3];
  }
  return counts;
}

std::shared_ptr<const policies::CostCurves> read_curves(const std::filesystem::path& path, int gpus) {
  std::ifstream in(path);
  if (!in) {
    throw core::Error(path.string() + ": cannot read");
  }
  std::vector<std::vector<std::pair<double, double>>> points(static_cast<std::size_t>(gpus));
  core::CsvLines lines(in, "gpu", path.string());
  std::vector<double> v;
  while (lines.next()) {
    if (!core::parse_csv_numbers(lines.line(), v) || v.size() != 3 || v[0] < 0 || v[0] != std::floor(v[0]) ||
        v[1] < 0 || v[2] < 0) {
      throw core::Error(
          fmt::format("{}: line {}: expected gpu,tokens,latency_us (gpu an integer, the others >= 0), "
                      "got \"{}\"",
                      path.string(), lines.line_no(), lines.line()));
    }
    if (v[0] >= gpus) {
      throw core::Error(
          fmt::format("{}: line {}: GPU {} but the EP group has {} GPUs", path.string(), lines.line_no(), v[0], gpus));
    }
    points[static_cast<std::size_t>(v[0])].emplace_back(v[1], v[2] * 1e3);
  }
  std::vector<std::vector<double>> tokens(static_cast<std::size_t>(gpus));
  std::vector<std::vector<double>> ns(static_cast<std::size_t>(gpus));
  for (std::size_t g = 0; g < points.size(); ++g) {
    if (points[g].empty()) {
      throw core::Error(fmt::format("{}: no sample points for GPU {}", path.string(), g));
    }
    std::sort(points[g].begin(), points[g].end());
    for (const auto& [n, t] : points[g]) {
      if (!tokens[g].empty() && n == tokens[g].back()) {
        throw core::Error(fmt::format("{}: GPU {} has two samples at {} tokens", path.string(), g, n));
      }
      tokens[g].push_back(n);
      ns[g].push_back(t);
    }
  }
  return std::make_shared<const policies::CostCurves>(std::move(tokens), std::move(ns));
}

}  // namespace epsim::experiments
