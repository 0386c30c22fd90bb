// SPDX-License-Identifier: Apache-2.0
#pragma once
// The accuracy suite (accuracy/README.md): published measurements of deployments, kernels and collectives,
// one point file per published setup, holding the epsim setup that reproduces it and the figures it must
// match, with their sources. This file reads a suite, a folder on disk or the copy compiled into the
// binary, into typed points; accuracy_figures.hpp prices them. Bad input is a core::ConfigError naming
// the file, the key and what was expected.
#include <toml++/toml.h>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "calibration/measurement_table.hpp"

namespace epsim::experiments {

enum class PointPhase : std::uint8_t { prefill, decode, mixed, kernel, collective, exchange };
/// in: an epsim parameter was fitted to the figure; out: the figure was not seen by any fit.
enum class Sample : std::uint8_t { in, out };
enum class Measure : std::uint8_t { step_throughput, step_ms, metric, cost, profile };
/// Which tokens a step figure counts: computed prompt tokens, decode tokens, or prompt tokens including
/// those a prefix cache supplied (a deployment's "input tokens, including cache hits"), or tokens emitted
/// (with speculative decoding, 1 + accepted drafts per verify: a deployment's output tokens).
enum class StepTokens : std::uint8_t { prefill, decode, input, output };
enum class PerUnit : std::uint8_t { node, gpu };
/// What a figure measures, which sets its target band (issue 36): kernels 10 %, collectives 15 %,
/// throughput, TPOT and step times 15 %, TTFT 25 %.
enum class Quantity : std::uint8_t { kernel, collective, throughput, tpot, ttft, step_time, other };

std::string_view phase_name(PointPhase p);
std::string_view sample_name(Sample s);
std::string_view quantity_name(Quantity q);
/// The target band of a quantity, percent of the published figure.
double target_pct(Quantity q);

/// Which steps of one EP group a step figure counts (bounds inclusive).
struct StepFilter {
  std::int64_t min_prefill_tokens = 0;
  std::int64_t max_prefill_tokens = std::numeric_limits<std::int64_t>::max();
  std::int64_t min_decode_tokens = 0;
  std::int64_t max_decode_tokens = std::numeric_limits<std::int64_t>::max();

  bool admits(std::int64_t prefill_tokens, std::int64_t decode_tokens) const {
    return prefill_tokens >= min_prefill_tokens && prefill_tokens <= max_prefill_tokens &&
           decode_tokens >= min_decode_tokens && decode_tokens <= max_decode_tokens;
  }
};

struct FigureSpec {
  std::string name;
  double published = 0.0;
  Sample sample = Sample::out;
  std::string where;  ///< where in the source
  Measure measure = Measure::metric;
  Quantity quantity = Quantity::other;
  // step_throughput, step_ms
  StepTokens tokens = StepTokens::prefill;
  PerUnit per = PerUnit::node;
  StepFilter filter;
  bool per_layer = false;
  /// step_ms: the time per token each request emitted in those steps (steps' duration over the tokens a
  /// request emitted in each, requests' mean): a TPOT when speculative decoding emits several per step.
  bool per_output_token = false;
  // metric
  std::string metric;
  // cost: the arguments of `epsim cost`
  std::vector<std::string> args;
  // profile: a measurement table (path resolved in the suite) and the ops taken from it (empty = all)
  std::string table;
  std::vector<calibration::MeasuredOp> ops;
};

struct PointSpec {
  std::string name;  ///< the file's stem
  std::string file;  ///< the file as the suite names it
  std::string title;
  std::string gpu;
  PointPhase phase = PointPhase::decode;
  bool quick = false;
  std::string source;
  std::vector<std::string> unstated;
  std::vector<std::string> fitted;
  std::string preset;   ///< profile figures: the GPU preset their kernel rows are priced on
  std::string cluster;  ///< profile figures: the cluster preset their collective rows are priced on
  std::string config;   ///< run figures: the config file (resolved in the suite); "" = none
  toml::table set;      ///< run figures: overrides of the config
  std::vector<FigureSpec> figures;

  bool runs() const { return !config.empty(); }
};

/// Where a suite's files come from: a folder on disk (or one point file), or the suite compiled into
/// the binary (accuracy/, with the example configs and data/profiles tables its points use).
class SuiteFiles {
 public:
  static SuiteFiles embedded();
  /// A folder (its points/*.toml, else its *.toml) or a single point file.
  static SuiteFiles on_disk(const std::filesystem::path& path);

  /// The point files, sorted by name.
  std::vector<std::string> point_files() const;
  /// A file's text; throws core::Error naming it when it is missing or too large.
  std::string read(const std::string& file) const;
  /// `relative` resolved against the folder of `from_file`.
  std::string resolve(const std::string& from_file, const std::string& relative) const;
  /// How the suite is named in messages and outputs ("embedded suite" or the path).
  const std::string& label() const { return label_; }

 private:
  bool embedded_ = false;
  std::filesystem::path root_;  // disk: the folder or the file
  std::string label_;
};

/// Bounds on a suite: points, figures per point, list entries, text sizes.
inline constexpr std::size_t k_max_points = 1000;
inline constexpr std::size_t k_max_figures_per_point = 1000;

/// Parses one point file; `file` names it in errors.
PointSpec parse_point(std::string_view text, const std::string& file, const SuiteFiles& files);
/// Every point of the suite, checked (unique figure names, files that exist).
std::vector<PointSpec> read_suite(const SuiteFiles& files);

}  // namespace epsim::experiments
