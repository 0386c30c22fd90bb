// SPDX-License-Identifier: Apache-2.0
#include "experiments/assembly/results_writer.hpp"

#include <fmt/format.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "sim/memory_plan.hpp"
#include "version.hpp"

namespace epsim::experiments {
namespace {

nlohmann::ordered_json latency_json(const serving::LatencySummary& s) {
  return {{"count", s.count}, {"mean", s.mean}, {"p50", s.p50}, {"p90", s.p90}, {"p95", s.p95}, {"p99", s.p99}};
}

// Each configured cap's value and the share of the measured rank-steps in which it held back waiting
// requests; limited_by lists those at or above k_cap_binding_threshold.
nlohmann::ordered_json limits_json(const ExperimentConfig& cfg, const serving::CapTally& caps) {
  const serving::SchedulerConfig& sc = cfg.serving.scheduler;
  nlohmann::ordered_json j;
  j["threshold"] = serving::k_cap_binding_threshold;
  j["rank_steps"] = caps.rank_steps;
  nlohmann::ordered_json limited = nlohmann::ordered_json::array();
  for (const serving::AdmissionCap c : serving::k_admission_caps) {
    const std::string name(serving::cap_name(c));
    nlohmann::ordered_json e;
    if (c == serving::AdmissionCap::seats) {
      e["cap"] = sc.max_running_requests;
    } else if (c == serving::AdmissionCap::batch_tokens) {
      e["cap"] = sc.max_batch_tokens;
    }
    e["bound_rank_steps"] = caps[c];
    e["binding_fraction"] = caps.binding_fraction(c);
    j[name] = e;
    if (caps.limits(c)) {
      limited.push_back(name);
    }
  }
  j["limited_by"] = limited;
  return j;
}

}  // namespace

std::string limits_line(const serving::CapTally& caps) {
  std::string parts;
  for (const serving::AdmissionCap c : serving::k_admission_caps) {
    if (caps.limits(c)) {
      parts += fmt::format("{}{} ({}) bound {:.0f} % of rank-steps", parts.empty() ? "" : "; ", serving::cap_setting(c),
                           serving::cap_name(c), 100.0 * caps.binding_fraction(c));
    }
  }
  return parts.empty() ? "" : "limited by a configured cap: " + parts + " (requests waiting)";
}

nlohmann::ordered_json metrics_json(const ExperimentConfig& cfg, const serving::SimulationResult& res) {
  const serving::RunSummary& s = res.summary;
  nlohmann::ordered_json m;
  m["window"] = {{"warmup_s", cfg.serving.window.warmup_s},
                 {"cooldown_s", cfg.serving.window.cooldown_s},
                 {"measured_s", s.measured_s},
                 {"requests_total", s.requests_total}};
  m["requests"] = s.requests;
  m["requests_finished"] = s.requests_finished;
  m["requests_rejected"] = s.requests_rejected;
  m["preemptions"] = s.preemptions;
  m["hit_time_limit"] = res.hit_time_limit;
  m["routing_exhausted"] = res.routing_exhausted;
  if (cfg.policy.rebalance.trigger) {
    m["rebalancing"] = {{"rebalances", res.rebalances},
                        {"expert_moves", res.expert_moves},
                        {"gb_moved", res.migration_bytes / 1e9},
                        {"stall_ms", res.migration_stall_ms}};
    for (const policies::TriggerStat& stat : res.trigger_stats) {
      m["rebalancing"][stat.name] = stat.value();
    }
  }
  if (const serving::PrefixCacheResult& pc = res.prefix_cache; pc.enabled) {
    const serving::PrefixCacheTally& t = pc.tally;
    m["prefix_cache"] = {
        {"hit_rate_tokens", pc.hit_rate_tokens()},
        {"hit_rate_requests", pc.hit_rate_requests()},
        {"cached_tokens", pc.cached_tokens},
        {"prompt_tokens", pc.prompt_tokens},
        {"evicted_blocks", t.evicted_blocks},
        {"dropped_blocks", t.dropped_blocks},
        {"fetched_blocks", t.fetched_blocks},
        {"recomputed_blocks", t.recomputed_blocks},
        {"fetch_ms_mean", t.fetches > 0 ? t.fetch_ns / 1e6 / static_cast<double>(t.fetches) : 0.0},
    };
  }
  if (cfg.disaggregated()) {
    m["kv_transfers"] = {
        {"count", res.kv_transfers}, {"gb", res.kv_transfer_bytes / 1e9}, {"mean_ms", res.kv_transfer_ms_mean}};
  }
  // The requests each DP rank of a pool was given: how evenly arrivals and hand-offs spread.
  for (const serving::PoolRequests& pool : res.pools) {
    std::int64_t lo = pool.per_rank.empty() ? 0 : pool.per_rank.front();
    std::int64_t hi = lo;
    std::int64_t sum = 0;
    for (const std::int64_t n : pool.per_rank) {
      lo = std::min(lo, n);
      hi = std::max(hi, n);
      sum += n;
    }
    const double mean =
        pool.per_rank.empty() ? 0.0 : static_cast<double>(sum) / static_cast<double>(pool.per_rank.size());
    m["pools"][pool.name]["requests_per_rank"] = {{"min", lo}, {"max", hi}, {"mean", mean}};
  }
  m["makespan_s"] = s.makespan_s;
  m["ttft_ms"] = latency_json(s.ttft_ms);
  m["tpot_ms"] = latency_json(s.tpot_ms);
  m["e2e_ms"] = latency_json(s.e2e_ms);
  m["inter_token_ms"] = latency_json(s.inter_token_ms);
  m["slo"] = {{"ttft_ms", cfg.serving.slo.ttft_ms},       {"tpot_ms", cfg.serving.slo.tpot_ms},
              {"attainment", s.slo_attainment},           {"ttft_attainment", s.slo_ttft_attainment},
              {"tpot_attainment", s.slo_tpot_attainment}, {"goodput_rps", s.goodput_rps}};
  m["throughput_rps"] = s.throughput_rps;
  m["output_tokens_per_s"] = s.output_tokens_per_s;
  m["steps"] = s.steps;
  m["mean_step_ms"] = s.mean_step_ms;
  m["straggler_gap_us"] = {{"mean", s.mean_straggler_gap_us}, {"max", s.max_straggler_gap_us}};
  m["all_to_all_ms_per_step"] = s.mean_comm_ms;
  m["barrier_idle_fraction"] = s.barrier_idle_fraction;
  m["comm_fraction"] = s.comm_fraction;
  m["traffic_gb"] = {{"intra_node", s.intra_node_gb}, {"inter_node", s.inter_node_gb}};
  m["gpu_busy_fraction"] = s.gpu_busy_fraction;
  m["limits"] = limits_json(cfg, s.caps);
  for (const serving::SummaryFigure& f : res.figures) {
    m[f.name] = f.value;
  }
  return m;
}

std::string summary_json(const ExperimentConfig& cfg, const serving::SimulationResult& res) {
  const serving::PoolSpec& primary = cfg.primary_pool();
  const auto memory_of = [&](const serving::PoolSpec& pool) {
    return serving::plan_memory(cfg.model, cfg.gpu_of(pool), pool.slots_per_gpu(cfg.model.routed_experts),
                                cfg.serving.scheduler, pool.attention_tp);
  };
  const serving::MemoryPlan memory = memory_of(primary);
  int prefill_groups = 0;
  for (const serving::PoolSpec& pool : cfg.pools) {
    prefill_groups += pool.role == serving::PoolRole::prefill ? pool.shape.groups : 0;
  }
  nlohmann::ordered_json j;
  j["epsim_version"] = k_version;
  j["seed"] = cfg.seed;
  j["seeds"] = {{"workload", cfg.seed_of(SeedFamily::workload)}, {"cluster", cfg.seed_of(SeedFamily::cluster)}};
  j["config_source"] = cfg.source;
  j["config"] = nlohmann::ordered_json::parse(cfg.echo_json);
  j["resolved"] = {
      {"model", cfg.model.name},
      {"gpu", cfg.gpu.name},
      {"gpus", cfg.cluster.num_gpus()},
      {"cluster", cfg.cluster.name},
      {"speed_factors", resolved_speed_factors(cfg)},
      {"ep_size", cfg.ep_size()},
      {"ep_groups", serving::total_groups(cfg.pools)},
      {"attention_tp", primary.attention_tp},
      {"prefill_groups", prefill_groups},
      {"slots_per_gpu", cfg.slots_per_gpu()},
      {"weights_gib_per_gpu", memory.weights_gib},
      {"kv_cache_gib_per_gpu", memory.kv_gib},
      {"kv_cache_tokens_per_gpu", memory.kv_blocks * cfg.serving.scheduler.kv_block_tokens},
      {"moe_layers", cfg.model.num_moe_layers()},
      {"placement", cfg.policy.placement},
      {"routing", cfg.policy.routing},
  };
  if (cfg.explicit_pools) {
    // Every pool as resolved; ep_size, slots and memory above are the primary pool's.
    for (const serving::PoolSpec& pool : cfg.pools) {
      const serving::MemoryPlan m = memory_of(pool);
      nlohmann::ordered_json handoff_to = nlohmann::ordered_json::array();
      for (const int to : pool.handoff_to) {
        handoff_to.push_back(cfg.pools[static_cast<std::size_t>(to)].name);
      }
      j["resolved"]["pools"].push_back({
          {"name", pool.name},
          {"role", serving::role_name(pool.role)},
          {"first_gpu", pool.shape.first_gpu},
          {"gpus", pool.gpus()},
          {"ep_size", pool.shape.ep_size},
          {"ep_groups", pool.shape.groups},
          {"attention_tp", pool.attention_tp},
          {"gpu", cfg.gpu_of(pool).name},
          {"slots_per_gpu", pool.slots_per_gpu(cfg.model.routed_experts)},
          {"kv_cache_tokens_per_gpu", m.kv_blocks * cfg.serving.scheduler.kv_block_tokens},
          {"communication", hardware::algorithm_name(pool.comm.algorithm)},
          {"placement", pool.policy.placement},
          {"routing", pool.policy.routing},
          {"handoff_to", handoff_to},
      });
    }
  } else {
    for (const serving::PoolSpec& pool : cfg.pools) {
      if (pool.role == serving::PoolRole::prefill && pool.shape.ep_size != cfg.ep_size()) {
        // The shorthand's prefill pool of its own size.
        j["resolved"]["prefill_ep_size"] = pool.shape.ep_size;
        j["resolved"]["prefill_slots_per_gpu"] = pool.slots_per_gpu(cfg.model.routed_experts);
        j["resolved"]["prefill_kv_cache_tokens_per_gpu"] =
            memory_of(pool).kv_blocks * cfg.serving.scheduler.kv_block_tokens;
      }
    }
  }
  j["metrics"] = metrics_json(cfg, res);
  return j.dump(2) + "\n";
}

std::string requests_csv(const serving::SimulationResult& res) {
  std::string out =
      "id,group,rank,prompt_tokens,output_tokens,arrival_ns,first_token_ns,finish_ns,ttft_ms,tpot_ms,e2e_ms,"
      "preemptions,"
      "rejected\n";
  for (const serving::RequestState& r : res.requests) {
    if (r.finished()) {
      fmt::format_to(std::back_inserter(out), "{},{},{},{},{},{},{},{},{},{},{},{},0\n", r.spec.id, r.group, r.rank,
                     r.spec.prompt_tokens, r.spec.output_tokens, r.spec.arrival_ns, r.first_token_ns, r.finish_ns,
                     r.ttft_ms(), r.tpot_ms(), r.e2e_ms(), r.preemptions);
    } else {
      fmt::format_to(std::back_inserter(out), "{},{},{},{},{},{},{},,,,,{},{}\n", r.spec.id, r.group, r.rank,
                     r.spec.prompt_tokens, r.spec.output_tokens, r.spec.arrival_ns, r.first_token_ns, r.preemptions,
                     r.rejected ? 1 : 0);
    }
  }
  return out;
}

std::span<const std::string_view> run_output_names() {
  static constexpr std::array<std::string_view, 10> k_names{
      "summary.json",  "requests.csv", "steps.csv",      "tokens.csv",  "layers.csv",
      "timeline.json", "events.csv",   "gpu_layers.csv", "report.html", "report-figures"};
  return k_names;
}

std::vector<ResultFile> result_files(const ExperimentConfig& cfg, const serving::SimulationResult& res,
                                     const RunLogs& logs) {
  std::vector<ResultFile> files;
  files.push_back({"requests.csv", [&res](std::ostream& o) { o << requests_csv(res); }});
  if (logs.steps != nullptr) {
    files.push_back({"steps.csv", [&logs](std::ostream& o) { logs.steps->text().write_to(o); }});
  }
  if (logs.tokens != nullptr) {
    files.push_back({"tokens.csv", [&logs](std::ostream& o) { logs.tokens->text().write_to(o); }});
  }
  if (logs.layers != nullptr) {
    files.push_back({"layers.csv", [&logs](std::ostream& o) { logs.layers->text().write_to(o); }});
  }
  if (logs.timeline != nullptr) {
    files.push_back({"timeline.json", [&logs](std::ostream& o) { o << logs.timeline->json(); }});
  }
  if (logs.events != nullptr) {
    files.push_back({"events.csv", [&logs](std::ostream& o) { o << logs.events->csv(); }});
  }
  if (logs.gpu_layers != nullptr) {
    files.push_back({"gpu_layers.csv", [&logs](std::ostream& o) { o << logs.gpu_layers->csv(); }});
  }
  files.push_back({"summary.json", [&cfg, &res](std::ostream& o) { o << summary_json(cfg, res); }});
  return files;
}

void write_results(const std::filesystem::path& dir, const ExperimentConfig& cfg, const serving::SimulationResult& res,
                   const RunLogs& logs) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    throw core::Error("cannot create results directory " + dir.string() + ": " + ec.message());
  }
  for (const ResultFile& f : result_files(cfg, res, logs)) {
    core::write_file_atomically(dir / f.name, f.write);
  }
  if (logs.timeline != nullptr) {
    if (const std::string note = logs.timeline->sampling_note(); !note.empty()) {
      spdlog::warn("{}", note);
    }
  }
}

std::string ep_description(const ExperimentConfig& cfg) {
  return serving::describe_pools(cfg.pools);
}

std::string human_summary(const ExperimentConfig& cfg, const serving::SimulationResult& res) {
  const serving::RunSummary& s = res.summary;
  std::string out;
  auto line = [&]<class... A>(fmt::format_string<A...> f, A&&... args) {
    fmt::format_to(std::back_inserter(out), f, std::forward<A>(args)...);
  };
  line("{} on {} node(s) x {} {} ({} GPUs, {}), placement {}, routing {}\n", cfg.model.name, cfg.cluster.nodes,
       cfg.cluster.gpus_per_node, cfg.gpu.name, cfg.cluster.num_gpus(), ep_description(cfg), cfg.policy.placement,
       cfg.policy.routing);
  line("requests: {} finished of {} in {:.2f} s simulated ({} steps, mean step {:.2f} ms){}\n", s.requests_finished,
       s.requests, s.makespan_s, s.steps, s.mean_step_ms, res.hit_time_limit ? "  [hit max_sim_time_s]" : "");
  if (cfg.workload.arrivals.kind == workloads::ArrivalConfig::Kind::replay) {
    const std::int64_t limit = cfg.workload.num_requests;
    std::string why = " (every row)";
    if (limit > 0 && s.requests >= limit) {
      why = fmt::format(" (the first {}: workload.num_requests)", limit);
    } else if (cfg.workload.duration_s > 0.0 || res.hit_time_limit) {
      why = " (the rows within workload.duration_s / run.max_sim_time_s)";
    } else if (cfg.workload.arrivals.replay.start_s > 0.0 || cfg.workload.arrivals.replay.window_s > 0.0) {
      why = " (the rows inside workload.replay_start_s / replay_window_s)";
    }
    line("replayed {} request(s) from {}{}\n", s.requests, cfg.workload.arrivals.replay_file, why);
  }
  line("{:<6} {:>10} {:>10} {:>10} {:>10}\n", "ms", "mean", "p50", "p90", "p99");
  for (const auto& [name, l] :
       {std::pair{"TTFT", s.ttft_ms}, std::pair{"TPOT", s.tpot_ms}, std::pair{"E2E", s.e2e_ms}}) {
    line("{:<6} {:>10.2f} {:>10.2f} {:>10.2f} {:>10.2f}\n", name, l.mean, l.p50, l.p90, l.p99);
  }
  line("SLO (TTFT <= {} ms, TPOT <= {} ms): attainment {:.1f} %, goodput {:.2f} req/s\n", cfg.serving.slo.ttft_ms,
       cfg.serving.slo.tpot_ms, 100.0 * s.slo_attainment, s.goodput_rps);
  line("straggler gap per MoE layer: mean {:.1f} us, max {:.1f} us; barrier idle {:.1f} % of GPU time\n",
       s.mean_straggler_gap_us, s.max_straggler_gap_us, 100.0 * s.barrier_idle_fraction);
  if (cfg.variability.dvfs.enabled) {
    line("power-limited clocks (of cold): mean {:.3f}, lowest {:.3f}\n", res.figure("dvfs.clock_mean"),
         res.figure("dvfs.clock_min"));
  }
  if (const std::string limits = limits_line(s.caps); !limits.empty()) {
    line("{}\n", limits);
  }
  return out;
}

}  // namespace epsim::experiments
