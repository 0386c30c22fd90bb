// SPDX-License-Identifier: Apache-2.0
#pragma once
// Runs a study's pending runs on N local worker threads, appending each finished run to the journal
// as it ends, with progress on a stream: a redrawn bar on a terminal, plain periodic lines otherwise.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "experiments/studies/slo_search.hpp"
#include "experiments/studies/study_journal.hpp"
#include "experiments/studies/study_plan.hpp"

namespace epsim::experiments {

/// Where a study keeps the runs it saves (save_runs = true): DIR/journal/runs/KEY, one results directory
/// per run key, each replaced as a unit. The study's DIR/runs/pNNNN-rNNN are hard links to these, made
/// afresh with each set of results, so their numbering is always the current study's.
std::filesystem::path saved_runs_dir(const std::filesystem::path& dir);
std::filesystem::path saved_run_dir(const std::filesystem::path& dir, const std::string& key);

/// One run: simulate, take its metrics (and its max sustainable rate when the study asks, its search
/// starting from `prior` when given), and, when the study saves runs, write its results to
/// saved_run_dir(). Errors are returned in the record.
RunRecord execute_run(const StudySpec& spec, const StudyPlan& plan, const StudyRunSpec& run,
                      const std::filesystem::path& dir, const std::optional<SloPrior>& prior = std::nullopt);

/// Whether a study's runs come in two waves: with a max-rate search and several replications, each
/// point's replication 0 runs first and the point's other replications start their search from its
/// bracket (slo_prior); they differ only by their seeds.
bool max_rate_waves(const StudySpec& spec, const StudyPlan& plan);
/// The prior a run's max-rate search starts from: its point's replication 0's bracket, read from that
/// run's record (`done`, by key; `keys` are every run's keys in plan order). None for replication 0, for
/// studies without waves and where that record is missing, failed, censored or found no rate.
std::optional<SloPrior> max_rate_prior(const StudySpec& spec, const StudyPlan& plan, std::int64_t run,
                                       const std::vector<std::string>& keys,
                                       const std::map<std::string, RunRecord>& done);

struct RunnerOptions {
  int jobs = 1;
  std::ostream* progress = nullptr;  ///< null: silent
  bool terminal = false;             ///< redraw one line (else a line every `plain_every_s`)
  double plain_every_s = 10.0;
};

/// Runs `runs` (indices into the plan) and returns their records in the order of `runs`; `priors`
/// (empty, or one per run) are their max-rate searches' starting brackets.
std::vector<RunRecord> execute_runs(const StudySpec& spec, const StudyPlan& plan, const std::vector<std::int64_t>& runs,
                                    const std::filesystem::path& dir, Journal& journal, const RunnerOptions& o,
                                    const std::vector<std::optional<SloPrior>>& priors = {});

}  // namespace epsim::experiments
