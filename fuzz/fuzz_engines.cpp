// SPDX-License-Identifier: Apache-2.0
// The serving engines' files epsim reads (engines/): routing recordings through the importers' registry
// (vLLM routed experts, EPLB load histories, epsim traces; TensorRT-LLM's is a directory, fuzzed through its
// meta file), placement files through the placement formats' readers (SGLang, TensorRT-LLM, vLLM,
// vllm-ascend), and the .npy and safetensors readers. The first byte picks the reader.
#include <cstddef>
#include <cstdint>
#include <string>

#include <google/protobuf/stubs/logging.h>

#include "core/error.hpp"
#include "engines/npy.hpp"
#include "engines/placement_formats.hpp"
#include "engines/routing_importers.hpp"
#include "engines/safetensors.hpp"
#include "fuzz/fuzz_input.hpp"
#include "models/model_spec.hpp"

namespace {

class DiscardSink : public epsim::engines::StepSink {
 public:
  void begin(const epsim::trace::Header&) override {}
  void step(const epsim::trace::Step&) override {}
};

// DeepSeek-V2-Lite (26 MoE layers of 64 experts, top-6): the model of the shipped engine samples, which
// seed the corpus, so recordings get past the model checks into the readers' depths.
const epsim::models::ModelSpec& model() {
  static const epsim::models::ModelSpec m = epsim::models::load_model_preset("deepseek-v2-lite");
  return m;
}

}  // namespace

// Protobuf logs every invalid UTF-8 string it meets; the trace reader reports the failed parse itself.
extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace en = epsim::engines;
  const auto routing = en::routing_importers();
  const auto placements = en::placement_formats();
  epsim::fuzz::Selected in;
  if (!epsim::fuzz::select(data, size, routing.size() + placements.size() + 2, in)) {
    return 0;
  }
  try {
    if (in.choice < routing.size()) {
      en::RoutingImportOptions o;
      o.model = model();
      o.model_name = "deepseek-v2-lite";
      o.tokens_per_step = 64;
      DiscardSink sink;
      const auto path = epsim::fuzz::input_file(in.data, in.size, ".json");
      (void)routing[in.choice].run(path, o, sink);
    } else if (const std::size_t f = in.choice - routing.size(); f < placements.size()) {
      if (placements[f].read != nullptr) {
        // Four MoE layers of 8 experts on 4 GPUs: small, and every check of a reader reachable.
        (void)placements[f].read(std::string(in.text()), en::all_moe_layout(4), 8, 4, "fuzz");
      }
    } else if (f == placements.size()) {
      (void)en::parse_npy(in.text(), "fuzz.npy");
    } else {
      en::SafetensorsFile file(epsim::fuzz::input_file(in.data, in.size, ".safetensors"));
      for (const auto& [name, entry] : file.tensors()) {
        if (entry.elements() <= (1 << 20)) {
          (void)file.read(name);
        }
      }
    }
  } catch (const epsim::core::Error&) {
  }
  return 0;
}
