// SPDX-License-Identifier: Apache-2.0
// Every shipped GPU, link and cluster preset against the vendors' spec sheets. The expected values are
// written here as the sheets print them (sparse figures, rack totals, bidirectional link rates, Gb/s)
// and converted in the test, so a preset value copied wrongly, or converted twice, fails.
//
// Sources (read 2026-11-26):
//  [a100]  NVIDIA A100 Tensor Core GPU datasheet (r4), A100 80GB SXM column,
//          https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf
//          SMs: NVIDIA A100 Tensor Core GPU Architecture whitepaper, "108 SMs",
//          https://images.nvidia.com/aem-dam/en-zz/Solutions/data-center/nvidia-ampere-architecture-whitepaper.pdf
//  [h100]  NVIDIA H100 Tensor Core GPU datasheet, H100 SXM column,
//          https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet
//          SMs: NVIDIA H100 Tensor Core GPU Architecture whitepaper, "132 SMs" (SXM5),
//          https://resources.nvidia.com/en-us-tensor-core/gtc22-whitepaper-hopper
//  [h200]  NVIDIA H200 Tensor Core GPU datasheet, H200 SXM column,
//          https://nvdam.widen.net/s/nb5zzzsjdf/hpc-datasheet-sc23-h200-datasheet-3002446 (the H100 die)
//  [b200]  NVIDIA DGX B200 datasheet, 8 GPUs: 1,440 GB, 64 TB/s HBM3e, 72 PFLOPS FP8 (sparse),
//          https://resources.nvidia.com/en-us-dgx-systems/dgxb200-datasheet ; NVIDIA HGX specifications
//          (HGX B200: FP16/BF16 36 PFLOPS sparse for 8 GPUs, NVLink 1.8 TB/s per GPU, 1,000 W per GPU in the
//          NVIDIA Blackwell datasheet), https://www.nvidia.com/en-us/data-center/hgx/
//  [gb200] NVIDIA GB200 NVL72 specifications, rack of 72 GPUs: FP8 720 PFLOPS, FP16/BF16 360 PFLOPS (sparse),
//          up to 13.4 TB HBM3e at 576 TB/s, NVLink 130 TB/s, https://www.nvidia.com/en-us/data-center/gb200-nvl72/
//  [h800]  NVIDIA H800 Tensor Core GPU datasheet, H800 SXM column (the H100 SXM's figures, NVLink 400 GB/s),
//          https://www.nvidia.cn/content/dam/en-zz/Solutions/Data-Center/h800/nvidia-h800-datasheet-2029415.pdf
//  [h20]   no NVIDIA datasheet exists; partners' tables (Baidu Baike H20, https://baike.baidu.com/en/item/H20/1510112;
//          TechPowerUp 2025-04-16): BF16 148, FP8 296 TFLOPS dense, 96 GB HBM3, 4.0 TB/s, 400 W, NVLink 900 GB/s
//  [b300]  NVIDIA Blackwell Ultra datasheet, "Individual GPU Specifications", HGX B300 column: FP4 18 | 14 PFLOPS
//          (sparse | dense), FP8 9, FP16/BF16 4.5 PFLOPS (sparse), 270 GB HBM3E, 7.7 TB/s, up to 1,100 W,
//          https://resources.nvidia.com/en-us-blackwell-architecture/blackwell-ultra-datasheet
//  [gb300] the same datasheet, GB300 column: FP4 20 | 15 PFLOPS, FP8 10, FP16/BF16 5 PFLOPS (sparse), 279 GB
//          HBM3E, 8 TB/s, up to 1,400 W; = the GB300 NVL72 page's rack figures / 72 (FP4 1,440 | 1,080 PFLOPS,
//          576 TB/s), https://www.nvidia.com/en-us/data-center/gb300-nvl72/
//  [mi355x] AMD Instinct MI355X data sheet: 256 CUs at 2.4 GHz, FP16/BF16 2.5, FP8 5, MXFP4/MXFP6 10 PFLOPS dense
//          (rounded), 288 GB HBM3E, 8 TB/s, 1,400 W, Infinity Fabric 153.6 GB/s per link x 7; the matrix
//          rates per CU per clock (BF16 4,096, FP8 8,192, FP4 16,384 FLOP) from AMD's CDNA 4 whitepaper,
//          https://www.amd.com/en/products/accelerators/instinct/mi350/mi355x.html
//  [mi300x] AMD Instinct MI300X data sheet: 1,307.4 TFLOPS BF16, 2,614.9 FP8 (dense), 192 GB HBM3, 5.3 TB/s,
//          750 W, 304 CUs, Infinity Fabric 128 GB/s per link x 7,
//          https://www.amd.com/content/dam/amd/en/documents/instinct-tech-docs/data-sheets/amd-instinct-mi300x-data-sheet.pdf
//  [mi325x] AMD Instinct MI325X data sheet: 1,307.4 BF16, 2,614.9 FP8 (dense), 256 GB HBM3E, 6 TB/s, 1,000 W,
//          304 CUs,
//          https://www.amd.com/content/dam/amd/en/documents/instinct-tech-docs/product-briefs/instinct-mi325x-datasheet.pdf
//  [l40]   NVIDIA L40 datasheet: BF16 181.05 | 362.1 sparse, FP8 362 | 724 sparse (FP32 accumulate), 48 GB
//          GDDR6 with ECC, 864 GB/s, 300 W, 18,176 CUDA cores (142 SMs x 128), PCIe Gen4 x16,
//          https://images.nvidia.com/content/Solutions/data-center/vgpu-L40-datasheet.pdf
//  [rtx4090] NVIDIA Ada GPU architecture whitepaper v2.02, appendix A (RTX 4090): 128 SMs, FP16/BF16 tensor
//          with FP32 accumulate 165.2 | 330.4 sparse, FP8 with FP32 accumulate 330.3 | 660.6 sparse (the
//          figure v2.02 corrected), 24 GB GDDR6X, 1,008 GB/s, 450 W,
//          https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf
//  [rtx3090] NVIDIA Ampere GA102 GPU architecture whitepaper, appendix A (RTX 3090): 82 SMs, FP16/BF16 tensor
//          with FP32 accumulate 71 | 142 sparse, 24 GB GDDR6X, 936 GB/s, 350 W,
//          https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf
//
// Memory: presets hold what the framework sees (vLLM's gpu_memory_utilization multiplies it). The vendors'
// HBM/GDDR "GB" are binary-sized parts (16/24/32 GiB HBM stacks, 16 Gb GDDR chips), and nvidia-smi shows
// them within 1 % as GiB (modal-labs/modal-client#2797: H100 81,559 MiB = 79.6 GiB, A100 80GB 81,920 MiB);
// ECC on GDDR6 data-centre boards (on by default) keeps 1/16 for check bits (46,068 MiB on 48 GB boards).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <string_view>

#include "hardware/cluster_spec.hpp"
#include "hardware/gpu_spec.hpp"
#include "hardware/link_types.hpp"
#include "hardware/spec_toml.hpp"

using namespace epsim;

namespace {

struct GpuFacts {
  const char* preset;
  double bf16_tflops_sheet;  ///< as printed
  bool bf16_sheet_sparse;    ///< the sheet prints the 2:4-sparse figure (dense = half)
  double fp8_tflops_sheet;   ///< 0 = no FP8
  bool fp8_sheet_sparse;
  double per_sheet_unit;  ///< the sheet's figures are for this many GPUs (DGX / NVL72 totals)
  double hbm_tbps_sheet;  ///< TB/s for per_sheet_unit GPUs
  double memory_gb_sheet;
  bool gddr_ecc;  ///< 1/16 of memory kept for ECC
  double tdp_w;
  int sms;                 ///< 0 = no spec sheet states it (not checked)
  double fp4_dense_sheet;  ///< dense FP4 for per_sheet_unit GPUs as printed ("sparse | dense"); 0 = no FP4
};

// MI355X: AMD prints its peaks rounded to two digits (2.5 / 5 / 10 PFLOPS); the exact ones are CUs x clock x
// the CDNA 4 matrix FLOP per CU per clock (checked against AMD's rounded figures below).
constexpr double mi355x_tflops(double flop_per_cu_per_clock) {
  return 256.0 * 2.4e9 * flop_per_cu_per_clock / 1e12;
}

// The spec sheets' numbers (see the header for each source).
constexpr GpuFacts k_gpus[] = {
    {"a100", 312.0, false, 0.0, false, 1, 2.039, 80.0, false, 400.0, 108, 0.0},
    {"h100", 1979.0, true, 3958.0, true, 1, 3.35, 80.0, false, 700.0, 132, 0.0},
    {"h800", 1979.0, true, 3958.0, true, 1, 3.35, 80.0, false, 700.0, 132, 0.0},
    // H20: the partners' tables give dense figures (a BF16 GEMM measures 142 TFLOP/s on it). SMs: not on a sheet.
    {"h20", 148.0, false, 296.0, false, 1, 4.0, 96.0, false, 400.0, 0, 0.0},
    {"h200", 1979.0, true, 3958.0, true, 1, 4.8, 141.0, false, 700.0, 132, 0.0},
    // DGX B200 totals for 8 GPUs (FP8 72 PFLOPS sparse, BF16 36 PFLOPS sparse, 1,440 GB, 64 TB/s; HGX B200 FP4
    // 144 | 72 PFLOPS). SMs: not on a spec sheet.
    {"b200", 36000.0, true, 72000.0, true, 8, 64.0, 1440.0, false, 1000.0, 0, 72000.0},
    // GB200 NVL72 totals for 72 GPUs (13.4 TB, 576 TB/s, FP4 1,440 | 720 PFLOPS). TDP: not on the NVL72 sheet;
    // 1,200 W is the board power limit nvidia-smi reports. SMs: not on a spec sheet.
    {"gb200", 360000.0, true, 720000.0, true, 72, 576.0, 13400.0, false, 1200.0, 0, 720000.0},
    // Blackwell Ultra datasheet, per GPU. SMs: the datasheet gives the full die's 160 only (the parts' own below).
    {"b300", 4500.0, true, 9000.0, true, 1, 7.7, 270.0, false, 1100.0, 0, 14000.0},
    {"gb300", 5000.0, true, 10000.0, true, 1, 8.0, 279.0, false, 1400.0, 0, 15000.0},
    {"mi300x", 1307.4, false, 2614.9, false, 1, 5.3, 192.0, false, 750.0, 304, 0.0},
    {"mi325x", 1307.4, false, 2614.9, false, 1, 6.0, 256.0, false, 1000.0, 304, 0.0},
    {"mi355x", mi355x_tflops(4096.0), false, mi355x_tflops(8192.0), false, 1, 8.0, 288.0, false, 1400.0, 256,
     mi355x_tflops(16384.0)},
    {"l40", 362.1, true, 724.0, true, 1, 0.864, 48.0, true, 300.0, 142, 0.0},
    {"rtx4090", 330.4, true, 660.6, true, 1, 1.008, 24.0, false, 450.0, 128, 0.0},
    {"rtx3090", 142.0, true, 0.0, false, 1, 0.936, 24.0, false, 350.0, 82, 0.0},
};

// Relative tolerance for figures the sheets round (989.5 printed as 1,979 / 2; 181.05 as 362.1 / 2).
constexpr double k_rounding = 0.005;
// Memory: visible GiB against the sheet's GB (see the header).
constexpr double k_memory_tolerance = 0.01;
// Presets written by `epsim calibrate fit` from a base preset.
constexpr std::string_view k_calibrated = "-calibrated";

bool near(double got, double want, double rel) {
  return std::abs(got - want) <= rel * std::abs(want);
}

}  // namespace

TEST_CASE("every GPU preset matches its spec sheet") {
  for (const auto& f : k_gpus) {
    INFO(f.preset);
    const auto g = hardware::load_gpu_preset(f.preset);
    const double bf16 = f.bf16_tflops_sheet / (f.bf16_sheet_sparse ? 2.0 : 1.0) / f.per_sheet_unit;
    const double fp8 = f.fp8_tflops_sheet / (f.fp8_sheet_sparse ? 2.0 : 1.0) / f.per_sheet_unit;
    CHECK(near(g.bf16_tflops, bf16, k_rounding));
    CHECK(g.fp16_tflops == g.bf16_tflops);  // every sheet lists FP16 and BF16 at one rate
    if (f.fp8_tflops_sheet == 0.0) {
      CHECK(g.fp8_tflops == 0.0);
    } else {
      CHECK(near(g.fp8_tflops, fp8, k_rounding));
    }
    CHECK(near(g.hbm_gbps, f.hbm_tbps_sheet * 1000.0 / f.per_sheet_unit, k_rounding));
    const double memory_gib = f.memory_gb_sheet / f.per_sheet_unit * (f.gddr_ecc ? 15.0 / 16.0 : 1.0);
    CHECK(near(g.memory_gib, memory_gib, k_memory_tolerance));
    CHECK(g.tdp_w == f.tdp_w);
    if (f.sms > 0) {
      CHECK(g.sm_count == f.sms);
    }
    if (f.fp4_dense_sheet == 0.0) {
      CHECK(g.fp4_tflops == 0.0);
    } else {
      CHECK(near(g.fp4_tflops, f.fp4_dense_sheet / f.per_sheet_unit, k_rounding));
    }
  }
  // Every shipped preset is in the table, except calibrated variants (checked below against their base).
  for (const auto& name : hardware::gpu_presets().names()) {
    INFO(name);
    const bool listed =
        std::any_of(std::begin(k_gpus), std::end(k_gpus), [&](const GpuFacts& f) { return name == f.preset; });
    CHECK((listed || name.ends_with(k_calibrated)));
  }
}

TEST_CASE("the GB200 and L40 capacities are what their GPUs show, not the sheet's GB read as 1e9 bytes") {
  // The values this file's table fixed (issue 36): GB200 was 13.4e12 / 72 / 2^30 = 173.2 GiB, 7 % below
  // the 185.0 GiB (189,471 MiB) its GPUs report; L40 held 48 GiB, of which ECC keeps 3 GiB.
  CHECK(hardware::load_gpu_preset("gb200").memory_gib == Approx(189471.0 / 1024.0).epsilon(0.001));
  CHECK(hardware::load_gpu_preset("gb200").memory_gib > hardware::load_gpu_preset("b200").memory_gib);
  CHECK(hardware::load_gpu_preset("l40").memory_gib == Approx(46068.0 / 1024.0).epsilon(0.001));
}

TEST_CASE("the issue-39 GPUs' capacities and SMs are what the parts report") {
  // nvidia-smi memory.total (MiB) and cudaGetDeviceProperties' multiProcessorCount on the shipping parts:
  // "NVIDIA B300 SXM6 AC" 275,040 MiB, 148 SMs; "NVIDIA GB300" 284,208 MiB, 152 SMs; "NVIDIA H20" 97,871 MiB,
  // 78 SMs (the full Blackwell Ultra die has 160 SMs, GH100 144). One decimal of GiB: 0.05 / 268 < 0.02 %.
  struct Reported {
    const char* preset;
    double mib;
    int sms;
  };
  for (const auto& r :
       {Reported{"b300", 275040.0, 148}, Reported{"gb300", 284208.0, 152}, Reported{"h20", 97871.0, 78}}) {
    INFO(r.preset);
    const auto g = hardware::load_gpu_preset(r.preset);
    CHECK(g.memory_gib == Approx(r.mib / 1024.0).margin(0.05));
    CHECK(g.sm_count == r.sms);
  }
  // Like GB200 against B200, the Grace-attached part shows more memory than the HGX one.
  CHECK(hardware::load_gpu_preset("gb300").memory_gib > hardware::load_gpu_preset("b300").memory_gib);
}

TEST_CASE("Blackwell Ultra's dense FP4 is 1.5x Blackwell's, its BF16 and FP8 are not") {
  // The datasheets: GB300 15 dense FP4 against GB200's 10; B300 14 against B200's 9 (the HGX page's 108 / 8 =
  // 13.5 is within 4 %); BF16 and FP8 unchanged per package (HGX) and per rack (NVL72: 360 / 720 PFLOPS both).
  const auto b200 = hardware::load_gpu_preset("b200");
  const auto b300 = hardware::load_gpu_preset("b300");
  const auto gb200 = hardware::load_gpu_preset("gb200");
  const auto gb300 = hardware::load_gpu_preset("gb300");
  CHECK(gb300.fp4_tflops / gb200.fp4_tflops == Approx(1.5));
  CHECK(b300.fp4_tflops / b200.fp4_tflops == Approx(14.0 / 9.0));
  CHECK(near(b300.fp4_tflops, 108000.0 / 8.0, 0.04));
  CHECK(b300.bf16_tflops == b200.bf16_tflops);
  CHECK(b300.fp8_tflops == b200.fp8_tflops);
  CHECK(gb300.bf16_tflops == gb200.bf16_tflops);
  CHECK(gb300.fp8_tflops == gb200.fp8_tflops);
}

TEST_CASE("MI355X's exact peaks round to AMD's printed 2.5 / 5 / 10 PFLOPS") {
  // AMD prints two digits; the preset holds 256 CUs x 2.4 GHz x the per-CU rate. MXFP6 runs at the FP4 rate.
  const auto g = hardware::load_gpu_preset("mi355x");
  CHECK(near(g.bf16_tflops, 2500.0, 0.01));
  CHECK(near(g.fp8_tflops, 5000.0, 0.01));
  CHECK(near(g.fp4_tflops, 10000.0, 0.01));
  CHECK(g.fp8_tflops == Approx(2.0 * g.bf16_tflops).epsilon(1e-4));
  CHECK(g.fp4_tflops == Approx(2.0 * g.fp8_tflops).epsilon(1e-4));
}

TEST_CASE("CDNA3 compute efficiencies are capped at AMD's measured max-achievable FLOPs") {
  // ROCm blog "Measuring Max-Achievable FLOPs - Part 2", Table 1 (hipBLASLt, median clocks): MI300X BF16 708,
  // FP8 1,273 TFLOP/s; MI325X BF16 843, FP8 1,519 TFLOP/s. FP4 runs on the FP8 units.
  struct Maf {
    const char* preset;
    double bf16;
    double fp8;
  };
  for (const Maf& m : {Maf{"mi300x", 708.0, 1273.0}, Maf{"mi325x", 843.0, 1519.0}}) {
    INFO(m.preset);
    const hardware::GpuSpec g = hardware::load_gpu_preset(m.preset);
    using hardware::OpKind;
    using hardware::Precision;
    const double bf16 = m.bf16 / g.bf16_tflops;
    const double fp8 = m.fp8 / g.fp8_tflops;
    CHECK(g.max_compute_efficiency[0] == Approx(bf16).margin(5e-5));
    CHECK(g.max_compute_efficiency[1] == Approx(fp8).margin(5e-5));
    CHECK(g.max_compute_efficiency[2] == Approx(fp8).margin(5e-5));
    // The defaults (75 % dense, 65 % grouped) were above both: every family now sits at the cap or below.
    CHECK(g.eff(OpKind::dense_gemm, Precision::bf16).compute == g.max_compute_efficiency[0]);
    CHECK(g.eff(OpKind::expert_ffn, Precision::fp8).compute == g.max_compute_efficiency[1]);
    for (int k = 0; k < hardware::k_op_kinds; ++k) {
      for (int p = 0; p < hardware::k_precisions; ++p) {
        CHECK(g.eff(static_cast<OpKind>(k), static_cast<Precision>(p)).compute <=
              g.max_compute_efficiency[static_cast<std::size_t>(p)]);
      }
    }
  }
}

TEST_CASE("the H800 preset is the H100 preset with H800's NVLink: hgx-h800 results stay H100's") {
  // The same die, clocks and HBM (H800 datasheet): every field written back is the H100's except the name and
  // the informational scale-up link, so every kernel is priced the same on both.
  auto h100 = hardware::load_gpu_preset("h100");
  auto h800 = hardware::load_gpu_preset("h800");
  CHECK(h800.scale_up_link == "nvlink4_h800");
  CHECK(h100.name != h800.name);
  h800.name = h100.name;
  h800.scale_up_link = h100.scale_up_link;
  CHECK(hardware::gpu_spec_toml(h800) == hardware::gpu_spec_toml(h100));
}

TEST_CASE("every calibrated GPU preset keeps its base preset's spec-sheet figures") {
  // A fit changes efficiencies only; the hardware it describes is the base preset's.
  std::size_t calibrated = 0;
  for (const auto& name : hardware::gpu_presets().names()) {
    if (!name.ends_with(k_calibrated)) {
      continue;
    }
    INFO(name);
    ++calibrated;
    const auto cal = hardware::load_gpu_preset(name);
    const auto base = hardware::load_gpu_preset(name.substr(0, name.size() - k_calibrated.size()));
    CHECK(cal.bf16_tflops == base.bf16_tflops);
    CHECK(cal.fp16_tflops == base.fp16_tflops);
    CHECK(cal.fp8_tflops == base.fp8_tflops);
    CHECK(cal.hbm_gbps == base.hbm_gbps);
    CHECK(cal.memory_gib == base.memory_gib);
    CHECK(cal.tdp_w == base.tdp_w);
    CHECK(cal.sm_count == base.sm_count);
  }
  CHECK(calibrated >= 1);  // h100-calibrated
}

TEST_CASE("every link preset matches its standard or spec sheet") {
  struct LinkFacts {
    const char* name;
    double bw_gbps_per_direction;
    const char* source;
  };
  const LinkFacts links[] = {
      // NVLink: the sheets give both directions together.
      {"nvlink3", 600.0 / 2.0, "A100 datasheet: NVLink 600 GB/s"},
      {"nvlink4", 900.0 / 2.0, "H100 / H200 datasheets: NVLink 900 GB/s"},
      {"nvlink4_h800", 400.0 / 2.0, "NVIDIA H800 SXM5: NVLink 400 GB/s (the export variant)"},
      {"nvlink5", 1800.0 / 2.0, "GB200 NVL72: 130 TB/s / 72 = 1.8 TB/s per GPU; HGX B200 1.8 TB/s"},
      {"infinity_fabric", 128.0 / 2.0, "MI300X data sheet: 128 GB/s per Infinity Fabric link"},
      {"infinity_fabric_cdna4", 153.6 / 2.0, "MI355X data sheet: 153.6 GB/s per Infinity Fabric link, 7 links"},
      // PCIe: 16 lanes x GT/s x 128b/130b encoding / 8 bits; 6.0 (FLIT): 242 of 256 bytes are not CRC / FEC.
      {"pcie4_x16", 16.0 * 16.0 * 128.0 / 130.0 / 8.0, "PCIe 4.0: 16 GT/s per lane"},
      {"pcie5_x16", 16.0 * 32.0 * 128.0 / 130.0 / 8.0, "PCIe 5.0: 32 GT/s per lane"},
      {"pcie6_x16", 16.0 * 64.0 * 242.0 / 256.0 / 8.0, "PCIe 6.0: 64 GT/s per lane (B300: Gen6 256 GB/s both ways)"},
      // Network ports: Gb/s / 8.
      {"ib_hdr", 200.0 / 8.0, "InfiniBand HDR 200 Gb/s (ConnectX-6)"},
      {"ib_ndr", 400.0 / 8.0, "InfiniBand NDR 400 Gb/s (ConnectX-7)"},
      {"ib_xdr", 800.0 / 8.0, "InfiniBand XDR 800 Gb/s (ConnectX-8)"},
      {"eth_25g", 25.0 / 8.0, "25 GbE"},
      {"eth_100g", 100.0 / 8.0, "100 GbE"},
      {"eth_400g", 400.0 / 8.0, "400 GbE"},
  };
  for (const auto& l : links) {
    INFO(l.name << ": " << l.source);
    const auto spec = hardware::link_type(l.name);
    // 0.5 %: the presets round PCIe's 31.51 / 63.02 GB/s to 31.5 / 63.
    CHECK(near(spec.bw_gbps, l.bw_gbps_per_direction, k_rounding));
    CHECK(spec.efficiency > 0.0);
    CHECK(spec.efficiency <= 1.0);
  }
  CHECK(std::size(links) == hardware::link_type_names().size());
}

TEST_CASE("every cluster preset pairs the GPU with its platform's links") {
  struct ClusterFacts {
    const char* name;
    const char* gpu;
    int gpus_per_node;
    const char* scale_up;
    const char* nic;
    const char* gpu_link;  ///< the GPU preset's own scale_up_link
    const char* pcie;      ///< GPU to NIC / host
    const char* source;
  };
  // NVIDIA DGX A100 / DGX H100 / DGX H200 / HGX: 8 GPUs on NVSwitch, one ConnectX-6 HDR (A100) or
  // ConnectX-7 NDR (H100, H200, H800, H20) NIC per GPU; GB200 NVL72: 72 GPUs in one NVLink domain, one
  // ConnectX-7 400 Gb/s per GPU; HGX B300 and GB300 NVL72: one ConnectX-8 800 Gb/s per GPU on PCIe 6 (HGX B300:
  // 1.6 TB/s of networking per 8 GPUs); AMD MI300X platform: 8 GPUs, Infinity Fabric mesh, 400 Gb/s NICs;
  // MI355X: the same mesh on CDNA 4's links, one Pensando Pollara 400 (400 GbE) per GPU.
  const ClusterFacts clusters[] = {
      {"hgx-a100", "a100", 8, "nvlink3", "ib_hdr", "nvlink3", "pcie4_x16", "DGX A100 datasheet"},
      {"hgx-h100", "h100", 8, "nvlink4", "ib_ndr", "nvlink4", "pcie5_x16", "DGX H100 datasheet"},
      {"hgx-h200", "h200", 8, "nvlink4", "ib_ndr", "nvlink4", "pcie5_x16", "DGX H200 datasheet"},
      {"hgx-h800", "h800", 8, "nvlink4_h800", "ib_ndr", "nvlink4_h800", "pcie5_x16",
       "DeepEP README: H800 + CX7 400 Gb/s"},
      {"hgx-h20", "h20", 8, "nvlink4", "ib_ndr", "nvlink4", "pcie5_x16", "H20: NVLink 900 GB/s, HGX H100 board"},
      {"gb200-nvl72", "gb200", 72, "nvlink5", "ib_ndr", "nvlink5", "pcie5_x16", "GB200 NVL72 specifications"},
      {"gb300-nvl72", "gb300", 72, "nvlink5", "ib_xdr", "nvlink5", "pcie6_x16",
       "GB300 NVL72 specifications: ConnectX-8 800 Gb/s per GPU"},
      {"hgx-b300", "b300", 8, "nvlink5", "ib_xdr", "nvlink5", "pcie6_x16", "HGX B300: 8 x ConnectX-8, 1.6 TB/s"},
      {"mi300x-8", "mi300x", 8, "infinity_fabric", "ib_ndr", "infinity_fabric", "pcie5_x16",
       "AMD Instinct MI300X platform data sheet"},
      {"mi355x-8", "mi355x", 8, "infinity_fabric_cdna4", "eth_400g", "infinity_fabric_cdna4", "pcie5_x16",
       "AMD MI355X data sheet, Pensando Pollara 400"},
      {"rtx3090-pcie", "rtx3090", 8, "pcie4_x16", "eth_25g", "pcie4_x16", "pcie4_x16", "GRACE-MoE testbed"},
      {"rtx4090-pcie", "rtx4090", 8, "pcie4_x16", "eth_25g", "pcie4_x16", "pcie4_x16", "GRACE-MoE testbed"},
      {"rtx4090-ib", "rtx4090", 4, "pcie4_x16", "ib_hdr", "pcie4_x16", "pcie4_x16", "DIRECTOR cluster A"},
  };
  for (const auto& c : clusters) {
    INFO(c.name << ": " << c.source);
    const auto spec = hardware::load_cluster_preset(c.name);
    CHECK(spec.gpu == c.gpu);
    CHECK(spec.gpus_per_node == c.gpus_per_node);
    CHECK(spec.scale_up_link.bw_gbps == hardware::link_type(c.scale_up).bw_gbps);
    CHECK(spec.nic_link.bw_gbps == hardware::link_type(c.nic).bw_gbps);
    CHECK(spec.pcie_link.bw_gbps == hardware::link_type(c.pcie).bw_gbps);
    CHECK(hardware::load_gpu_preset(c.gpu).scale_up_link == c.gpu_link);
  }
  CHECK(std::size(clusters) == hardware::cluster_presets().names().size());
}
