// SPDX-License-Identifier: Apache-2.0
// The observation outputs of `epsim run`: steps.csv's queue / running / KV / preemption columns against
// requests.csv, gpu_layers.csv against layers.csv, events.csv against summary.json, and timeline.json
// against the Chrome trace event format's rules, on runs that exercise every event.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "experiments/cli/cli.hpp"
#include "tests/support/csv.hpp"

namespace fs = std::filesystem;

namespace {

const std::string k_small = std::string(EPSIM_TEST_DATA_DIR) + "/small.toml";
const std::string k_director = std::string(EPSIM_TEST_DATA_DIR) + "/director_scenario.toml";
const std::string k_small_kv = "scheduler.gpu_memory_utilization=0.318";

int run(const std::string& config, const fs::path& dir, const std::vector<std::string>& sets) {
  std::vector<std::string> args{"run", config, "--out", dir.string()};
  for (const std::string& s : sets) {
    args.push_back("--set");
    args.push_back(s);
  }
  std::ostringstream out;
  std::ostringstream err;
  const int code = epsim::experiments::run_cli(args, out, err);
  INFO(err.str());
  REQUIRE(code == 0);
  return code;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A CSV file as rows of cells, with its header's column indices.
struct Table {
  std::map<std::string, std::size_t> col;
  std::vector<std::vector<std::string>> rows;

  const std::string& at(std::size_t row, const std::string& name) const { return rows[row].at(col.at(name)); }
  double num(std::size_t row, const std::string& name) const { return std::stod(at(row, name)); }
  long long integer(std::size_t row, const std::string& name) const { return std::stoll(at(row, name)); }
};

Table read_csv(const fs::path& p) {
  std::ifstream in(p);
  REQUIRE(in.good());
  Table t;
  std::string line;
  std::getline(in, line);
  const auto header = epsim::test::csv_cells(line);
  for (std::size_t i = 0; i < header.size(); ++i) {
    t.col[header[i]] = i;
  }
  while (std::getline(in, line)) {
    auto cells = epsim::test::csv_cells(line);
    cells.resize(header.size());  // a trailing empty cell
    t.rows.push_back(std::move(cells));
  }
  return t;
}

// Integer ns from a printed exact-microsecond timestamp.
long long ns_of(const nlohmann::json& us) {
  return std::llround(us.get<double>() * 1000.0);
}

// What a trace holds, by event name, once it passed the format checks.
struct TraceCounts {
  std::map<std::string, int> by_name;
  int steps = 0;
  int gpu_slices = 0;
};

// The trace event format's rules (the JSON object form): every event has ph and pid, and ts unless it is
// metadata; X slices have a tid and dur >= 0 and, per (pid, tid) track, nest or are disjoint; instants
// have a valid scope; counters have numeric args and non-decreasing ts per (pid, name) series; metadata
// names every process and thread used.
TraceCounts check_trace(const nlohmann::json& trace) {
  REQUIRE(trace.is_object());
  REQUIRE(trace["traceEvents"].is_array());
  TraceCounts counts;
  std::set<int> named_processes;
  std::set<std::pair<int, int>> named_threads;
  std::set<int> used_processes;
  std::set<std::pair<int, int>> used_threads;
  std::map<std::pair<int, int>, std::vector<std::pair<long long, long long>>> tracks;
  std::map<std::pair<int, std::string>, long long> counter_ts;
  for (const auto& e : trace["traceEvents"]) {
    REQUIRE(e.contains("ph"));
    REQUIRE(e.contains("pid"));
    REQUIRE(e["pid"].is_number_integer());
    REQUIRE(e.contains("name"));
    const std::string ph = e["ph"];
    const int pid = e["pid"];
    const std::string name = e["name"];
    if (ph == "M") {
      if (name == "process_name") {
        named_processes.insert(pid);
      } else if (name == "thread_name") {
        named_threads.insert({pid, e["tid"].get<int>()});
      }
      REQUIRE(e["args"].is_object());
      continue;
    }
    REQUIRE(e.contains("ts"));
    REQUIRE(e["ts"].is_number());
    REQUIRE(e["ts"].get<double>() >= 0.0);
    used_processes.insert(pid);
    ++counts.by_name[name];
    if (ph == "X") {
      REQUIRE(e["tid"].is_number_integer());
      REQUIRE(e["dur"].is_number());
      const long long begin = ns_of(e["ts"]);
      const long long dur = ns_of(e["dur"]);
      REQUIRE(dur >= 0);
      const int tid = e["tid"];
      used_threads.insert({pid, tid});
      tracks[{pid, tid}].emplace_back(begin, begin + dur);
      counts.steps += name.rfind("step ", 0) == 0 ? 1 : 0;
      counts.gpu_slices += tid < 1000 ? 1 : 0;
    } else if (ph == "i") {
      REQUIRE(e.contains("s"));
      const std::string scope = e["s"];
      REQUIRE((scope == "g" || scope == "p" || scope == "t"));
      if (scope == "t") {
        REQUIRE(e["tid"].is_number_integer());
      }
      if (e.contains("tid")) {
        used_threads.insert({pid, e["tid"].get<int>()});
      }
    } else if (ph == "C") {
      REQUIRE(e["args"].is_object());
      REQUIRE_FALSE(e["args"].empty());
      for (const auto& [k, v] : e["args"].items()) {
        INFO(name << "." << k);
        REQUIRE(v.is_number());
      }
      const long long ts = ns_of(e["ts"]);
      auto [it, fresh] = counter_ts.try_emplace({pid, name}, ts);
      INFO("counter " << name << " of process " << pid);
      REQUIRE(it->second <= ts);
      it->second = ts;
    } else {
      FAIL("unexpected phase " << ph);
    }
  }
  for (const int p : used_processes) {
    INFO("process " << p);
    REQUIRE(named_processes.count(p) == 1);
  }
  for (const auto& t : used_threads) {
    INFO("thread " << t.first << "/" << t.second);
    REQUIRE(named_threads.count(t) == 1);
  }
  // Nest or disjoint: sorted by begin (longest first), each slice ends inside every open one it starts in.
  for (auto& [track, s] : tracks) {
    std::sort(s.begin(), s.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second > b.second;
    });
    std::vector<long long> open_ends;
    for (const auto& [b, e] : s) {
      while (!open_ends.empty() && open_ends.back() <= b) {
        open_ends.pop_back();
      }
      INFO("track " << track.first << "/" << track.second << " slice at " << b << " ns");
      REQUIRE((open_ends.empty() || e <= open_ends.back()));
      open_ends.push_back(e);
    }
  }
  return counts;
}

nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

}  // namespace

TEST_CASE("gpu_layers.csv: a half-speed GPU is the slowest, the others wait for it, as layers.csv says") {
  const fs::path dir = fs::temp_directory_path() / "epsim_obs_gpu_layers";
  fs::remove_all(dir);
  // small.toml (EP4, one group) with GPU 1 at quarter speed, flat routing and 2048-token prompts with one
  // output token: every step is a prefill whose expert GEMMs are compute-bound, so GPU 1's experts take
  // about four times as long as anyone's (a memory-bound decode would hide the slow clock).
  run(k_small, dir,
      {"cluster.speed_factors=[1.0, 0.25, 1.0, 1.0]", "routing.zipf_exponent=0.0", "workload.num_requests=24",
       "workload.prompt_tokens.distribution=\"fixed\"", "workload.prompt_tokens.value=2048",
       "workload.output_tokens.distribution=\"fixed\"", "workload.output_tokens.value=1", "output.gpu_layers_csv=true",
       "output.layers_csv=true", "output.layers_every=1", "output.steps_csv=true"});
  const Table m = read_csv(dir / "gpu_layers.csv");
  const Table layers = read_csv(dir / "layers.csv");
  const Table steps = read_csv(dir / "steps.csv");
  const std::size_t moe_layers = 32;  // Mixtral-8x7B
  REQUIRE(m.rows.size() == moe_layers * 4);
  // Independently from layers.csv (every step, one row per GPU): per (MoE layer, GPU) the sums of local
  // and expert time, of the wait for the layer's slowest GPU, and how often it was that GPU.
  struct Sum {
    long long steps = 0;
    double local = 0.0;
    double expert = 0.0;
    double wait = 0.0;
    long long slowest = 0;
  };
  std::map<std::pair<long long, long long>, Sum> sums;
  for (std::size_t i = 0; i < layers.rows.size(); i += 4) {
    double max_ns = -1.0;
    long long slowest = 0;
    for (std::size_t g = 0; g < 4; ++g) {
      REQUIRE(layers.integer(i + g, "gpu") == static_cast<long long>(g));
      const double e = layers.num(i + g, "expert_ns");
      if (e > max_ns) {
        max_ns = e;
        slowest = static_cast<long long>(g);
      }
    }
    for (std::size_t g = 0; g < 4; ++g) {
      Sum& s = sums[{layers.integer(i, "moe_layer"), static_cast<long long>(g)}];
      ++s.steps;
      s.local += layers.num(i + g, "local_ns");
      s.expert += layers.num(i + g, "expert_ns");
      s.wait += max_ns - layers.num(i + g, "expert_ns");
      s.slowest += slowest == static_cast<long long>(g) ? 1 : 0;
    }
  }
  double share_slow = 0.0;  // GPU 1's, averaged over MoE layers
  for (std::size_t r = 0; r < m.rows.size(); ++r) {
    const long long layer = m.integer(r, "moe_layer");
    const long long gpu = m.integer(r, "gpu");
    const Sum& s = sums.at({layer, gpu});
    INFO("MoE layer " << layer << ", GPU " << gpu);
    REQUIRE(m.integer(r, "group") == 0);
    REQUIRE(m.integer(r, "steps") == static_cast<long long>(steps.rows.size()));
    REQUIRE(m.integer(r, "steps") == s.steps);
    const auto n = static_cast<double>(s.steps);
    // layers.csv prints ns with one decimal, gpu_layers.csv us with three.
    REQUIRE(m.num(r, "mean_local_us") == Approx(s.local / n / 1e3).margin(2e-3));
    REQUIRE(m.num(r, "mean_expert_us") == Approx(s.expert / n / 1e3).margin(2e-3));
    REQUIRE(m.num(r, "mean_wait_us") == Approx(s.wait / n / 1e3).margin(2e-3));
    REQUIRE(m.num(r, "slowest_share") == Approx(static_cast<double>(s.slowest) / n).margin(1e-4));
    if (gpu == 1) {
      share_slow += m.num(r, "slowest_share") / static_cast<double>(moe_layers);
      REQUIRE(m.num(r, "slowest_share") >= 0.75);
    } else {
      REQUIRE(m.num(r, "slowest_share") <= 0.25);
      REQUIRE(m.num(r, "mean_wait_us") > m.num(r, "mean_expert_us"));  // waits longer than it works
    }
  }
  REQUIRE(share_slow > 0.95);
  fs::remove_all(dir);
}

TEST_CASE("steps.csv: queued and running requests, KV use and preemptions agree with requests.csv") {
  const fs::path dir = fs::temp_directory_path() / "epsim_obs_steps";
  fs::remove_all(dir);
  // A KV cache just over the expert weights (31.8 % of an H100's memory) under a burst: it fills up,
  // decodes run out of blocks and preempt.
  run(k_small, dir, {"workload.rate_rps=40.0", k_small_kv, "output.steps_csv=true", "output.events_csv=true"});
  const Table steps = read_csv(dir / "steps.csv");
  const Table reqs = read_csv(dir / "requests.csv");
  const nlohmann::json summary = read_json(dir / "summary.json");
  REQUIRE(steps.rows.size() > 10);
  long long preemptions = 0;
  long long max_queued = 0;
  for (std::size_t s = 0; s < steps.rows.size(); ++s) {
    const long long t = steps.integer(s, "start_ns");
    // At a step's start every request that arrived and is not done yet is queued or running.
    long long outstanding = 0;
    long long decoding = 0;
    for (std::size_t r = 0; r < reqs.rows.size(); ++r) {
      if (reqs.integer(r, "rejected") != 0 || reqs.integer(r, "arrival_ns") > t) {
        continue;
      }
      const bool done = !reqs.at(r, "finish_ns").empty() && reqs.integer(r, "finish_ns") <= t;
      outstanding += done ? 0 : 1;
      decoding += !done && reqs.integer(r, "first_token_ns") >= 0 && reqs.integer(r, "first_token_ns") <= t ? 1 : 0;
    }
    INFO("step " << s << " at " << t << " ns");
    const long long queued = steps.integer(s, "queued_requests");
    const long long running = steps.integer(s, "running_requests");
    REQUIRE(queued + running == outstanding);
    REQUIRE(running <= 4LL * 32);  // 4 ranks x max_running_requests
    REQUIRE(running >= 1);         // a step runs something
    // Decoding requests run unless preempted (then they queue again).
    REQUIRE(decoding <= running + queued);
    const double kv = steps.num(s, "kv_used_fraction");
    REQUIRE(kv > 0.0);
    REQUIRE(kv <= 1.0);
    preemptions += steps.integer(s, "preemptions");
    max_queued = std::max(max_queued, queued);
  }
  long long request_preemptions = 0;
  for (std::size_t r = 0; r < reqs.rows.size(); ++r) {
    request_preemptions += reqs.integer(r, "preemptions");
  }
  REQUIRE(max_queued > 0);
  REQUIRE(preemptions > 0);
  REQUIRE(preemptions == request_preemptions);
  REQUIRE(preemptions == summary["metrics"]["preemptions"].get<long long>());
  // events.csv: one row per preemption, in time order.
  const Table events = read_csv(dir / "events.csv");
  long long preemption_rows = 0;
  for (std::size_t r = 0; r < events.rows.size(); ++r) {
    preemption_rows += events.at(r, "kind") == "preemption" ? 1 : 0;
    if (r > 0) {
      REQUIRE(events.integer(r - 1, "time_ns") <= events.integer(r, "time_ns"));
    }
  }
  REQUIRE(preemption_rows == preemptions);
  fs::remove_all(dir);
}

TEST_CASE("timeline.json and events.csv: arrivals, preemptions, EPLB rebalances and their migrations", "[slow]") {
  const fs::path dir = fs::temp_directory_path() / "epsim_obs_eplb";
  fs::remove_all(dir);
  run(k_small, dir,
      {"workload.rate_rps=40.0", k_small_kv, "policy.rebalance=\"periodic\"", "policy.rebalance.interval_steps=20",
       "policy.rebalance.window_steps=10", "output.timeline=true", "output.timeline_steps=0", "output.events_csv=true",
       "output.steps_csv=true"});
  const nlohmann::json trace = read_json(dir / "timeline.json");
  const TraceCounts c = check_trace(trace);
  const nlohmann::json summary = read_json(dir / "summary.json");
  const Table steps = read_csv(dir / "steps.csv");
  const Table events = read_csv(dir / "events.csv");
  // Every step (timeline_steps = 0, far under the cap), every arrival and preemption.
  REQUIRE(trace["otherData"]["step_stride"] == 1);
  REQUIRE(c.steps == static_cast<int>(steps.rows.size()));
  REQUIRE(c.by_name.at("arrival") == 40);
  REQUIRE(c.by_name.at("preemption") == summary["metrics"]["preemptions"].get<int>());
  REQUIRE(c.by_name.at("queued requests") == c.steps);
  REQUIRE(c.by_name.at("KV cache use (%)") == c.steps);
  REQUIRE(c.by_name.at("intra-node all-to-all (GB/s)") == 2 * c.steps);
  // Link use per level: small.toml's EP4 group spans 2 nodes of 2 H100s; its capacity is 4 x 450 GB/s
  // of NVLink inside nodes and 4 NICs x 50 GB/s between them (hgx-h100, one NIC per GPU).
  REQUIRE(c.by_name.at("intra-node link use (%)") == 2 * c.steps);
  REQUIRE(c.by_name.at("inter-node link use (%)") == 2 * c.steps);
  std::map<std::pair<std::string, double>, double> sample;  // (name, ts) -> value
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("ph", "") == "C") {
      sample[{e["name"].get<std::string>(), e["ts"].get<double>()}] = e["args"].begin()->get<double>();
    }
  }
  int checked = 0;
  for (const auto& [key, gbps] : sample) {
    if (key.first == "intra-node all-to-all (GB/s)" && gbps > 0.0) {
      REQUIRE(sample.at({"intra-node link use (%)", key.second}) == Approx(100.0 * gbps / (4 * 450.0)).margin(2e-3));
      REQUIRE(sample.at({"inter-node link use (%)", key.second}) ==
              Approx(100.0 * sample.at({"inter-node all-to-all (GB/s)", key.second}) / (4 * 50.0)).margin(2e-3));
      ++checked;
    }
  }
  REQUIRE(checked > 0);
  const long long rebalances = summary["metrics"]["rebalancing"]["rebalances"];
  REQUIRE(rebalances > 0);
  long long rebalance_rows = 0;
  long long migration_rows = 0;
  for (std::size_t r = 0; r < events.rows.size(); ++r) {
    rebalance_rows += events.at(r, "kind") == "eplb_periodic" ? 1 : 0;
    migration_rows += events.at(r, "kind") == "migration" ? 1 : 0;
  }
  REQUIRE(rebalance_rows == rebalances);
  REQUIRE(c.by_name.at("eplb_periodic") == rebalances);
  // Stop-the-world: one network migration per rebalance that moved experts, each one row and one slice
  // (the last one may still be moving when the run ends).
  REQUIRE(migration_rows > 0);
  REQUIRE(migration_rows <= rebalances);
  REQUIRE(c.by_name.at("migration") == migration_rows);
  fs::remove_all(dir);
}

TEST_CASE("timeline.json: ViBE recalibrations and DIRECTOR re-optimisations with compute-phase migrations", "[slow]") {
  const fs::path dir = fs::temp_directory_path() / "epsim_obs_vibe";
  fs::remove_all(dir);
  run(k_small, dir,
      {"workload.num_requests=12", "policy.placement=\"vibe\"", "policy.rebalance=\"drift\"",
       "policy.rebalance.check_every_steps=2", "policy.rebalance.window_steps=4", "output.timeline=true",
       "output.timeline_steps=0", "output.events_csv=true"});
  {
    const TraceCounts c = check_trace(read_json(dir / "timeline.json"));
    const nlohmann::json summary = read_json(dir / "summary.json");
    const long long recalibrations = summary["metrics"]["rebalancing"]["recalibrations"];
    REQUIRE(recalibrations > 0);
    REQUIRE(c.by_name.at("vibe_recalibration") == summary["metrics"]["rebalancing"]["rebalances"].get<int>());
  }
  fs::remove_all(dir);
  run(k_director, dir,
      {"policy.rebalance.trigger=\"director\"", "policy.rebalance.when=\"arrivals\"",
       "policy.rebalance.predict=\"queued\"", "policy.rebalance.horizon_steps=20", "policy.rebalance.interval_steps=20",
       "policy.rebalance.predictor=\"oracle\"", "workload.num_requests=40", "output.timeline=true",
       "output.timeline_steps=0", "output.events_csv=true"});
  const TraceCounts c = check_trace(read_json(dir / "timeline.json"));
  const nlohmann::json summary = read_json(dir / "summary.json");
  const long long rebalances = summary["metrics"]["rebalancing"]["rebalances"];
  REQUIRE(rebalances > 0);
  REQUIRE(c.by_name.at("director_reoptimisation") == rebalances);
  REQUIRE(c.by_name.at("migration") > 0);
  // Compute-phase moves: the migration rows' bytes add up to what summary.json says moved.
  const Table events = read_csv(dir / "events.csv");
  double bytes = 0.0;
  for (std::size_t r = 0; r < events.rows.size(); ++r) {
    if (events.at(r, "kind") == "migration") {
      const std::string& d = events.at(r, "detail");
      bytes += std::stod(d.substr(d.find('=') + 1));
    }
  }
  REQUIRE(bytes / 1e9 == Approx(summary["metrics"]["rebalancing"]["gb_moved"].get<double>()).epsilon(1e-6));
  fs::remove_all(dir);
}

TEST_CASE("timeline.json: over output.timeline_max_mib, every stride-th step is kept and the file stays under it") {
  const fs::path dir = fs::temp_directory_path() / "epsim_obs_cap";
  fs::remove_all(dir);
  const double cap_mib = 0.25;
  run(k_small, dir,
      {"output.timeline=true", "output.timeline_steps=0", "output.steps_csv=true",
       "output.timeline_max_mib=" + std::to_string(cap_mib)});
  const std::string text = slurp(dir / "timeline.json");
  REQUIRE(static_cast<double>(text.size()) <= cap_mib * 1024 * 1024);
  const nlohmann::json trace = nlohmann::json::parse(text);
  const TraceCounts c = check_trace(trace);
  const Table steps = read_csv(dir / "steps.csv");
  const auto& meta = trace["otherData"];
  const int stride = meta["step_stride"];
  REQUIRE(stride >= 2);
  REQUIRE(meta["steps_recorded"] == static_cast<int>(steps.rows.size()));
  // Exactly the steps whose index is a multiple of the stride (one group).
  const auto expected =
      static_cast<int>((steps.rows.size() + static_cast<std::size_t>(stride) - 1) / static_cast<std::size_t>(stride));
  REQUIRE(meta["steps_kept"] == expected);
  REQUIRE(c.steps == expected);
  for (const auto& e : trace["traceEvents"]) {
    const std::string name = e["name"];
    if (name.rfind("step ", 0) == 0) {
      REQUIRE(std::stoi(name.substr(5)) % stride == 0);
    }
  }
  const std::string note = meta["sampling"];
  REQUIRE_THAT(note, Catch::Contains("output.timeline_max_mib"));
  REQUIRE_THAT(note, Catch::Contains("stride " + std::to_string(stride)));
  fs::remove_all(dir);
}

TEST_CASE("observation outputs are byte-identical for the same config and seed, and move no simulated number") {
  const fs::path a = fs::temp_directory_path() / "epsim_obs_det_a";
  const fs::path b = fs::temp_directory_path() / "epsim_obs_det_b";
  fs::remove_all(a);
  fs::remove_all(b);
  const std::vector<std::string> on{"output.timeline=true",          "output.events_csv=true",
                                    "output.gpu_layers_csv=true",    "output.steps_csv=true",
                                    "policy.rebalance=\"periodic\"", "policy.rebalance.interval_steps=30"};
  run(k_small, a, on);
  run(k_small, b, on);
  for (const char* f : {"timeline.json", "events.csv", "gpu_layers.csv", "steps.csv", "requests.csv"}) {
    INFO(f);
    REQUIRE(slurp(a / f) == slurp(b / f));
  }
  // Without any optional output the simulated requests are the same.
  fs::remove_all(b);
  run(k_small, b, {"policy.rebalance=\"periodic\"", "policy.rebalance.interval_steps=30"});
  REQUIRE(slurp(a / "requests.csv") == slurp(b / "requests.csv"));
  fs::remove_all(a);
  fs::remove_all(b);
}

TEST_CASE("speculative decoding in the outputs: steps.csv's draft_ns, the timeline's draft slices, the summary") {
  const fs::path dir = fs::temp_directory_path() / "epsim_obs_speculative";
  fs::remove_all(dir);
  // MTP with 2 drafts, under the tight KV cache (verify tokens take blocks, preemptions happen).
  run(k_small, dir,
      {"workload.rate_rps=40.0", k_small_kv, "speculative.method=mtp", "speculative.draft_tokens=2",
       "speculative.acceptance_rates=[0.8, 0.5]", "output.steps_csv=true", "output.timeline=true",
       "output.timeline_steps=0", "output.tokens_csv=true"});
  const Table steps = read_csv(dir / "steps.csv");
  const nlohmann::json summary = read_json(dir / "summary.json");
  const nlohmann::json& m = summary["metrics"];
  REQUIRE(m["requests_finished"] == m["requests"]);
  double draft = 0.0;
  double total = 0.0;
  long long drafting = 0;
  for (std::size_t s = 0; s < steps.rows.size(); ++s) {
    const double d = steps.num(s, "draft_ns");
    // Only steps with decodes draft (a prefill-only step has nothing to verify).
    REQUIRE((steps.integer(s, "decode_tokens") > 0 || d == 0.0));
    REQUIRE(d < steps.num(s, "duration_ns"));
    draft += d;
    total += steps.num(s, "duration_ns");
    drafting += d > 0.0 ? 1 : 0;
  }
  REQUIRE(drafting > 0);
  // No measurement window: the share is the column's sum over the durations' (printed to 0.1 ns).
  CHECK(m["speculative.draft_time_share"].get<double>() == Approx(draft / total).epsilon(1e-6));
  CHECK(m["speculative.mean_accepted_tokens"].get<double>() == Approx(0.8 + 0.4).epsilon(0.05));
  // Every token of every request once in tokens.csv.
  const Table tokens = read_csv(dir / "tokens.csv");
  const Table reqs = read_csv(dir / "requests.csv");
  long long out = 0;
  for (std::size_t r = 0; r < reqs.rows.size(); ++r) {
    out += reqs.integer(r, "output_tokens");
  }
  REQUIRE(static_cast<long long>(tokens.rows.size()) == out);
  // A draft slice per drafting step, closing it.
  const std::string timeline = slurp(dir / "timeline.json");
  long long slices = 0;
  for (std::size_t at = timeline.find("\"name\":\"draft\""); at != std::string::npos;
       at = timeline.find("\"name\":\"draft\"", at + 1)) {
    ++slices;
  }
  REQUIRE(slices == drafting);
}
