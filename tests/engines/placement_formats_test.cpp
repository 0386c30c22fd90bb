// SPDX-License-Identifier: Apache-2.0
// Every engine placement format: written and parsed back into the same placement, layer numbering per model
// (hidden layers for SGLang and TensorRT-LLM, MoE layers for vLLM and vllm-ascend), and refusals that name
// the file and the layer.
#include <catch2/catch.hpp>

#include <yaml-cpp/yaml.h>
#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "engines/layer_layout.hpp"
#include "engines/placement_formats.hpp"
#include "models/model_spec.hpp"

using namespace epsim;
using engines::LayerLayout;

namespace {

// A full placement (no empty slot, no expert twice on one GPU): each expert once, then replicas of experts
// the GPU does not hold yet, drawn at random.
policies::Placement full_placement(int layers, int experts, int gpus, int slots_per_gpu, std::uint32_t seed) {
  boost::random::mt19937 rng(seed);
  policies::Placement p;
  for (int l = 0; l < layers; ++l) {
    std::vector<int> perm(static_cast<std::size_t>(experts));
    for (int e = 0; e < experts; ++e) {
      perm[static_cast<std::size_t>(e)] = e;
    }
    for (int i = experts - 1; i > 0; --i) {
      std::swap(perm[static_cast<std::size_t>(i)],
                perm[static_cast<std::size_t>(boost::random::uniform_int_distribution<int>(0, i)(rng))]);
    }
    std::vector<int> phy2log(static_cast<std::size_t>(gpus * slots_per_gpu), -1);
    // Round-robin the permutation over GPUs so every GPU holds distinct experts, then fill the rest.
    for (int e = 0; e < experts; ++e) {
      const int g = e % gpus;
      phy2log[static_cast<std::size_t>(g * slots_per_gpu + e / gpus)] = perm[static_cast<std::size_t>(e)];
    }
    for (int g = 0; g < gpus; ++g) {
      for (int s = 0; s < slots_per_gpu; ++s) {
        int& slot = phy2log[static_cast<std::size_t>(g * slots_per_gpu + s)];
        while (slot < 0) {
          const int e = boost::random::uniform_int_distribution<int>(0, experts - 1)(rng);
          const auto first = phy2log.begin() + g * slots_per_gpu;
          if (std::find(first, first + slots_per_gpu, e) == first + slots_per_gpu) {
            slot = e;
          }
        }
      }
    }
    p.layers.push_back(policies::make_layer_placement(experts, gpus, slots_per_gpu, std::move(phy2log)));
  }
  return p;
}

engines::LoadMatrix loads_of(int layers, int experts) {
  engines::LoadMatrix m(static_cast<std::size_t>(layers), std::vector<double>(static_cast<std::size_t>(experts)));
  for (int l = 0; l < layers; ++l) {
    for (int e = 0; e < experts; ++e) {
      m[static_cast<std::size_t>(l)][static_cast<std::size_t>(e)] = (l + 1) * 10 + e;
    }
  }
  return m;
}

models::ModelSpec model(const std::string& name) {
  return models::load_model_preset(name);
}

}  // namespace

TEST_CASE("layer layouts: hidden-layer ids of the MoE layers, per model", "[engines]") {
  const LayerLayout v3 = engines::layer_layout(model("deepseek-v3"));
  CHECK(v3.hidden_layers == 61);
  CHECK(v3.num_moe_layers() == 58);
  CHECK(v3.moe_layers.front() == 3);
  CHECK(v3.moe_layers.back() == 60);
  CHECK(v3.moe_index(2) == -1);
  CHECK(v3.moe_index(3) == 0);
  CHECK(v3.moe_index(60) == 57);
  const LayerLayout lite = engines::layer_layout(model("deepseek-v2-lite"));
  CHECK((lite.hidden_layers == 27 && lite.num_moe_layers() == 26 && lite.moe_layers.front() == 1));
  const LayerLayout qwen = engines::layer_layout(model("qwen3-30b-a3b"));
  CHECK((qwen.hidden_layers == 48 && qwen.num_moe_layers() == 48 && qwen.moe_layers.front() == 0));
  // Llama-4 Maverick's interleave (interleave_moe_layer_step 2): MoE on odd layers 1, 3, ..., 47.
  models::ModelSpec maverick = model("llama-4-scout-17b-16e");
  maverick.moe_layer_step = 2;
  const LayerLayout il = engines::layer_layout(maverick);
  CHECK(il.num_moe_layers() == 24);
  CHECK(il.moe_layers[0] == 1);
  CHECK(il.moe_layers[1] == 3);
  CHECK(il.moe_index(4) == -1);
  CHECK(il.moe_index(47) == 23);
}

TEST_CASE("placement formats: each writes a file that parses back into the same placement", "[engines]") {
  struct Case {
    std::string model;
    int gpus;
    int slots_per_gpu;
  };
  for (const Case& c : {Case{"deepseek-v3", 32, 9}, Case{"deepseek-v2-lite", 8, 10}, Case{"qwen3-30b-a3b", 16, 8}}) {
    const models::ModelSpec m = model(c.model);
    const LayerLayout layout = engines::layer_layout(m);
    const int experts = static_cast<int>(m.routed_experts);
    const policies::Placement p = full_placement(layout.num_moe_layers(), experts, c.gpus, c.slots_per_gpu, 7);
    const engines::LoadMatrix load = loads_of(layout.num_moe_layers(), experts);
    for (const auto& f : engines::placement_formats()) {
      if (f.read == nullptr) {
        continue;
      }
      INFO(c.model << " " << f.name);
      const std::string text = f.write({p, layout, load});
      const policies::Placement back = f.read(text, layout, experts, c.gpus, "x");
      REQUIRE(back.layers.size() == p.layers.size());
      for (std::size_t l = 0; l < p.layers.size(); ++l) {
        CHECK(back.layers[l].phy2log == p.layers[l].phy2log);
        CHECK(back.layers[l].slots_per_gpu == c.slots_per_gpu);
      }
    }
  }
}

TEST_CASE("placement formats: layer numbering of each engine on DeepSeek-V3", "[engines]") {
  const models::ModelSpec m = model("deepseek-v3");
  const LayerLayout layout = engines::layer_layout(m);
  const policies::Placement p = full_placement(58, 256, 32, 9, 3);
  const engines::LoadMatrix load = loads_of(58, 256);
  const auto write = [&](const char* name) { return engines::find_placement_format(name)->write({p, layout, load}); };

  // SGLang: 61 rows of 288 slots; rows 0-2 dense and trivial (arange(R) % 256), row 3 = MoE layer 0; the only key.
  const nlohmann::json sg = nlohmann::json::parse(write("sglang"));
  CHECK(sg.size() == 1);
  const auto& rows = sg["physical_to_logical_map"];
  REQUIRE(rows.size() == 61);
  for (int s = 0; s < 288; ++s) {
    CHECK(rows[1][static_cast<std::size_t>(s)].get<int>() == s % 256);
  }
  CHECK(rows[3].get<std::vector<int>>() == p.layers[0].phy2log);
  CHECK(rows[60].get<std::vector<int>>() == p.layers[57].phy2log);
  // The logical-count form: dense rows zero, row 3 = MoE layer 0's loads.
  const nlohmann::json lc = nlohmann::json::parse(write("sglang-logical-count"));
  REQUIRE(lc["logical_count"].size() == 61);
  CHECK(lc["logical_count"][0][5].get<int>() == 0);
  CHECK(lc["logical_count"][3][5].get<int>() == 15);
  CHECK(lc["logical_count"][60][255].get<int>() == 580 + 255);

  // TensorRT-LLM: keys 3..60, num_slots 288, static.
  const YAML::Node y = YAML::Load(write("trtllm"));
  CHECK(y["num_slots"].as<int>() == 288);
  CHECK(y["layer_updates_per_iter"].as<int>() == 0);
  CHECK(y["initial_global_assignments"].size() == 58);
  CHECK(!y["initial_global_assignments"][2]);
  CHECK(y["initial_global_assignments"][3].as<std::vector<int>>() == p.layers[0].phy2log);
  CHECK(y["initial_global_assignments"][60].as<std::vector<int>>() == p.layers[57].phy2log);

  // vllm-ascend: 58 MoE layers, 32 devices of 9 slots; device 1 of layer 0 = slots 9..17.
  const nlohmann::json asc = nlohmann::json::parse(write("vllm-ascend"));
  CHECK(asc["moe_layer_count"].get<int>() == 58);
  REQUIRE(asc["layer_list"].size() == 58);
  CHECK(asc["layer_list"][0]["device_list"].size() == 32);
  CHECK(asc["layer_list"][0]["device_list"][1]["device_expert"].get<std::vector<int>>() ==
        std::vector<int>(p.layers[0].phy2log.begin() + 9, p.layers[0].phy2log.begin() + 18));

  // vLLM: 58 rows in both files; EplbState's log2phy padded to the widest layer.
  const nlohmann::json slots = nlohmann::json::parse(write("vllm-slots"));
  CHECK(slots.size() == 58);
  const nlohmann::json state = nlohmann::json::parse(write("vllm"));
  CHECK(state["physical_to_logical_map"].size() == 58);
  CHECK(state["logical_replica_count"][0].size() == 256);
}

TEST_CASE("placement formats: files that do not fit the model are refused by name", "[engines]") {
  const models::ModelSpec m = model("deepseek-v3");
  const LayerLayout layout = engines::layer_layout(m);
  const policies::Placement p = full_placement(58, 256, 32, 9, 5);
  const engines::LoadMatrix load = loads_of(58, 256);
  const auto* sglang = engines::find_placement_format("sglang");
  // 58 rows (epsim's MoE-only numbering) where SGLang needs 61.
  nlohmann::json short_map;
  short_map["physical_to_logical_map"] = nlohmann::json::array();
  for (const auto& layer : p.layers) {
    short_map["physical_to_logical_map"].push_back(layer.phy2log);
  }
  CHECK_THROWS_WITH(sglang->read(short_map.dump(), layout, 256, 32, "map.json"),
                    Catch::Contains("map.json: physical_to_logical_map has 58 rows, the model has 61 hidden layers"));
  nlohmann::json extra = nlohmann::json::parse(sglang->write({p, layout, load}));
  extra["policy"] = "eplb";
  CHECK_THROWS_WITH(sglang->read(extra.dump(), layout, 256, 32, "map.json"),
                    Catch::Contains("expected physical_to_logical_map only"));
  nlohmann::json missing = nlohmann::json::parse(sglang->write({p, layout, load}));
  missing["physical_to_logical_map"][10][0] = missing["physical_to_logical_map"][10][1];
  CHECK_THROWS_WITH(sglang->read(missing.dump(), layout, 256, 32, "map.json"),
                    Catch::Contains("physical_to_logical_map[10]: expert") && Catch::Contains("has no slot"));

  const auto* trt = engines::find_placement_format("trtllm");
  std::string y = trt->write({p, layout, load});
  CHECK_THROWS_WITH(trt->read(y + "ep_size: 32\n", layout, 256, 32, "lb.yaml"),
                    Catch::Contains("lb.yaml: unknown key \"ep_size\""));
  CHECK_THROWS_WITH(trt->read("num_slots: 288\nlayer_updates_per_iter: 2\n", layout, 256, 32, "lb.yaml"),
                    Catch::Contains("not a static placement"));
  CHECK_THROWS_WITH(trt->read("num_slots: 288\ninitial_global_assignments: {}\n", layout, 256, 32, "lb.yaml"),
                    Catch::Contains("initial_global_assignments has no layer 3"));
  // 288 slots do not divide over 7 GPUs.
  CHECK_THROWS_WITH(trt->read(y, layout, 256, 7, "lb.yaml"), Catch::Contains("do not divide evenly over 7 GPUs"));

  // An empty slot cannot be written for any engine.
  policies::Placement holes = p;
  std::vector<int> phy = holes.layers[4].phy2log;
  phy[287] = -1;
  holes.layers[4] = policies::make_layer_placement(256, 32, 9, phy);
  for (const char* name : {"sglang", "trtllm", "vllm-ascend", "vllm", "vllm-slots"}) {
    CHECK_THROWS_WITH(engines::find_placement_format(name)->write({holes, layout, load}),
                      Catch::Contains("MoE layer 4, slot 287 is empty"));
  }
  // vllm-ascend: one expert twice on a device (slot s of device 0 takes slot 0's expert; s's own expert keeps
  // a replica elsewhere).
  policies::Placement twice = p;
  std::vector<int> dup = twice.layers[0].phy2log;
  int s = 1;
  while (s < 9 && twice.layers[0].logcnt[static_cast<std::size_t>(dup[static_cast<std::size_t>(s)])] < 2) {
    ++s;
  }
  REQUIRE(s < 9);
  dup[static_cast<std::size_t>(s)] = dup[0];
  twice.layers[0] = policies::make_layer_placement(256, 32, 9, dup);
  CHECK_THROWS_WITH(
      engines::find_placement_format("vllm-ascend")->write({twice, layout, load}),
      Catch::Contains("vllm-ascend: MoE layer 0, device 0: expert") && Catch::Contains("twice on one device"));
}
