// SPDX-License-Identifier: Apache-2.0
// The engines' routing recordings streamed into steps: vLLM's routed experts (nested lists and base64 .npy,
// prefix-cached tokens, hidden-layer rows, packing), TensorRT-LLM's per-rank statistics and co-occurrence,
// EPLB load histories; expected steps worked out by hand from the small files written here.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "engines/coactivation.hpp"
#include "engines/import_trtllm_stats.hpp"
#include "engines/import_vllm_routed.hpp"
#include "engines/npy.hpp"
#include "engines/routing_importers.hpp"
#include "engines/safetensors.hpp"
#include "workloads/trace_io.hpp"

namespace fs = std::filesystem;
using namespace epsim;

namespace {

// 3 hidden layers, the first dense: 2 MoE layers (hidden ids 1, 2) of 8 experts, top-2, 4 groups of 2 with
// at most 2 groups per token.
models::ModelSpec small_model() {
  models::ModelSpec m;
  m.name = "small";
  m.num_layers = 3;
  m.first_dense_layers = 1;
  m.routed_experts = 8;
  m.top_k = 2;
  m.expert_groups = 4;
  m.topk_group = 2;
  return m;
}

engines::RoutingImportOptions options(std::int64_t tokens_per_step = 0) {
  engines::RoutingImportOptions o;
  o.model = small_model();
  o.tokens_per_step = tokens_per_step;
  return o;
}

struct Collect : engines::StepSink {
  trace::Header header;
  std::vector<trace::Step> steps;
  void begin(const trace::Header& h) override { header = h; }
  void step(const trace::Step& s) override {
    workloads::validate_step(header, s, "collected");
    steps.push_back(s);
  }
};

fs::path scratch(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("epsim_ri_" + name);
  fs::remove_all(p);
  return p;
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

std::vector<std::uint32_t> counts(const trace::Step& s, int layer) {
  const auto& c = s.layers(layer).expert_tokens();
  return {c.begin(), c.end()};
}
std::vector<std::uint32_t> ids(const trace::Step& s, int layer) {
  const auto& c = s.layers(layer).token_experts();
  return {c.begin(), c.end()};
}

}  // namespace

TEST_CASE("vllm routed experts: requests, prompt and choices, cached tokens, one request per step", "[engines]") {
  const fs::path p = scratch("routed.jsonl");
  // Request 1 (a bare record): 2 tokens x 2 MoE layers x top-2. Request 2 (a response): a prompt of 2 tokens,
  // the first prefix-cached (all -1), and one choice of 1 token.
  write(p,
        "{\"routed_experts\": [[[0, 1], [2, 3]], [[0, 4], [2, 5]]]}\n"
        "{\"id\": \"cmpl-2\", \"prompt_routed_experts\": [[[-1, -1], [-1, -1]], [[6, 7], [0, 1]]], "
        "\"choices\": [{\"index\": 0, \"routed_experts\": [[[1, 0], [3, 2]]]}]}\n");
  Collect c;
  const engines::ImportSummary s = engines::import_vllm_routed_experts(p, options(), c);
  CHECK(s.steps == 2);
  CHECK(s.tokens == 4);
  CHECK(s.cached_tokens == 1);
  CHECK(c.header.has_token_experts());
  CHECK(c.header.moe_layers() == 2);
  REQUIRE(c.steps.size() == 2);
  CHECK(c.steps[0].tokens() == 2);
  CHECK(ids(c.steps[0], 0) == std::vector<std::uint32_t>{0, 1, 0, 4});
  CHECK(counts(c.steps[0], 0) == std::vector<std::uint32_t>{2, 1, 0, 0, 1, 0, 0, 0});
  CHECK(counts(c.steps[0], 1) == std::vector<std::uint32_t>{0, 0, 2, 1, 0, 1, 0, 0});
  CHECK(c.steps[1].tokens() == 2);  // the cached prompt token is left out
  CHECK(ids(c.steps[1], 0) == std::vector<std::uint32_t>{6, 7, 1, 0});
  CHECK(ids(c.steps[1], 1) == std::vector<std::uint32_t>{0, 1, 3, 2});
}

TEST_CASE("vllm routed experts: base64 .npy over all hidden layers, packed into steps of 3 tokens", "[engines]") {
  // 4 tokens x 3 hidden layers (layer 0 dense, zeros as vLLM leaves them) x top-2, int32.
  const std::vector<std::int32_t> v{0, 0, 0, 1, 2, 3,  //
                                    0, 0, 4, 5, 6, 7,  //
                                    0, 0, 0, 2, 1, 3,  //
                                    0, 0, 7, 6, 5, 4};
  const std::string b64 = engines::encode_base64(engines::npy_bytes({4, 3, 2}, v));
  const fs::path p = scratch("npy.jsonl");
  write(p, "{\"choices\": [{\"routed_experts\": \"" + b64 + "\"}]}\n");
  Collect c;
  const engines::ImportSummary s = engines::import_vllm_routed_experts(p, options(3), c);
  CHECK(s.tokens == 4);
  REQUIRE(c.steps.size() == 2);
  CHECK(c.steps[0].tokens() == 3);
  CHECK(ids(c.steps[0], 0) == std::vector<std::uint32_t>{0, 1, 4, 5, 0, 2});
  CHECK(ids(c.steps[0], 1) == std::vector<std::uint32_t>{2, 3, 6, 7, 1, 3});
  CHECK(c.steps[1].tokens() == 1);
  CHECK(ids(c.steps[1], 1) == std::vector<std::uint32_t>{5, 4});
}

TEST_CASE("vllm routed experts: bad lines are refused with the line, token and layer", "[engines]") {
  const auto refuses = [](const std::string& text, const std::string& what) {
    const fs::path p = scratch("bad.jsonl");
    write(p, text);
    Collect c;
    CHECK_THROWS_WITH(engines::import_vllm_routed_experts(p, options(), c),
                      Catch::Contains(p.string()) && Catch::Contains(what));
  };
  refuses("{\"routed_experts\": [[[0, 1], [2, 3]]]}\n{oops\n", "line 2: invalid JSON");
  refuses("{\"text\": \"hi\"}\n", "line 1: no routed experts");
  refuses("{\"routed_experts\": [[[0, 9], [2, 3]]]}\n", "token 0, MoE layer 0: expert id 9 out of range [0, 8)");
  refuses("{\"routed_experts\": [[[0, 0], [2, 3]]]}\n", "token 0, MoE layer 0: expert 0 chosen twice");
  // Experts 0 (group 0), 2 (group 1) and 4 (group 2) would be three groups; the model allows two.
  refuses("{\"routed_experts\": [[[0, 2], [4, 5]]]}\n[[[0, 2, 4], [1, 3, 5]]]\n", "line 2, the line: 3 ids per token");
  refuses("{\"routed_experts\": [[[0, 1], [2, 3], [4, 5], [6, 7]]]}\n", "4 layers per token");
}

TEST_CASE("vllm routed experts: group-limited routing is checked token by token", "[engines]") {
  models::ModelSpec m = small_model();
  m.top_k = 3;
  engines::RoutingImportOptions o;
  o.model = m;
  const fs::path p = scratch("groups.jsonl");
  write(p, "{\"routed_experts\": [[[0, 1, 2], [0, 1, 3]], [[0, 2, 4], [0, 1, 2]]]}\n");
  Collect c;
  CHECK_THROWS_WITH(
      engines::import_vllm_routed_experts(p, o, c),
      Catch::Contains("token 1, MoE layer 0: experts from 3 groups") && Catch::Contains("at most topk_group = 2"));
}

TEST_CASE("trtllm expert statistics: ranks summed per iteration, hidden-layer keys, MTP layers left out", "[engines]") {
  const fs::path dir = scratch("trtllm");
  fs::create_directories(dir);
  write(dir / "meta_info.json", R"({"num_experts": 8, "num_experts_per_token": 2})");
  // Iterations 100-101, layers 1 and 2 (MoE) and 3 (an MTP layer past the 3 hidden ones). Rank 0 routes 2
  // tokens, rank 1 routes 1 token per iteration.
  write(dir / "rank0.safetensors", engines::safetensors_bytes({{"100_1", {8}, {1, 1, 0, 0, 1, 1, 0, 0}},
                                                               {"100_2", {8}, {0, 0, 2, 2, 0, 0, 0, 0}},
                                                               {"100_3", {8}, {4, 0, 0, 0, 0, 0, 0, 0}},
                                                               {"101_1", {8}, {0, 0, 0, 0, 0, 0, 2, 2}},
                                                               {"101_2", {8}, {1, 1, 1, 1, 0, 0, 0, 0}},
                                                               {"101_3", {8}, {4, 0, 0, 0, 0, 0, 0, 0}}}));
  write(dir / "rank1.safetensors", engines::safetensors_bytes({{"100_1", {8}, {0, 0, 0, 0, 0, 0, 1, 1}},
                                                               {"100_2", {8}, {1, 1, 0, 0, 0, 0, 0, 0}},
                                                               {"101_1", {8}, {1, 1, 0, 0, 0, 0, 0, 0}},
                                                               {"101_2", {8}, {0, 0, 0, 0, 1, 1, 0, 0}}},
                                                              "I32"));
  Collect c;
  const engines::ImportSummary s = engines::import_trtllm_expert_stats(dir, options(), c);
  CHECK(s.steps == 2);
  CHECK(s.tokens == 6);
  REQUIRE(c.steps.size() == 2);
  CHECK(c.steps[0].tokens() == 3);
  CHECK(counts(c.steps[0], 0) == std::vector<std::uint32_t>{1, 1, 0, 0, 1, 1, 1, 1});
  CHECK(counts(c.steps[0], 1) == std::vector<std::uint32_t>{1, 1, 2, 2, 0, 0, 0, 0});
  CHECK(counts(c.steps[1], 1) == std::vector<std::uint32_t>{1, 1, 1, 1, 1, 1, 0, 0});

  // Co-occurrence: [8][8] per key, diagonal included; summed over iterations and ranks, diagonal dropped.
  std::vector<std::int64_t> m(64, 0);
  m[0 * 8 + 1] = m[1 * 8 + 0] = 2;
  m[0] = 5;
  write(dir / "cooccurrence_rank0.safetensors",
        engines::safetensors_bytes({{"100_1", {8, 8}, m}, {"101_1", {8, 8}, m}, {"100_2", {8, 8}, m}}));
  const std::vector<double> co = engines::trtllm_coactivation(dir, options());
  REQUIRE(co.size() == 2 * 64);
  CHECK(co[0 * 8 + 1] == 4.0);  // layer 0 (hidden 1): two iterations of 2
  CHECK(co[1 * 8 + 0] == 4.0);
  CHECK(co[0] == 0.0);               // the diagonal is not a co-selection
  CHECK(co[64 + 0 * 8 + 1] == 2.0);  // layer 1 (hidden 2)

  SECTION("slot counts recorded with the balancer on are refused") {
    write(dir / "meta_info.json", R"({"num_experts": 12, "num_experts_per_token": 2})");
    Collect d;
    CHECK_THROWS_WITH(
        engines::import_trtllm_expert_stats(dir, options(), d),
        Catch::Contains("num_experts = 12, the model small has 8 experts") && Catch::Contains("per slot"));
  }
  SECTION("a gap in the iterations is refused") {
    write(dir / "rank2.safetensors", engines::safetensors_bytes({{"103_1", {8}, {0, 0, 0, 0, 0, 0, 1, 1}}}));
    Collect d;
    CHECK_THROWS_WITH(engines::import_trtllm_expert_stats(dir, options(), d),
                      Catch::Contains("iterations 100..103 are not contiguous"));
  }
  SECTION("an uneven iteration (layers routing different token counts) is refused") {
    write(dir / "rank2.safetensors", engines::safetensors_bytes({{"100_1", {8}, {0, 0, 0, 0, 0, 0, 1, 1}}}));
    Collect d;
    CHECK_THROWS_WITH(engines::import_trtllm_expert_stats(dir, options(), d),
                      Catch::Contains("iteration 100, layer 1: the counts sum to 6, layer 0's to 8"));
  }
}

TEST_CASE("eplb load history: each entry a step, SGLang's hidden-layer rows reduced to MoE rows", "[engines]") {
  const fs::path p = scratch("history.json");
  write(p, R"({"load_history": [
      {"logical_expert_load": [[0, 0, 0, 0, 0, 0, 0, 0], [2, 2, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 0, 0, 0, 0]]},
      {"logical_expert_load": [[0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 2, 2, 0, 0], [0, 0, 0, 0, 0, 0, 2, 2]]}]})");
  Collect c;
  const auto* importer = engines::detect_routing_format(p);
  REQUIRE(importer != nullptr);
  CHECK(importer->name == "eplb-load-history");
  const engines::ImportSummary s = importer->run(p, options(), c);
  CHECK(s.steps == 2);
  REQUIRE(c.steps.size() == 2);
  CHECK(c.header.moe_layers() == 2);
  CHECK(c.steps[0].tokens() == 2);
  CHECK(counts(c.steps[0], 0) == std::vector<std::uint32_t>{2, 2, 0, 0, 0, 0, 0, 0});
  CHECK(counts(c.steps[1], 1) == std::vector<std::uint32_t>{0, 0, 0, 0, 0, 0, 2, 2});

  write(p, R"({"load_history": [{"logical_expert_load": [[1, 0, 0, 0, 0, 0, 0, 0], [3, 1, 0, 0, 0, 0, 0, 0],
      [1, 1, 1, 1, 0, 0, 0, 0]]}]})");
  Collect d;
  CHECK_THROWS_WITH(engines::import_eplb_load_history(p, options(), d),
                    Catch::Contains("load_history[0]: layer 0 is dense in small but has loads"));
  write(p, R"({"load_history": [{"logical_expert_load": [[1, 1, 0, 0, 0, 0, 0, 0], [1, 1, 0.5, 0, 0, 0, 0, 0]]}]})");
  CHECK_THROWS_WITH(engines::import_eplb_load_history(p, options(), d),
                    Catch::Contains("load_history[0], layer 1, expert 2: expected a whole token count, got 0.5"));
  write(p, R"({"load_history": [{"logical_expert_load": [[3, 0, 0, 0, 0, 0, 0, 0], [1, 1, 0, 0, 0, 0, 0, 0]]}]})");
  CHECK_THROWS_WITH(engines::import_eplb_load_history(p, options(), d),
                    Catch::Contains("load_history[0], layer 0: the counts sum to 3, not a multiple of top_k = 2"));
  // 4 picks are 2 tokens: no expert can be chosen by 3 of them.
  write(p, R"({"load_history": [{"logical_expert_load": [[3, 1, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 0, 0, 0, 0]]}]})");
  CHECK_THROWS_WITH(engines::import_eplb_load_history(p, options(), d),
                    Catch::Contains("load_history[0], layer 0: expert 0 has 3 tokens, more than the 2 tokens"));
}

TEST_CASE("routing formats are told apart by name and first bytes", "[engines]") {
  const fs::path dir = scratch("detect");
  fs::create_directories(dir);
  CHECK(engines::detect_routing_format(dir)->name == "trtllm-expert-stats");
  write(dir / "x.jsonl", "{}\n");
  CHECK(engines::detect_routing_format(dir / "x.jsonl")->name == "vllm-routed-experts");
  write(dir / "y.json", "{\"weight\": [[1]]}");
  CHECK(engines::detect_routing_format(dir / "y.json") == nullptr);
}

TEST_CASE(".npy: dtype widths, shapes and sizes are checked before anything is sized by them", "[engines]") {
  // A header as numpy writes it (version 1.0, 64-byte aligned), then `data`.
  const auto npy = [](const std::string& descr, const std::string& shape, const std::string& data) {
    std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
    dict.append(64 - (10 + dict.size() + 1) % 64, ' ');
    dict += '\n';
    std::string out = "\x93NUMPY";
    out += '\x01';
    out += '\x00';
    out += static_cast<char>(dict.size() & 0xff);
    out += static_cast<char>(dict.size() >> 8);
    return out + dict + data;
  };
  const auto error_of = [](const std::string& bytes) {
    try {
      (void)engines::parse_npy(bytes, "x.npy");
    } catch (const core::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string eight(8, '\x01');
  // Found by fuzz_engines: a width that is not a number threw std::invalid_argument out of std::stoul.
  CHECK(error_of(npy("<ix", "(2,)", eight)) == "x.npy: .npy dtype '<ix' has an unsupported width");
  CHECK(error_of(npy("<i4x", "(2,)", eight)) == "x.npy: .npy dtype '<i4x' has an unsupported width");
  // Dimensions whose product overflows 64 bits, negative ones, and ones with trailing junk.
  CHECK(error_of(npy("<i1", "(1099511627776, 1099511627776)", eight)) ==
        "x.npy: .npy data holds 8 bytes, less than the shape (1099511627776, 1099511627776) needs");
  CHECK(error_of(npy("<i1", "(-2, -4)", eight)) == "x.npy: .npy shape (-2, -4) is not a tuple of integers >= 0");
  CHECK(error_of(npy("<i1", "(2x,)", eight)) == "x.npy: .npy shape (2x,) is not a tuple of integers >= 0");
  CHECK(error_of(npy("<i4", "(3,)", eight)) == "x.npy: .npy data holds 8 bytes, less than the shape (3,) needs");
  CHECK(error_of(npy("<i8", "()", "1234")) == "x.npy: .npy data holds 4 bytes, the shape () needs 8");
  // The valid forms still read: (2, 4) bytes, and a 0-d array of one int64.
  const auto a = engines::parse_npy(npy("|u1", "(2, 4)", eight), "x.npy");
  CHECK(a.shape == std::vector<std::int64_t>{2, 4});
  CHECK(a.values == std::vector<std::int64_t>(8, 1));
  const auto scalar = engines::parse_npy(npy("<i8", "()", eight), "x.npy");
  CHECK(scalar.shape.empty());
  CHECK(scalar.values == std::vector<std::int64_t>{0x0101010101010101});
}

TEST_CASE("cross-layer transitions tallied by hand from per-token ids") {
  // 3 MoE layers of 4 experts, top-2, two tokens: token 0 picks {0, 1} then {2, 3} then {0, 3};
  // token 1 picks {1, 2} then {2, 0} then {1, 3}. Each token adds its 2 x 2 pairs of consecutive layers.
  trace::Header h;
  h.set_moe_layers(3);
  h.set_experts(4);
  h.set_top_k(2);
  h.set_has_token_experts(true);
  trace::Step s;
  const std::vector<std::vector<std::uint32_t>> ids{{0, 1, 1, 2}, {2, 3, 2, 0}, {0, 3, 1, 3}};
  for (const auto& layer : ids) {
    s.add_layers()->mutable_token_experts()->Add(layer.begin(), layer.end());
  }
  engines::TransitionTally tally(h);
  tally.add(s);
  const std::vector<double>& c = tally.counts();
  REQUIRE(c.size() == 2 * 16);
  std::vector<double> want(32, 0.0);
  const auto add = [&](int l, std::initializer_list<int> from, std::initializer_list<int> to) {
    for (const int a : from) {
      for (const int b : to) {
        want[static_cast<std::size_t>(l * 16 + a * 4 + b)] += 1.0;
      }
    }
  };
  add(0, {0, 1}, {2, 3});
  add(0, {1, 2}, {2, 0});
  add(1, {2, 3}, {0, 3});
  add(1, {2, 0}, {1, 3});
  REQUIRE(c == want);
  REQUIRE(c[0 * 16 + 1 * 4 + 2] == 2.0);  // both tokens go 1 -> 2 from layer 0 to 1
  // A step without ids adds nothing.
  tally.add(trace::Step{});
  REQUIRE(tally.counts() == want);
}
