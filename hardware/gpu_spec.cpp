// SPDX-License-Identifier: Apache-2.0
#include "hardware/gpu_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <span>

#include "core/error.hpp"

namespace epsim::hardware {

std::span<const core::EmbeddedFile> embedded_gpus();

namespace {

// One efficiency table's keys over `def` (the family's values for a precision table).
Efficiency read_efficiency(core::ParamTable& e, const Efficiency& def, double max_memory, hardware::OpKind kind) {
  Efficiency x = def;
  x.library = e.choice<hardware::KernelLibrary>(
      "library", x.library, "kernel library these efficiencies describe (calibrate fit sets it from the rows)",
      hardware::kernel_library_choices());
  if (!hardware::implements(x.library, kind)) {
    e.fail("library", fmt::format("library {} has no {} kernels", hardware::library_info(x.library).name,
                                  hardware::op_kind_name(kind)));
  }
  x.compute = e.real("compute", x.compute, "achievable share of peak FLOP/s", {0.0, 1.0, true});
  x.memory = e.real("memory", x.memory, "achievable share of memory bandwidth (at most max_memory_efficiency)",
                    {0.0, max_memory, true});
  x.knee = e.real("knee", x.knee, "smooth-knee exponent p: (compute^p + memory^p)^(1/p); 0 = sharp max", {0.0, 1000.0});
  if (x.knee > 0.0 && x.knee < 1.0) {
    e.fail("knee", fmt::format("expected 0 (a sharp max) or an exponent >= 1, got {}", x.knee));
  }
  x.fixed_us =
      e.real("fixed_us", x.fixed_us, "fixed cost per kernel on top of kernel_launch_us, microseconds", {-1e6, 1e6});
  x.floor_us = e.real("floor_us", x.floor_us, "least time of one kernel's body, microseconds (0 = none)", {0.0, 1e6});
  x.softmax_head_dim =
      e.real("softmax_head_dim", x.softmax_head_dim,
             "attention: compute efficiency at head dim d is compute x d / (d + this); 0 = none", {0.0, 1e6});
  return x;
}

// A precision table's key overrides its family's, unless the family's key comes from a higher layer: a
// user's [gpu] efficiency.expert_ffn.compute must not be silently ignored for the precisions a preset
// (h100-calibrated's fit) gives tables of their own. Same layer, or the precision's higher: the precision's.
void keep_higher_layers(const core::ParamTable& family_table, const core::ParamTable& precision_table,
                        const Efficiency& family, Efficiency& at) {
  const auto family_wins = [&](std::string_view key) {
    if (!family_table.contains(key) || !precision_table.contains(key)) {
      return false;
    }
    return family_table.rank_of(family_table.source_of(key)) < family_table.rank_of(precision_table.source_of(key));
  };
  struct Field {
    const char* key;
    double Efficiency::*value;
  };
  for (const Field f :
       {Field{"compute", &Efficiency::compute}, Field{"memory", &Efficiency::memory}, Field{"knee", &Efficiency::knee},
        Field{"fixed_us", &Efficiency::fixed_us}, Field{"floor_us", &Efficiency::floor_us},
        Field{"softmax_head_dim", &Efficiency::softmax_head_dim}}) {
    if (family_wins(f.key)) {
      at.*f.value = family.*f.value;
    }
  }
  if (family_wins("library")) {
    at.library = family.library;
  }
}

// [efficiency.<family>] (every precision's defaults) and [efficiency.<family>.<precision>] over them.
void read_efficiencies(core::ParamTable& t, GpuSpec& g) {
  auto eff = t.table("efficiency", "achievable efficiencies per kernel family");
  for (int k = 0; k < hardware::k_op_kinds; ++k) {
    const auto kind = static_cast<hardware::OpKind>(k);
    auto e = eff.table(hardware::op_kind_name(kind), "efficiency of this kernel family (every precision)");
    const Efficiency family =
        read_efficiency(e, g.family_efficiency[static_cast<std::size_t>(k)], g.max_memory_efficiency, kind);
    g.family_efficiency[static_cast<std::size_t>(k)] = family;
    for (int p = 0; p < hardware::k_precisions; ++p) {
      // The docs list one table for the three precisions.
      const char* name =
          e.documenting() ? "<precision>" : hardware::precision_name(static_cast<hardware::Precision>(p));
      auto ep = e.table(name, "this family at one precision (bf16, fp8, fp4): overrides the family's keys");
      Efficiency at = read_efficiency(ep, family, g.max_memory_efficiency, kind);
      keep_higher_layers(e, ep, family, at);
      g.efficiency[static_cast<std::size_t>(k)][static_cast<std::size_t>(p)] = at;
      ep.finish();
      if (e.documenting()) {
        break;
      }
    }
    e.finish();
  }
  eff.finish();
}

}  // namespace

GpuSpec parse_gpu_spec(core::ParamTable& t) {
  GpuSpec g;
  g.name = t.string("name", "", "display name of the GPU");
  // Physical ranges far beyond any GPU, yet tight enough that every kernel time stays a finite number of
  // nanoseconds (1e-300 GB/s once made a step last ~1e300 s and the clock wrap around).
  constexpr core::RealBounds rate{1e-3, 1e7, false};  // TFLOP/s, GB/s
  constexpr core::RealBounds rate_or_zero{0.0, 1e7, false};
  g.bf16_tflops = t.real_required("bf16_tflops", "peak dense BF16 TFLOP/s", rate);
  g.fp16_tflops = t.real("fp16_tflops", 0.0, "peak dense FP16 TFLOP/s (0 = as BF16)", rate_or_zero);
  if (g.fp16_tflops == 0.0) {
    g.fp16_tflops = g.bf16_tflops;
  }
  g.fp8_tflops = t.real("fp8_tflops", 0.0, "peak dense FP8 TFLOP/s (0 = no FP8 support)", rate_or_zero);
  g.fp4_tflops =
      t.real("fp4_tflops", 0.0, "peak dense FP4 TFLOP/s (0 = no FP4 support: FP8's peak, else BF16's)", rate_or_zero);
  g.hbm_gbps = t.real_required("hbm_gbps", "memory bandwidth in GB/s", rate);
  g.memory_gib = t.real_required("memory_gib", "memory capacity in GiB", {0.0, 1e7, true});
  g.tdp_w = t.real("tdp_w", 0.0, "board power in W", {0.0, 1e6, false});
  g.scale_up_link = t.string("scale_up_link", "", "link type of the scale-up fabric (informational)");
  g.max_memory_efficiency =
      t.real("max_memory_efficiency", g.max_memory_efficiency,
             "largest share of hbm_gbps any kernel reaches (measured copy bandwidth); bounds every memory efficiency",
             {0.0, 1.0, true});
  {
    auto maf = t.table("max_compute_efficiency",
                       "largest share of each precision's peak FLOP/s any kernel reaches (measured max-achievable "
                       "FLOP/s over peak); caps every family's compute efficiency");
    for (int p = 0; p < hardware::k_precisions; ++p) {
      const auto prec = static_cast<hardware::Precision>(p);
      g.max_compute_efficiency[static_cast<std::size_t>(p)] =
          maf.real(hardware::precision_name(prec), 1.0,
                   fmt::format("{} kernels' cap (1 = none)", hardware::precision_name(prec)), {0.0, 1.0, true});
    }
    maf.finish();
  }
  read_efficiencies(t, g);
  // The cap applies to the resolved efficiencies (the defaults and every table): no kernel is priced
  // faster than the best GEMM measured on the GPU at that precision.
  for (auto& family : g.efficiency) {
    for (int p = 0; p < hardware::k_precisions; ++p) {
      double& compute = family[static_cast<std::size_t>(p)].compute;
      compute = std::min(compute, g.max_compute_efficiency[static_cast<std::size_t>(p)]);
    }
  }
  g.sm_count =
      static_cast<int>(t.integer("sm_count", g.sm_count, "streaming multiprocessors (0 = unknown)", {0, 100000}));
  g.kernel_launch_us =
      t.real("kernel_launch_us", g.kernel_launch_us, "fixed overhead per kernel in microseconds", {0.0, 1e6, false});
  for (int k = 0; k < hardware::k_op_kinds; ++k) {
    for (int p = 0; p < hardware::k_precisions; ++p) {
      const double fixed = g.efficiency[static_cast<std::size_t>(k)][static_cast<std::size_t>(p)].fixed_us;
      if (fixed < -g.kernel_launch_us) {
        t.fail("efficiency",
               fmt::format("{}.{}.fixed_us = {} would make its kernels' fixed cost negative "
                           "(kernel_launch_us = {})",
                           hardware::op_kind_name(static_cast<hardware::OpKind>(k)),
                           hardware::precision_name(static_cast<hardware::Precision>(p)), fixed, g.kernel_launch_us));
      }
    }
  }
  g.moe_tile_small = t.integer("moe_tile_small", g.moe_tile_small, "grouped-GEMM tile for small MoE calls", {1, 4096});
  g.moe_tile_large = t.integer("moe_tile_large", g.moe_tile_large, "grouped-GEMM tile for large MoE calls", {1, 4096});
  g.moe_tile_threshold =
      t.integer("moe_tile_threshold", 0,
                "largest M (token-expert pairs) using the small tile; 0 = the local expert count", {0, 1 << 24});
  g.gemm_tile_m =
      t.integer("gemm_tile_m", g.gemm_tile_m, "dense-GEMM output tile rows (waves need sm_count)", {1, 4096});
  g.gemm_tile_n =
      t.integer("gemm_tile_n", g.gemm_tile_n, "dense-GEMM output tile columns (waves need sm_count)", {1, 4096});
  return g;
}

GpuSpec load_gpu_preset(const std::string& name) {
  if (const std::string unknown = gpu_presets().unknown_message(name); !unknown.empty()) {
    throw core::Error(unknown);
  }
  core::ParamTable t({core::ParamLayer{&gpu_presets().get(name, "", ""), gpu_presets().label(name)}}, "gpu");
  return parse_gpu_spec(t);
}

const core::PresetCatalog& gpu_presets() {
  static const core::PresetCatalog catalog("gpus", embedded_gpus());
  return catalog;
}

}  // namespace epsim::hardware
