#include "hardware/gpu_spec.hpp"

#include <span>

namespace epsim::hardware {

std::span<const core::EmbeddedFile> embedded_gpus();

GpuSpec parse_gpu_spec(core::ParamTable& t) {
  GpuSpec g;
  g.name = t.string("name", "", "display name of the GPU");
  g.bf16_tflops = t.real_required("bf16_tflops", "peak dense BF16 TFLOP/s", core::k_positive);
  g.fp8_tflops = t.real("fp8_tflops", 0.0, "peak dense FP8 TFLOP/s (0 = no FP8 support)", core::k_non_negative);
  g.hbm_gbps = t.real_required("hbm_gbps", "HBM bandwidth in GB/s", core::k_positive);
  g.memory_gib = t.real_required("memory_gib", "HBM capacity in GiB", core::k_positive);
  g.tdp_w = t.real("tdp_w", 0.0, "board power in W (informational)", core::k_non_negative);
  g.compute_efficiency =
      t.real("compute_efficiency", g.compute_efficiency, "achievable share of peak FLOP/s", {0.0, 1.0, true});
  g.memory_efficiency =
      t.real("memory_efficiency", g.memory_efficiency, "achievable share of HBM bandwidth", {0.0, 1.0, true});
  g.kernel_launch_us =
      t.real("kernel_launch_us", g.kernel_launch_us, "fixed overhead per kernel in microseconds", core::k_non_negative);
  g.moe_tile_tokens = t.integer("moe_tile_tokens", g.moe_tile_tokens,
                                "grouped-GEMM tile (tokens per expert are padded up to it)", {1, 4096});
  return g;
}

const core::PresetCatalog& gpu_presets() {
  static const core::PresetCatalog catalog("gpus", embedded_gpus());
  return catalog;
}

}  // namespace epsim::hardware
