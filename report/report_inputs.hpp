// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a report is made from: study directories (`epsim sweep --out DIR`) and run directories
// (`epsim run --out DIR`), told apart by study.json and summary.json. Optional files are loaded when
// present; the figures then depend on what was found (report_builder.hpp).
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "report/csv_table.hpp"

namespace epsim::report {

struct RunInput {
  std::filesystem::path dir;
  std::string label;                   ///< the directory's name (made unique among the inputs)
  nlohmann::json summary;              ///< summary.json
  std::optional<CsvTable> requests;    ///< requests.csv
  std::optional<CsvTable> steps;       ///< steps.csv (output.steps_csv)
  std::optional<CsvTable> events;      ///< events.csv (output.events_csv)
  std::optional<CsvTable> gpu_layers;  ///< gpu_layers.csv (output.gpu_layers_csv)
};

struct StudyInput {
  std::filesystem::path dir;
  std::string label;
  nlohmann::json study;  ///< study.json
  CsvTable runs;         ///< runs.csv
  CsvTable points;       ///< points.csv
  std::optional<CsvTable> scaling;
  std::optional<CsvTable> distribution;
  std::optional<CsvTable> max_rate;
  std::optional<CsvTable> ranking;
  std::optional<CsvTable> rebalance;        ///< rebalance.csv (a rebalance study)
  std::optional<CsvTable> break_even;       ///< break_even.csv (a rebalance study)
  std::vector<std::string> axes;            ///< axis names, in order (columns of runs.csv and points.csv)
  std::vector<std::string> report_metrics;  ///< study.json's report metrics (older files: the headline ones)
  std::string kind;
  std::string rate_axis;  ///< empty without one
  std::string baseline;   ///< "axis=label" or empty
  double slo_target = 0.9;
  /// Saved runs (save_runs = true): DIR/runs/pPPPP-rRRR, with the point each belongs to.
  struct SavedRun {
    std::filesystem::path dir;
    int point = 0;
  };
  std::vector<SavedRun> saved_runs;
  /// The rate axis's levels by label -> rate (req/s), from study.json: labelled rates ("low", "peak").
  std::map<std::string, double> rate_values;
};

struct ReportInputs {
  std::vector<StudyInput> studies;
  std::vector<RunInput> runs;
};

/// Loads every directory; throws core::Error naming the directory or file and what was expected.
ReportInputs load_report_inputs(const std::vector<std::filesystem::path>& dirs);

/// Loads one run directory (`label` names it in figures).
RunInput load_run(const std::filesystem::path& dir, const std::string& label);

/// The rate of a row of points.csv: its rate axis's cell as a number, or, for a labelled level, the
/// rate study.json gives it; throws core::Error naming points.csv when neither exists.
double rate_value(const StudyInput& s, std::size_t points_row);

/// A point's label from its row of points.csv, e.g. "eplb, rate_rps=40" (named axes by their level,
/// config keys as key=value); `skip_axis` leaves one axis out.
std::string point_label(const StudyInput& s, std::size_t points_row, const std::string& skip_axis = "");

}  // namespace epsim::report
