// SPDX-License-Identifier: Apache-2.0
#include "experiments/cli/run_command.hpp"

#include <fmt/format.h>

#include <chrono>
#include <sstream>

#include "core/signal_cleanup.hpp"
#include "core/staged_directory.hpp"
#include "experiments/assembly/build_simulation.hpp"
#include "experiments/assembly/results_writer.hpp"
#include "experiments/assembly/run_outputs.hpp"
#include "experiments/cli/report_command.hpp"
#include "report/svg_export.hpp"
#include "workloads/request_generator.hpp"

namespace epsim::experiments {
namespace {

// What a finished run says about its inputs: a trace it outlasted, routing that breaks the group limit.
std::vector<std::string> result_warnings(const ExperimentConfig& cfg, const serving::SimulationResult& res) {
  std::vector<std::string> out;
  if (res.routing_loops > 0) {
    out.push_back(fmt::format("{}: the routing trace {} looped {} time(s): the run outlasts it, so its routing repeats",
                              cfg.source, cfg.routing.trace.file, res.routing_loops));
  }
  if (const workloads::GroupLimitReport& g = res.routing_group_limit; g.tokens_over_limit > 0) {
    // A measured trace is still data: the run goes on, but its routing breaks the model's group limit.
    out.push_back(fmt::format(
        "{}: the routing trace {} breaks the model's group limit (at most {} of {} expert groups per "
        "token): {} of {} tokens (token x MoE layer, {:.2f} %) reach more, up to {} groups; first "
        "at step {}, MoE layer {}",
        cfg.source, cfg.routing.trace.file, cfg.model.topk_group, cfg.model.expert_groups, g.tokens_over_limit,
        g.tokens_checked, 100.0 * static_cast<double>(g.tokens_over_limit) / static_cast<double>(g.tokens_checked),
        g.max_groups, g.first_step, g.first_layer));
  }
  return out;
}

}  // namespace

ExperimentRun run_experiment(ExperimentConfig cfg, const RunRequest& request) {
  if (request.report) {
    if (!request.dir) {
      throw core::Error("a run's report is written into its results directory: give one");
    }
    cfg.outputs.steps_csv = true;
    cfg.outputs.events_csv = true;
    cfg.outputs.gpu_layers_csv = true;
  }
  // Made now, the staging directory reports a bad target before the simulation, not after.
  std::optional<core::StagedDirectory> staged;
  if (request.dir) {
    staged.emplace(*request.dir, run_output_names());
  }
  ExperimentRun run;
  const auto t0 = std::chrono::steady_clock::now();
  serving::Simulator sim(build_simulation(cfg, profile_pool_windows(cfg)));
  const RunOutputs outputs(sim, cfg);
  if (request.progress != nullptr || request.poll) {
    // Simulated time against the workload's duration, or finished requests against its count.
    auto last_report = t0;
    auto last_poll = t0;
    sim.set_progress(
        [&request, &cfg, t0, last_report, last_poll](const serving::RunProgress& p) mutable {
          const auto now = std::chrono::steady_clock::now();
          if (request.poll && now - last_poll >= std::chrono::milliseconds(100)) {
            last_poll = now;
            request.poll();
          }
          if (request.progress == nullptr || now - t0 < std::chrono::seconds(3) ||
              now - last_report < std::chrono::seconds(1)) {
            return;
          }
          last_report = now;
          const double sim_s = core::to_seconds(p.now_ns);
          const std::string target =
              cfg.workload.duration_s > 0.0 ? fmt::format(" of ~{:.0f} s", cfg.workload.duration_s) : "";
          const std::string of = cfg.workload.num_requests > 0 ? fmt::format("/{}", cfg.workload.num_requests) : "";
          *request.progress << fmt::format("epsim run: simulated {:.1f} s{}, {}{} requests finished ({} arrived)\n",
                                           sim_s, target, p.requests_finished, of, p.requests_arrived)
                            << std::flush;
        },
        request.poll ? 64 : 2048);  // a poll every ~0.1 s needs finer steps than lines every second
  }
  run.result = sim.run();
  run.warnings = result_warnings(cfg, run.result);
  run.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!staged) {
    for (const ResultFile& f : result_files(cfg, run.result, outputs.logs())) {
      std::ostringstream text;
      f.write(text);
      run.files.emplace_back(f.name, text.str());
    }
    if (outputs.logs().timeline != nullptr) {
      if (std::string note = outputs.logs().timeline->sampling_note(); !note.empty()) {
        run.warnings.push_back(std::move(note));
      }
    }
    return run;
  }
  // Results, report and the swap into place are not cut by Ctrl-C (it takes effect right after).
  const core::SignalBlock block;
  write_results(staged->path(), cfg, run.result, outputs.logs());
  if (request.report) {
    // SVGs need Node.js; the run's report is still whole without them (the page draws its own figures).
    const bool svg = report::program_available(report::node_program());
    if (!svg) {
      run.warnings.push_back(
          fmt::format("no {} on the PATH: report figures written without their SVGs (Debian: apt install nodejs)",
                      report::node_program()));
    }
    run.report_file = staged->target() / write_run_report(staged->path(), svg, staged->target()).filename();
  }
  staged->commit();
  return run;
}

std::string validate_experiment(const ExperimentConfig& cfg) {
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
    if (rows.replay_skipped_rows() > 0) {  // a trace's failed rows, another model's: said, not silently dropped
      workload += fmt::format(", skipping {} row(s): {}", rows.replay_skipped_rows(), rows.replay_skipped_what());
    }
  }
  const workloads::SessionConfig& sessions = cfg.workload.sessions;
  if (sessions.kind == workloads::SessionConfig::Kind::sharegpt) {
    // The build above read the conversation file; its conversations are the sessions that can start.
    workloads::RequestGenerator starts(cfg.workload, core::RandomStreams(cfg.seed_of(SeedFamily::workload)));
    std::int64_t n = 0;
    while (starts.next()) {
      ++n;
    }
    workload = fmt::format("{} conversation(s) of {} as sessions at {} per s", n, sessions.file,
                           cfg.workload.arrivals.rate_rps);
    if (cfg.workload.num_requests > 0) {
      workload += fmt::format(", at most {} turns", cfg.workload.num_requests);
    }
  } else if (sessions.enabled()) {
    workload += " (turns; each arrival starts a session)";
  }
  return fmt::format("{}: ok ({} on {} x {} GPUs, {}, {})\n", cfg.source, cfg.model.name, cfg.cluster.num_gpus(),
                     cfg.gpu.name, ep_description(cfg), workload);
}

}  // namespace epsim::experiments
