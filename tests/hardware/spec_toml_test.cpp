// SPDX-License-Identifier: Apache-2.0
#include "hardware/spec_toml.hpp"

#include <toml++/toml.h>
#include <catch2/catch.hpp>

#include "core/params.hpp"

using namespace epsim;

TEST_CASE("GPU and cluster specs written as TOML parse back to the same spec") {
  hardware::GpuSpec g = hardware::load_gpu_preset("h100");
  g.name = "H100 \"calibrated\"";
  g.set_family_efficiency(hardware::OpKind::expert_ffn, {0.551234567891, 0.7123, 3.25, -1.5, 2.5, 0.0});
  g.efficiency[1][1] = {0.61, 0.8125, 0.0, -0.25, 0.0, 0.0};     // expert_ffn fp8: its own table
  g.efficiency[2][0] = {0.6, 0.8, 0.0, 0.0, 0.0, 37.123456789};  // attention_prefill bf16
  g.fp4_tflops = 1234.5;
  g.gemm_tile_m = 64;
  g.gemm_tile_n = 256;
  const toml::table gt = toml::parse(hardware::gpu_spec_toml(g, "# a header\n"));
  core::ParamTable gp({core::ParamLayer{&gt, "g.toml"}}, "gpu");
  const hardware::GpuSpec back = hardware::parse_gpu_spec(gp);
  gp.finish();
  CHECK(back.name == g.name);
  CHECK(back.bf16_tflops == g.bf16_tflops);
  CHECK(back.hbm_gbps == g.hbm_gbps);
  CHECK(back.sm_count == g.sm_count);
  CHECK(back.fp4_tflops == 1234.5);
  CHECK(back.max_memory_efficiency == g.max_memory_efficiency);
  CHECK(back.gemm_tile_m == 64);
  CHECK(back.gemm_tile_n == 256);
  CHECK(back.family_efficiency == g.family_efficiency);
  CHECK(back.efficiency == g.efficiency);
  CHECK(back.eff(hardware::OpKind::expert_ffn, hardware::Precision::fp8).compute == 0.61);
  CHECK(back.eff(hardware::OpKind::expert_ffn, hardware::Precision::bf16).floor_us == 2.5);

  hardware::ClusterSpec c = hardware::load_cluster_preset("hgx-h100");
  c.nodes = 4;
  c.collective_overhead_us = 7.123456789;
  c.nic_link.efficiency = 0.912345;
  // NCCL's link class and LL cap travel too: an A100's scale-up link written into an H100-default file.
  c.scale_up_link.nccl_ll_max_gbps = 87.7;
  c.pcie_link.nccl_hw = hardware::NcclHw::pci;
  const toml::table ct = toml::parse(hardware::cluster_spec_toml(c));
  core::ParamTable cp({core::ParamLayer{&ct, "c.toml"}}, "cluster");
  const hardware::ClusterSpec cb = hardware::parse_cluster_spec(cp);
  cp.finish();
  CHECK(cb.nodes == 4);
  CHECK(cb.gpu == c.gpu);
  CHECK(cb.scale_up == c.scale_up);
  CHECK(cb.scale_out == c.scale_out);
  CHECK(cb.collective_overhead_us == c.collective_overhead_us);
  CHECK(cb.nic_link.efficiency == c.nic_link.efficiency);
  CHECK(cb.nic_link.bw_gbps == c.nic_link.bw_gbps);
  CHECK(cb.scale_up_link.nvls_gbps == c.scale_up_link.nvls_gbps);
  CHECK(cb.pcie_link.latency_us == c.pcie_link.latency_us);
  CHECK(cb.scale_up_link.nccl_ll_max_gbps == 87.7);
  CHECK(cb.scale_up_link.nccl_hw == hardware::NcclHw::nvlink);
  CHECK(cb.pcie_link.nccl_hw == hardware::NcclHw::pci);
}
