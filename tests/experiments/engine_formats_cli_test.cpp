// SPDX-License-Identifier: Apache-2.0
// epsim place and epsim trace import on the engines' formats, end to end on the sample recordings of
// examples/engines (DeepSeek-V2-Lite): the engine file of a placement holds the same slots as epsim's own
// output, windows select exactly the steps summed by hand here, co-selections match a hand tally, and the
// usage errors say what is missing.
#include <unistd.h>

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_real_distribution.hpp>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "engines/layer_layout.hpp"
#include "engines/placement_formats.hpp"
#include "experiments/cli/recorded_load.hpp"
#include "models/model_spec.hpp"
#include "tests/support/cli.hpp"

namespace fs = std::filesystem;
using epsim::test::cli;
using namespace epsim;

namespace {

const fs::path k_samples = fs::path(EPSIM_TEST_DATA_DIR) / ".." / ".." / "examples" / "engines";

// Per process: CTest runs this file's test cases as parallel processes, which must not share files.
fs::path scratch(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("epsim_efc_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(p);
  return p;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// epsim's own phy2log for the same policy and loads.
std::vector<std::vector<int>> epsim_slots(std::vector<std::string> args) {
  const fs::path out = scratch("epsim.json");
  args.insert(args.end(), {"--format", "epsim", "--out", out.string()});
  const auto r = cli(args);
  REQUIRE(r.code == 0);
  return nlohmann::json::parse(slurp(out))["phy2log"].get<std::vector<std::vector<int>>>();
}

}  // namespace

TEST_CASE("place: every engine file from every recording holds epsim's own slots", "[engines]") {
  const models::ModelSpec lite = models::load_model_preset("deepseek-v2-lite");
  const engines::LayerLayout layout = engines::layer_layout(lite);
  for (const std::string load : {"vllm-routed.jsonl", "trtllm-stats", "load-history.json"}) {
    const std::vector<std::string> base{"place",   "--policy",         "eplb",   "--load", (k_samples / load).string(),
                                        "--model", "deepseek-v2-lite", "--gpus", "8",      "--slots",
                                        "80"};
    const auto want = epsim_slots(base);
    REQUIRE(want.size() == 26);
    for (const std::string format : {"sglang", "trtllm", "vllm", "vllm-slots"}) {
      INFO(load << " -> " << format);
      const fs::path out = scratch("engine.out");
      auto args = base;
      args.insert(args.end(), {"--format", format, "--out", out.string()});
      const auto r = cli(args);
      REQUIRE(r.code == 0);
      CHECK_THAT(r.out, Catch::Contains("eplb placement of 26 layers x 64 experts on 8 GPUs (80 slots)"));
      const policies::Placement back =
          engines::find_placement_format(format)->read(slurp(out), layout, 64, 8, out.string());
      REQUIRE(back.layers.size() == 26);
      for (std::size_t l = 0; l < 26; ++l) {
        CHECK(back.layers[l].phy2log == want[l]);
      }
      const auto check = cli({"place", "--check", out.string(), "--format", format, "--model", "deepseek-v2-lite",
                              "--gpus", "8", "--load", (k_samples / load).string()});
      CHECK(check.code == 0);
      CHECK_THAT(check.out, Catch::Contains("placement of 26 MoE layers x 64 experts on 8 GPUs, 10 slots per GPU (16 "
                                            "redundant)") &&
                                Catch::Contains("predicted per-GPU load max/mean"));
    }
  }
}

TEST_CASE("place: a recording's window is exactly the steps it names", "[engines]") {
  // Entries 6..11 of the load history summed by hand, as epsim's weight JSON.
  const nlohmann::json h = nlohmann::json::parse(slurp(k_samples / "load-history.json"));
  std::vector<std::vector<double>> weight(26, std::vector<double>(64, 0.0));
  for (std::size_t i = 6; i < 12; ++i) {
    const auto m = h["load_history"][i]["logical_expert_load"].get<std::vector<std::vector<double>>>();
    for (std::size_t l = 0; l < 26; ++l) {
      for (std::size_t e = 0; e < 64; ++e) {
        weight[l][e] += m[l][e];
      }
    }
  }
  const fs::path summed = scratch("summed.json");
  std::ofstream(summed) << nlohmann::json{{"weight", weight}}.dump();
  const auto want = epsim_slots({"place", "--policy", "eplb", "--load", summed.string(), "--gpus", "8", "--slots", "80",
                                 "--model", "deepseek-v2-lite"});
  const auto got =
      epsim_slots({"place", "--policy", "eplb", "--load", (k_samples / "load-history.json").string(), "--gpus", "8",
                   "--slots", "80", "--model", "deepseek-v2-lite", "--from-step", "6", "--window-steps", "6"});
  CHECK(got == want);
  const auto all = epsim_slots({"place", "--policy", "eplb", "--load", (k_samples / "load-history.json").string(),
                                "--gpus", "8", "--slots", "80", "--model", "deepseek-v2-lite"});
  CHECK(all != want);  // the whole history places differently from its second half

  const auto empty = cli({"place", "--policy", "eplb", "--load", (k_samples / "load-history.json").string(), "--gpus",
                          "8", "--model", "deepseek-v2-lite", "--from-step", "12"});
  CHECK(empty.code != 0);
  CHECK_THAT(empty.err, Catch::Contains("the window (from step 12, all steps) holds none of the recording's 12 steps"));
}

TEST_CASE("recorded load: step-by-step windows only when asked, and bounded", "[engines]") {
  engines::RoutingImportOptions o;
  o.model = models::load_model_preset("deepseek-v2-lite");
  const auto* importer = engines::find_routing_importer("eplb-load-history");
  experiments::RecordingWindow w;
  w.from_step = 2;
  w.steps = 4;
  const experiments::LoadFile totals = experiments::load_recording(k_samples / "load-history.json", *importer, o, w);
  CHECK(totals.window.empty());
  CHECK(totals.weight.size() == 26);
  w.keep_steps = true;
  const experiments::LoadFile steps = experiments::load_recording(k_samples / "load-history.json", *importer, o, w);
  REQUIRE(steps.window.size() == 4);
  double a = 0.0;
  double b = 0.0;
  for (std::size_t s = 0; s < 4; ++s) {
    a += steps.window[s][3][7];
  }
  b = steps.weight[3][7];
  CHECK(a == b);
  w.max_bytes = 26 * 64 * 8 * 3;  // room for three steps
  CHECK_THROWS_WITH(
      experiments::load_recording(k_samples / "load-history.json", *importer, o, w),
      Catch::Contains("a window of 4 steps of 26 layers x 64 experts") && Catch::Contains("choose --window-steps N"));
}

TEST_CASE("trace import: summary, co-selections tallied by hand, and a recording that fails leaves nothing",
          "[engines]") {
  const fs::path dir = scratch("import");
  fs::create_directories(dir);
  // Two requests of DeepSeek-V2-Lite: every token has the same 6 experts on every MoE layer except the
  // first token of request 2, so the pair (0, 1) is co-selected by 3 tokens on each layer, (0, 6) by 1.
  const auto token = [](std::vector<int> ids) {
    nlohmann::json t = nlohmann::json::array();
    for (int l = 0; l < 26; ++l) {
      t.push_back(ids);
    }
    return t;
  };
  const nlohmann::json r1{{"routed_experts", {token({0, 1, 2, 3, 4, 5}), token({0, 1, 2, 3, 4, 5})}}};
  const nlohmann::json r2{{"routed_experts", {token({0, 6, 7, 8, 9, 10}), token({0, 1, 2, 3, 4, 5})}}};
  std::ofstream(dir / "r.jsonl") << r1.dump() << "\n" << r2.dump() << "\n";
  const auto r = cli({"trace", "import", (dir / "r.jsonl").string(), (dir / "r.trace").string(), "--model",
                      "deepseek-v2-lite", "--coactivation-out", (dir / "co.csv").string()});
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("imported 2 steps (4 tokens) of 26 MoE layers x 64 experts, top-6 "
                                    "(vllm-routed-experts)"));
  const std::string co = slurp(dir / "co.csv");
  CHECK_THAT(co, Catch::StartsWith("layer,expert_a,expert_b,tokens\n0,0,1,3\n"));
  CHECK_THAT(co, Catch::Contains("\n25,0,6,1\n"));
  CHECK_THAT(co, Catch::Contains("\n25,9,10,1\n"));
  const auto stats = cli({"trace", "stats", (dir / "r.trace").string()});
  CHECK(stats.code == 0);

  // A bad second line: an error naming it, and no trace (nor temporary file) left behind.
  std::ofstream(dir / "bad.jsonl") << r1.dump() << "\n{\"routed_experts\": [[[0]]]}\n";
  const auto bad = cli(
      {"trace", "import", (dir / "bad.jsonl").string(), (dir / "bad.trace").string(), "--model", "deepseek-v2-lite"});
  CHECK(bad.code != 0);
  CHECK_THAT(bad.err, Catch::Contains("bad.jsonl: line 2"));
  for (const auto& entry : fs::directory_iterator(dir)) {
    CHECK(entry.path().filename().string().rfind("bad.trace", 0) == std::string::npos);
  }
}

TEST_CASE("place: moetuner from a recording with per-token ids, and without them", "[engines]") {
  const fs::path dir = scratch("moetuner");
  fs::create_directories(dir);
  // DeepSeek-V2-Lite's 26 MoE layers, three tokens with the same 6 experts on every layer.
  nlohmann::json token = nlohmann::json::array();
  for (int l = 0; l < 26; ++l) {
    token.push_back({0, 1, 2, 3, 4, 5});
  }
  std::ofstream(dir / "r.jsonl") << nlohmann::json{{"routed_experts", {token, token, token}}}.dump() << "\n";
  const auto r = cli({"place", "--policy", "moetuner", "--load", (dir / "r.jsonl").string(), "--model",
                      "deepseek-v2-lite", "--gpus", "8"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const nlohmann::json placed = nlohmann::json::parse(r.out);
  REQUIRE(placed["phy2log"].size() == 26);
  for (const auto& layer : placed["phy2log"]) {
    std::vector<int> slots = layer.get<std::vector<int>>();
    std::sort(slots.begin(), slots.end());
    std::vector<int> all(64);
    std::iota(all.begin(), all.end(), 0);
    REQUIRE(slots == all);  // one copy of every expert
  }
  // The hot experts 0-5 carry all the load: one per GPU in every layer (two GPUs get none), and the
  // transitions (every hot expert to every hot expert) keep the hot clusters on the same six GPUs.
  const auto gpu_of = [&](std::size_t l, int e) {
    const auto& slots = placed["phy2log"][l];
    for (std::size_t s = 0; s < slots.size(); ++s) {
      if (slots[s].get<int>() == e) {
        return static_cast<int>(s / 8);
      }
    }
    return -1;
  };
  std::set<int> first;
  for (std::size_t l = 0; l < 26; ++l) {
    std::set<int> hot;
    for (int e = 0; e < 6; ++e) {
      hot.insert(gpu_of(l, e));
    }
    REQUIRE(hot.size() == 6);
    if (l == 0) {
      first = hot;
    }
    REQUIRE(hot == first);
  }
  // An EPLB load history has no per-token ids: refused with what to do, unless the mapping step is off.
  const std::string history = (k_samples / "load-history.json").string();
  const auto no_ids = cli({"place", "--policy", "moetuner", "--load", history, "--gpus", "8", "--top-k", "6"});
  CHECK(no_ids.code != 0);
  CHECK_THAT(no_ids.err, Catch::Contains("no per-token expert ids to count cross-layer transitions from"));
  const auto balance = cli({"place", "--policy", "moetuner", "--load", history, "--gpus", "8", "--top-k", "6",
                            "--option", "cross_layer=false"});
  INFO(balance.err);
  CHECK(balance.code == 0);
  fs::remove_all(dir);
}

TEST_CASE("place: engine formats say what they need", "[engines]") {
  const std::string load = (k_samples / "load-history.json").string();
  const auto no_model =
      cli({"place", "--policy", "eplb", "--load", load, "--gpus", "8", "--top-k", "6", "--format", "trtllm"});
  CHECK(no_model.code != 0);
  CHECK_THAT(no_model.err,
             Catch::Contains("--format trtllm numbers hidden layers (dense ones included): give --model"));
  const auto bad_format = cli({"place", "--policy", "eplb", "--load", load, "--gpus", "8", "--format", "sglang2"});
  CHECK(bad_format.code != 0);
  CHECK_THAT(bad_format.err,
             Catch::Contains("expected epsim, sglang, sglang-logical-count, trtllm, vllm-ascend, vllm or "
                             "vllm-slots"));
  // linear with spare slots leaves some empty: no engine loads that.
  const auto holes = cli({"place", "--policy", "linear", "--load", load, "--gpus", "8", "--slots", "80", "--model",
                          "deepseek-v2-lite", "--format", "sglang"});
  CHECK(holes.code != 0);
  CHECK_THAT(holes.err, Catch::Contains("is empty; the engine loads a placement with every slot holding an expert"));
  const auto help = cli({"place", "--help"});
  CHECK_THAT(help.out, Catch::Contains("Upstream vLLM cannot load a placement file today"));
}

TEST_CASE("place --format vllm-ascend: DeepSeek-V3 EP64 gets EPLB's distinct variant, which the engine loads",
          "[engines]") {
  // Skewed loads of DeepSeek-V3's 58 MoE layers x 256 experts on 64 GPUs (8 nodes) with 64 redundant slots:
  // the reference EPLB co-locates replicas of a hot expert, which vllm-ascend refuses.
  boost::random::mt19937 rng(3);
  boost::random::uniform_real_distribution<double> u(0.0, 1.0);
  nlohmann::json weight = nlohmann::json::array();
  for (int l = 0; l < 58; ++l) {
    nlohmann::json layer = nlohmann::json::array();
    for (int e = 0; e < 256; ++e) {
      layer.push_back(std::floor(10000.0 * std::pow(u(rng), 4.0)));
    }
    weight.push_back(layer);
  }
  const fs::path load = scratch("v3-load.json");
  std::ofstream(load) << nlohmann::json{
      {"weight", weight},
      {"num_replicas", 320},
      {"num_groups", 8},
      {"num_nodes", 8},
      {"num_gpus", 64}}.dump();
  const std::vector<std::string> base{"place",   "--policy",    "eplb",     "--load",     load.string(),
                                      "--model", "deepseek-v3", "--format", "vllm-ascend"};
  const fs::path plain = scratch("plain.json");
  auto reference = base;
  reference.insert(reference.end(), {"--option", "distinct_per_gpu=false", "--out", plain.string()});
  const auto refused = cli(reference);
  CHECK(refused.code != 0);
  CHECK_THAT(refused.err, Catch::Contains("twice on one device (vllm-ascend keeps one slot per expert and device)"));
  CHECK(!fs::exists(plain));

  const fs::path out = scratch("ascend.json");
  auto args = base;
  args.insert(args.end(), {"--out", out.string()});
  const auto r = cli(args);
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("vllm-ascend keeps one slot per expert and device: EPLB's distinct variant"));
  const models::ModelSpec v3 = models::load_model_preset("deepseek-v3");
  const policies::Placement back =
      engines::find_placement_format("vllm-ascend")->read(slurp(out), engines::layer_layout(v3), 256, 64, out.string());
  REQUIRE(back.layers.size() == 58);
  for (const auto& layer : back.layers) {
    for (int g = 0; g < 64; ++g) {
      std::vector<int> slots(layer.phy2log.begin() + g * 5, layer.phy2log.begin() + (g + 1) * 5);
      std::sort(slots.begin(), slots.end());
      CHECK(std::adjacent_find(slots.begin(), slots.end()) == slots.end());
    }
  }
  const auto check = cli({"place", "--check", out.string(), "--format", "vllm-ascend", "--model", "deepseek-v3",
                          "--gpus", "64", "--load", load.string()});
  CHECK(check.code == 0);
  fs::remove(load);
  fs::remove(out);
}
