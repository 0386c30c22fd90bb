// SPDX-License-Identifier: Apache-2.0
// Routing traces: round trip, malformed input, streaming with flat memory, replay, import/export, stats.
#include <unistd.h>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>

#include "core/error.hpp"
#include "workloads/trace_io.hpp"
#include "workloads/trace_replay.hpp"
#include "workloads/trace_stats.hpp"
#include "workloads/trace_tools.hpp"

using namespace epsim;
using namespace epsim::workloads;
namespace fs = std::filesystem;
using Catch::Contains;

namespace {

fs::path tmp(const std::string& name) {
  return fs::temp_directory_path() / ("epsim_trace_test_" + name);
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

SyntheticRouterConfig small_router() {
  SyntheticRouterConfig c;
  c.temporal_groups = 1;
  return c;
}

trace::Header header(std::uint32_t layers, std::uint32_t experts, std::uint32_t k) {
  trace::Header h;
  h.set_version(1);
  h.set_model("test");
  h.set_moe_layers(layers);
  h.set_experts(experts);
  h.set_top_k(k);
  return h;
}

// Resident memory of this process, bytes.
double rss_bytes() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0;
  long resident = 0;
  statm >> pages >> resident;
  return static_cast<double>(resident) * static_cast<double>(::sysconf(_SC_PAGESIZE));
}

}  // namespace

TEST_CASE("a trace round-trips: write, read, re-write byte-identical (with origins and token ids)") {
  SyntheticRouter router(small_router(), 3, 16, 2, core::RandomStreams(1));
  SynthesisOptions o;
  o.steps = 50;
  o.tokens = 40;
  o.origin_gpus = 4;
  o.token_experts = true;
  const fs::path a = tmp("a.trace");
  const fs::path b = tmp("b.trace");
  const trace::Header h = generate_trace(a, router, "m", o);
  {
    TraceReader r(a);
    REQUIRE(r.header().origin_gpus() == 4);
    REQUIRE(r.header().has_token_experts());
    TraceWriter w(b, r.header());
    trace::Step s;
    while (r.next(s)) {
      REQUIRE(s.layers_size() == 3);
      w.write(s);
    }
    REQUIRE(r.steps_read() == 50);
    w.close();
  }
  REQUIRE(slurp(a) == slurp(b));
  fs::remove(a);
  fs::remove(b);
}

TEST_CASE("malformed and truncated traces give errors naming the step and layer") {
  const fs::path p = tmp("bad.trace");
  SyntheticRouter router(small_router(), 2, 8, 2, core::RandomStreams(2));
  SynthesisOptions o;
  o.steps = 5;
  o.tokens = 10;
  generate_trace(p, router, "m", o);
  const std::string good = slurp(p);
  {  // truncated inside the last step
    std::ofstream(p, std::ios::binary) << good.substr(0, good.size() - 7);
    TraceReader r(p);
    trace::Step s;
    for (int i = 0; i < 4; ++i) {
      REQUIRE(r.next(s));
    }
    REQUIRE_THROWS_WITH(r.next(s), Contains("step 4: a 30-byte message at byte 154 but only 23 bytes are left") &&
                                       Contains("truncated"));
  }
  {  // not a trace
    std::ofstream(p, std::ios::binary) << "hello world";
    REQUIRE_THROWS_WITH(TraceReader(p), Contains("not an epsim routing trace"));
  }
  {  // 13 bytes whose message size claims ~34 GB: refused against the bytes left, before allocating
    const double before = rss_bytes();
    std::ofstream(p, std::ios::binary) << "EPSIMRT1" << std::string("\xff\xff\xff\xff\x7f", 5);
    REQUIRE_THROWS_WITH(TraceReader(p), Contains("a 34359738367-byte message at byte 13 but only 0 bytes are left"));
    REQUIRE(rss_bytes() - before < 64.0 * (1 << 20));
  }
  {  // a well-formed header claiming 200,000 layers (a reader would size its rows by it)
    std::string bytes;
    header(200000, 8, 2).SerializeToString(&bytes);
    std::ofstream(p, std::ios::binary) << "EPSIMRT1" << static_cast<char>(bytes.size()) << bytes;
    REQUIRE(bytes.size() < 128);
    REQUIRE_THROWS_WITH(TraceReader(p),
                        Contains("claims 200000 MoE layers x 8 experts; expected at most 4096 x 65536"));
  }
  // Inconsistent counts are refused when written and when read.
  TraceWriter w(tmp("bad2.trace"), header(2, 8, 2));
  trace::Step s;
  s.set_index(7);
  s.set_tokens(10);
  for (int l = 0; l < 2; ++l) {
    auto* layer = s.add_layers();
    for (int e = 0; e < 8; ++e) {
      layer->add_expert_tokens(l == 1 && e == 0 ? 6 : (e < 4 ? 5 : 0));
    }
  }
  REQUIRE_THROWS_WITH(w.write(s), Contains("step 7, layer 1: expert counts sum to 21, expected tokens x top_k = 20"));
  s.mutable_layers(1)->set_expert_tokens(0, 11);
  REQUIRE_THROWS_WITH(w.write(s), Contains("step 7, layer 1: an expert has 11 tokens, more than the step's 10"));
  s.mutable_layers()->RemoveLast();
  REQUIRE_THROWS_WITH(w.write(s), Contains("step 7: has 1 MoE layers, the header says 2"));
  fs::remove(p);
}

TEST_CASE("streaming: a trace larger than a memory budget replays with flat memory", "[slow]") {
  // ~53 MB on disk (DeepSeek-V3 shape: 58 layers x 256 experts), read and replayed under a 12 MB budget.
  const fs::path p = tmp("big.trace");
  const double budget = 12e6;
  SyntheticRouterConfig c;
  SyntheticRouter router(c, 58, 256, 8, core::RandomStreams(3));
  SynthesisOptions o;
  o.tokens = 512;
  {
    TraceWriter w(p, header(58, 256, 8));
    const trace::Step step = synthesize_step(router, 0, o);
    for (int i = 0; i < 3500; ++i) {  // the same step body, re-indexed, keeps the test fast
      trace::Step s = step;
      s.set_index(static_cast<std::uint64_t>(i));
      w.write(s);
    }
    w.close();
  }
  REQUIRE(static_cast<double>(fs::file_size(p)) > 4.0 * budget);
  const double before = rss_bytes();
  double peak = before;
  TraceReplayConfig rc;
  rc.file = p.string();
  rc.loop = false;
  TraceRoutingSource src(rc, 58, 256, 8, core::RandomStreams(3));
  std::vector<std::int32_t> counts(256);
  std::int64_t steps = 0;
  for (;;) {
    src.begin_step(StepContext{0, 512, 0, 512, {}});
    if (src.exhausted()) {
      break;
    }
    src.sample(57, 512, counts);
    ++steps;
    if (steps % 50 == 0) {
      peak = std::max(peak, rss_bytes());
    }
  }
  REQUIRE(steps == 3500);
  REQUIRE(peak - before < budget);
  fs::remove(p);
}

TEST_CASE("replay copies matching steps, resamples others, loops or stops") {
  const fs::path p = tmp("replay.trace");
  SyntheticRouter router(SyntheticRouterConfig{}, 2, 16, 2, core::RandomStreams(4));
  SynthesisOptions o;
  o.steps = 3;
  o.tokens = 100;
  o.origin_gpus = 2;
  generate_trace(p, router, "m", o);
  std::vector<trace::Step> recorded(3);
  {
    TraceReader r(p);
    for (auto& s : recorded) {
      REQUIRE(r.next(s));
    }
  }
  TraceReplayConfig rc;
  rc.file = p.string();
  TraceRoutingSource looping(rc, 2, 16, 2, core::RandomStreams(5));
  std::vector<std::int32_t> counts(16);
  for (int i = 0; i < 7; ++i) {
    looping.begin_step(StepContext{});
    looping.sample(1, 100, counts);
    const auto& want = recorded[static_cast<std::size_t>(i % 3)].layers(1).expert_tokens();
    REQUIRE(std::vector<std::int32_t>(want.begin(), want.end()) == counts);
    std::vector<std::int32_t> origins(32);
    REQUIRE(looping.origin_counts(1, 2, 100, origins));
    REQUIRE_FALSE(looping.origin_counts(1, 4, 100, origins));  // different EP size: unknown origins
  }
  REQUIRE(looping.loops() == 2);
  REQUIRE_FALSE(looping.exhausted());
  // A different token count is resampled from the recorded shares: sums and caps hold.
  looping.sample(0, 37, counts);
  REQUIRE(std::accumulate(counts.begin(), counts.end(), 0) == 74);
  REQUIRE(*std::max_element(counts.begin(), counts.end()) <= 37);
  rc.loop = false;
  TraceRoutingSource once(rc, 2, 16, 2, core::RandomStreams(5));
  for (int i = 0; i < 3; ++i) {
    once.begin_step(StepContext{});
    REQUIRE_FALSE(once.exhausted());
  }
  once.begin_step(StepContext{});
  REQUIRE(once.exhausted());
  REQUIRE_THROWS_WITH(TraceRoutingSource(rc, 2, 32, 2, core::RandomStreams(5)),
                      Contains("the trace has 2 MoE layers x 16 experts, top-2; the model has 2 x 32, top-2"));
  fs::remove(p);
}

TEST_CASE("replay's large resampled draws follow routing.sampling and keep the recorded shares") {
  const fs::path p = tmp("replay_sampling.trace");
  SyntheticRouter router(SyntheticRouterConfig{}, 1, 16, 2, core::RandomStreams(8));
  SynthesisOptions o;
  o.steps = 1;
  o.tokens = 400;
  generate_trace(p, router, "m", o);
  std::vector<double> share(16);
  {
    TraceReader r(p);
    trace::Step s;
    REQUIRE(r.next(s));
    const auto& c = s.layers(0).expert_tokens();
    const double total = std::accumulate(c.begin(), c.end(), 0.0);
    for (std::size_t e = 0; e < share.size(); ++e) {
      share[e] = c[static_cast<int>(e)] / total;
    }
  }
  // 3,000 tokens x top-2 = 6,000 picks over 16 experts: the large path. No share reaches 1/2, so the
  // mean of each count is 6,000 x its recorded share.
  REQUIRE(*std::max_element(share.begin(), share.end()) < 0.4);
  std::map<RoutingSampling, std::vector<std::int32_t>> first;
  for (const RoutingSampling mode : {RoutingSampling::exact, RoutingSampling::poisson, RoutingSampling::fast}) {
    TraceReplayConfig rc;
    rc.file = p.string();
    rc.sampling = mode;
    TraceRoutingSource replay(rc, 1, 16, 2, core::RandomStreams(9));
    std::vector<std::int32_t> counts(16);
    std::vector<double> sum(16, 0.0);
    const int draws = 2000;
    for (int d = 0; d < draws; ++d) {
      replay.begin_step(StepContext{});
      replay.sample(0, 3000, counts);
      REQUIRE(std::accumulate(counts.begin(), counts.end(), 0) == 6000);
      REQUIRE(*std::max_element(counts.begin(), counts.end()) <= 3000);
      if (d == 0) {
        first[mode] = counts;
      }
      for (std::size_t e = 0; e < 16; ++e) {
        sum[e] += counts[e];
      }
    }
    for (std::size_t e = 0; e < 16; ++e) {
      const double sd = std::sqrt(6000.0 * share[e] * (1.0 - share[e]) / draws);
      INFO("mode " << static_cast<int>(mode) << ", expert " << e);
      CHECK(std::abs(sum[e] / draws - 6000.0 * share[e]) <= 4.5 * sd + 1e-9);
    }
  }
  // The modes draw differently (each is in use), from the same stream.
  CHECK(first[RoutingSampling::poisson] != first[RoutingSampling::exact]);
  CHECK(first[RoutingSampling::fast] != first[RoutingSampling::exact]);
  fs::remove(p);
}

TEST_CASE("CSV and per-token JSON import, CSV export") {
  const fs::path csv = tmp("in.csv");
  std::ofstream(csv) << "step,layer,expert,tokens\n0,0,0,3\n0,0,2,1\n0,1,1,4\n1,0,1,2\n1,1,3,2\n";
  const fs::path t = tmp("from_csv.trace");
  REQUIRE(import_csv(csv, header(2, 4, 1), t) == 2);
  {
    TraceReader r(t);
    trace::Step s;
    REQUIRE(r.next(s));
    REQUIRE(s.tokens() == 4);
    REQUIRE(s.layers(0).expert_tokens(0) == 3);
    REQUIRE(s.layers(1).expert_tokens(1) == 4);
    REQUIRE(r.next(s));
    REQUIRE(s.tokens() == 2);
  }
  const fs::path back = tmp("back.csv");
  REQUIRE(export_csv(t, back) == 2);
  REQUIRE(slurp(back) == "step,layer,expert,tokens\n0,0,0,3\n0,0,2,1\n0,1,1,4\n1,0,1,2\n1,1,3,2\n");
  std::ofstream(csv) << "step,layer,expert,tokens\n0,0,0,3\n0,1,1,x\n";
  REQUIRE_THROWS_WITH(import_csv(csv, header(2, 4, 1), t), Contains("in.csv: line 3: expected integers"));
  std::ofstream(csv) << "0,0,0,3\n0,1,1,2\n";
  REQUIRE_THROWS_WITH(import_csv(csv, header(2, 4, 1), t),
                      Contains("step 0, layer 1: expert counts sum to 2, expected tokens x top_k = 3"));

  const fs::path json = tmp("dump.json");
  std::ofstream(json) << R"({"model": "m", "experts": 4, "top_k": 2,
    "steps": [{"layers": [[[0, 1], [1, 3], [0, 2]], [[3, 2], [2, 1], [0, 3]]]}]})";
  const fs::path tj = tmp("from_json.trace");
  REQUIRE(import_token_json(json, tj) == 1);
  TraceReader r(tj);
  trace::Step s;
  REQUIRE(r.next(s));
  REQUIRE(s.tokens() == 3);
  const auto& c = s.layers(0).expert_tokens();
  REQUIRE(std::vector<std::uint32_t>(c.begin(), c.end()) == std::vector<std::uint32_t>{2, 2, 1, 1});
  REQUIRE(s.layers(1).token_experts_size() == 6);
  std::ofstream(json) << R"({"model": "m", "experts": 4, "top_k": 2, "steps": [{"layers": [[[0, 9]]]}]})";
  REQUIRE_THROWS_WITH(import_token_json(json, tj),
                      Contains("step 0, layer 0: expert id: expected a whole number in [0, 3], got 9"));
  for (const auto& f : {csv, t, back, json, tj}) {
    fs::remove(f);
  }
}

TEST_CASE("imports refuse values that would wrap around or allocate out of proportion to the file") {
  const fs::path json = tmp("bad.json");
  const fs::path out = tmp("bad_import.trace");
  const auto import_json = [&](const std::string& text) {
    std::ofstream(json) << text;
    return import_token_json(json, out);
  };
  // 60 bytes asking for 2^32 - 1 experts (16 GiB of counts) when -1 was read as unsigned.
  REQUIRE_THROWS_WITH(import_json(R"({"experts": -1, "top_k": 2, "steps": [{"layers": [[[0, 1]]]}]})"),
                      Contains("\"experts\": expected a whole number in [1, 65536], got -1"));
  REQUIRE_THROWS_WITH(import_json(R"({"experts": 8, "top_k": 9, "steps": [{"layers": [[[0, 1]]]}]})"),
                      Contains("\"top_k\": expected a whole number in [1, 8], got 9"));
  REQUIRE_THROWS_WITH(import_json(R"({"experts": 8, "top_k": 2, "steps": [{"layers": [[[0, -1]]]}]})"),
                      Contains("step 0, layer 0: expert id: expected a whole number in [0, 7], got -1"));
  REQUIRE_THROWS_WITH(import_json(R"({"experts": 8, "top_k": 2, "steps": [{"layers": [[["a", 1]]]}]})"),
                      Contains("got \"a\""));
  REQUIRE_THROWS_WITH(import_json(R"({"experts": 8, "top_k": 2, "steps": [{"layers": 5}]})"),
                      Contains("bad.json: unexpected JSON structure"));
  // A CSV count above 2^32 - 1 wrapped to a small number.
  const fs::path csv = tmp("big.csv");
  std::ofstream(csv) << "step,layer,expert,tokens\n0,0,0,5000000000\n";
  REQUIRE_THROWS_WITH(
      import_csv(csv, header(1, 8, 1), out),
      Contains("line 2: 5000000000 tokens for one expert of one step; a trace holds at most 4294967295"));
  // A header of 200,000 layers is refused before its counts are allocated.
  REQUIRE_THROWS_WITH(import_csv(csv, header(200000, 8, 1), out), Contains("at most 4096 x 65536"));
  REQUIRE_FALSE(fs::exists(out));
  for (const auto& e : fs::directory_iterator(fs::temp_directory_path())) {
    REQUIRE(e.path().filename().string().rfind("epsim_trace_test_bad_import.trace.tmp", 0) != 0);  // nothing left
  }
  fs::remove(json);
  fs::remove(csv);
}

TEST_CASE("trace statistics by hand on a tiny trace") {
  // Two steps, one layer, 4 experts, top-1: step 0 = [4, 0, 0, 0], step 1 = [2, 2, 0, 0].
  const fs::path p = tmp("stats.trace");
  TraceWriter w(p, header(1, 4, 1));
  for (const auto& counts : {std::vector<std::uint32_t>{4, 0, 0, 0}, std::vector<std::uint32_t>{2, 2, 0, 0}}) {
    trace::Step s;
    s.set_tokens(4);
    auto* l = s.add_layers();
    for (auto c : counts) {
      l->add_expert_tokens(c);
    }
    w.write(s);
  }
  w.close();
  StatsOptions o;
  o.ep_size = 2;
  o.window = 1;
  const TraceStats st = compute_trace_stats(p, o);
  const LayerStats& l = st.layers[0];
  // Totals [6, 2, 0, 0]: max/mean = 6 / 2 = 3; Gini = sum (2i - n - 1) x_(i) / (n sum) with x sorted
  // [0, 0, 2, 6]: (1*2 + 3*6) / (4 * 8) = 20 / 32.
  REQUIRE(l.max_over_mean == Approx(3.0));
  REQUIRE(l.gini == Approx(20.0 / 32.0));
  REQUIRE(std::isinf(l.max_over_min));
  // Per-step max/mean: 4 / 1 and 2 / 1 -> mean 3.
  REQUIRE(l.step_max_over_mean == Approx(3.0));
  // Per-step std / mean (population): [4,0,0,0]: mean 1, variance (9+1+1+1)/4 = 3 -> sqrt 3; [2,2,0,0]:
  // variance (1+1+1+1)/4 = 1 -> 1. Mean (sqrt 3 + 1) / 2.
  REQUIRE(l.step_cv == Approx((std::sqrt(3.0) + 1.0) / 2.0));
  // Per GPU (experts 0-1 | 2-3): both steps [4, 0]: max / mean = 4 / 2 = 2, std / mean = 2 / 2 = 1.
  REQUIRE(l.gpu_step_max_over_mean == Approx(2.0));
  REQUIRE(l.gpu_step_cv == Approx(1.0));
  REQUIRE(l.active_share == std::vector<double>{1.0, 0.5, 0.0, 0.0});
  // Linear placement on 2 GPUs: experts 0, 1 -> GPU 0 holds all 8 tokens.
  REQUIRE(l.gpu_share == std::vector<double>{1.0, 0.0});
  // Experts 0 and 1 move in opposite directions: correlation -1 (the only pair with variance).
  REQUIRE(l.top_pairs.size() == 1);
  REQUIRE(l.top_pairs[0].correlation == Approx(-1.0));
  // Windows of 1 step: cosine distance between [4,0,0,0] and [2,2,0,0] = 1 - 8 / (4 * sqrt(8)).
  REQUIRE(l.drift_first_last == Approx(1.0 - 8.0 / (4.0 * std::sqrt(8.0))));
  fs::remove(p);
}
