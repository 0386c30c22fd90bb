// SPDX-License-Identifier: Apache-2.0
#include "experiments/studies/study_runner.hpp"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <thread>

#include "core/cpu_clock.hpp"
#include "core/duration_text.hpp"
#include "core/staged_directory.hpp"
#include "experiments/assembly/build_simulation.hpp"
#include "experiments/assembly/results_writer.hpp"
#include "experiments/studies/probe_limits.hpp"
#include "experiments/studies/slo_search.hpp"
#include "experiments/studies/study_eta.hpp"

namespace epsim::experiments {
namespace {

using Clock = std::chrono::steady_clock;

// What the workers share: the next run to take, what is running since when, what is done.
struct Shared {
  std::mutex mutex;
  std::condition_variable changed;
  std::size_t next = 0;
  std::size_t done = 0;
  std::vector<std::pair<std::int64_t, Clock::time_point>> running;  // per worker: run index (-1 idle), start
  std::vector<std::size_t> slot;  // per worker: the position in the runs list of what it runs
};

std::string progress_line(const StudyPlan& plan, Shared& s, const EtaEstimator& eta_model, std::size_t total,
                          Clock::time_point t0, bool bar) {
  using core::duration_text;
  const double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
  std::string slowest;
  double slowest_s = -1.0;
  std::vector<std::pair<std::size_t, double>> running;
  for (std::size_t w = 0; w < s.running.size(); ++w) {
    const auto& [run, since] = s.running[w];
    const double t = std::chrono::duration<double>(Clock::now() - since).count();
    if (run >= 0) {
      running.emplace_back(s.slot[w], t);
    }
    if (run >= 0 && t > slowest_s) {
      slowest_s = t;
      const StudyRunSpec r = plan.run(run);
      slowest = fmt::format("point {} replication {} ({})", r.point, r.replication, duration_text(t));
    }
  }
  const std::optional<double> left_s = eta_model.remaining_s(running);
  const std::string eta = left_s ? duration_text(*left_s) : "?";
  const std::string tail = fmt::format("{}/{} runs, {} elapsed, ETA {}{}{}", s.done, total, duration_text(elapsed), eta,
                                       slowest.empty() ? "" : ", slowest running: ", slowest);
  if (!bar) {
    return fmt::format("epsim sweep: {}\n", tail);
  }
  constexpr std::size_t k_width = 24;
  const std::size_t filled = total ? k_width * s.done / total : k_width;
  return fmt::format("\r\033[K[{}{}] {}", std::string(filled, '#'), std::string(k_width - filled, '.'), tail);
}

}  // namespace

std::filesystem::path saved_runs_dir(const std::filesystem::path& dir) {
  return dir / "journal" / "runs";
}

std::filesystem::path saved_run_dir(const std::filesystem::path& dir, const std::string& key) {
  return saved_runs_dir(dir) / key;
}

bool max_rate_waves(const StudySpec& spec, const StudyPlan& plan) {
  return spec.max_rate.has_value() && spec.max_rate->rates.empty() && plan.replications > 1;
}

std::optional<SloPrior> max_rate_prior(const StudySpec& spec, const StudyPlan& plan, std::int64_t run,
                                       const std::vector<std::string>& keys,
                                       const std::map<std::string, RunRecord>& done) {
  const StudyRunSpec r = plan.run(run);
  if (!max_rate_waves(spec, plan) || r.replication == 0) {
    return std::nullopt;
  }
  const auto first = static_cast<std::size_t>(static_cast<std::int64_t>(r.point) * plan.replications);
  const auto it = first < keys.size() ? done.find(keys[first]) : done.end();
  if (it == done.end() || !it->second.error.empty()) {
    return std::nullopt;
  }
  SloReplication zero;
  for (const auto& [name, value] : it->second.metrics) {
    zero.max_rate_rps = name == "max_rate_rps" ? value : zero.max_rate_rps;
    zero.bracket_high_rps = name == "max_rate_bracket_high_rps" ? value : zero.bracket_high_rps;
  }
  return slo_prior(zero);
}

RunRecord execute_run(const StudySpec& spec, const StudyPlan& plan, const StudyRunSpec& run,
                      const std::filesystem::path& dir, const std::optional<SloPrior>& prior) {
  const auto t0 = Clock::now();
  const double cpu0_s = core::thread_cpu_s();
  RunRecord rec;
  rec.run = run.index;
  try {
    const ExperimentConfig cfg = run_config(spec, plan, run);
    rec.key = run_key(spec, cfg);
    serving::Simulator sim(build_simulation(cfg, profile_pool_windows(cfg)));
    const serving::SimulationResult res = sim.run();
    rec.metrics = run_metrics(cfg, res);
    rec.routing_loops = res.routing_loops;
    if (spec.max_rate) {
      SloSearchOptions o = *spec.max_rate;
      o.replications = 1;
      const SloSearchResult slo = search_max_rate(cfg, o, {}, prior);
      rec.metrics.emplace_back("max_rate_rps", slo.max_rate_rps);
      rec.metrics.emplace_back("max_rate_rps_per_gpu", slo.max_rate_rps / static_cast<double>(cfg.cluster.num_gpus()));
      rec.metrics.emplace_back("max_rate_bracketed", slo.bracketed ? 1.0 : 0.0);
      // The bracket [max_rate_rps, max_rate_bracket_high_rps) and the long probe the answer held on;
      // a censored search (no rate failed) has no high end: its rate is a lower bound.
      const SloReplication& rep = slo.replications.front();
      rec.metrics.emplace_back("max_rate_censored", rep.censored() ? 1.0 : 0.0);
      if (!rep.censored()) {
        rec.metrics.emplace_back("max_rate_bracket_high_rps", rep.bracket_high_rps);
      }
      if (const std::optional<SloProbe>& c = rep.confirmation; c.has_value()) {
        rec.metrics.emplace_back("max_rate_confirm_attainment", c->summary.slo_attainment);
        rec.metrics.emplace_back("max_rate_confirm_ttft_p90_ms", c->summary.ttft_ms.p90);
      }
      append_probe_limits(caps_at_first_miss(slo, o.target), rec.metrics);
    }
    if (spec.save_runs) {
      // Kept by the run's key, like its journal record: the study's runs/pNNNN-rNNN are made from these
      // at the end (study_runner.hpp), so an edited study never shows a run under another point's name.
      std::filesystem::create_directories(saved_runs_dir(dir));
      core::StagedDirectory saved(saved_run_dir(dir, rec.key), run_output_names());
      write_results(saved.path(), cfg, res);
      saved.commit();
    }
  } catch (const std::exception& e) {
    rec.error = fmt::format("point {} replication {}: {}", run.point, run.replication, e.what());
  }
  rec.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  rec.cpu_s = core::thread_cpu_s() - cpu0_s;  // a run simulates on its worker's thread alone
  return rec;
}

std::vector<RunRecord> execute_runs(const StudySpec& spec, const StudyPlan& plan, const std::vector<std::int64_t>& runs,
                                    const std::filesystem::path& dir, Journal& journal, const RunnerOptions& o,
                                    const std::vector<std::optional<SloPrior>>& priors) {
  std::vector<RunRecord> out(runs.size());
  Shared s;
  const int jobs = std::max(1, std::min<int>(o.jobs, static_cast<int>(runs.size())));
  s.running.assign(static_cast<std::size_t>(jobs), {-1, Clock::now()});
  s.slot.assign(static_cast<std::size_t>(jobs), 0);
  // The ETA weighs each run by its cost (GPUs x requests): expensive runs last no longer fool it. The
  // same weights start the longest runs first, so a study does not end on one long run with the other
  // workers idle; records still come back in the order of `runs`, so the outputs do not change.
  std::vector<double> weights = run_cost_weights(spec, plan, runs);
  const std::vector<std::size_t> order = longest_first(weights);
  EtaEstimator eta(std::move(weights), jobs);
  std::exception_ptr failure;
  const auto worker = [&](std::size_t w) {
    while (true) {
      std::size_t i = 0;
      {
        const std::lock_guard<std::mutex> lock(s.mutex);
        if (s.next >= runs.size() || failure) {
          s.running[w].first = -1;
          return;
        }
        i = order[s.next++];
        s.running[w] = {runs[i], Clock::now()};
        s.slot[w] = i;
      }
      RunRecord rec = execute_run(spec, plan, plan.run(runs[i]), dir, priors.empty() ? std::nullopt : priors[i]);
      try {
        if (rec.error.empty()) {
          journal.append(rec);
        }
      } catch (...) {
        const std::lock_guard<std::mutex> lock(s.mutex);
        failure = std::current_exception();
      }
      {
        const std::lock_guard<std::mutex> lock(s.mutex);
        eta.finished(i, rec.wall_s);
        out[i] = std::move(rec);
        ++s.done;
        s.running[w].first = -1;
      }
      s.changed.notify_all();
    }
  };
  const auto t0 = Clock::now();
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(jobs));
  for (int w = 0; w < jobs; ++w) {
    threads.emplace_back(worker, static_cast<std::size_t>(w));
  }
  {
    std::unique_lock<std::mutex> lock(s.mutex);
    auto last_plain = t0;
    while (s.done < runs.size() && !failure) {
      s.changed.wait_for(lock, std::chrono::seconds(1));
      if (!o.progress) {
        continue;
      }
      if (o.terminal) {
        *o.progress << progress_line(plan, s, eta, runs.size(), t0, true) << std::flush;
      } else if (std::chrono::duration<double>(Clock::now() - last_plain).count() >= o.plain_every_s) {
        last_plain = Clock::now();
        *o.progress << progress_line(plan, s, eta, runs.size(), t0, false) << std::flush;
      }
    }
  }
  for (std::thread& t : threads) {
    t.join();
  }
  if (o.progress && o.terminal) {
    *o.progress << progress_line(plan, s, eta, runs.size(), t0, true) << "\n" << std::flush;
  }
  if (failure) {
    std::rethrow_exception(failure);
  }
  return out;
}

}  // namespace epsim::experiments
