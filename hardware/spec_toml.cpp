// SPDX-License-Identifier: Apache-2.0
#include "hardware/spec_toml.hpp"

#include <fmt/format.h>

#include <toml++/toml.h>

#include "core/error.hpp"
#include "core/params.hpp"

namespace epsim::hardware {
namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
    }
    out += c;
  }
  return out + "\"";
}

std::string link_toml(const char* table, const LinkSpec& l) {
  return fmt::format(
      "[{}]\nbw_gbps = {}\nlatency_us = {}\nefficiency = {}\nnvls_gbps = {}\nnccl_hw = \"{}\"\nnccl_ll_max_gbps = {}\n",
      table, l.bw_gbps, l.latency_us, l.efficiency, l.nvls_gbps, l.nccl_hw == NcclHw::pci ? "pci" : "nvlink",
      l.nccl_ll_max_gbps);
}

std::string efficiency_toml(const std::string& table, const Efficiency& e) {
  return fmt::format(
      "[efficiency.{}]\nlibrary = \"{}\"\ncompute = {}\nmemory = {}\nknee = {}\nfixed_us = {}\nfloor_us = {}\n"
      "softmax_head_dim = {}\n",
      table, library_info(e.library).name, e.compute, e.memory, e.knee, e.fixed_us, e.floor_us, e.softmax_head_dim);
}

toml::table parsed(const std::string& text, const std::string& where) {
  try {
    return toml::parse(text, where);
  } catch (const toml::parse_error& e) {
    throw core::Error(fmt::format("{}: line {}: {}", where, e.source().begin.line, e.description()));
  }
}

}  // namespace

std::string gpu_spec_toml(const GpuSpec& g, const std::string& header) {
  std::string out = header;
  out += fmt::format("name = {}\n", quoted(g.name));
  out += fmt::format("bf16_tflops = {}\nfp16_tflops = {}\nfp8_tflops = {}\nfp4_tflops = {}\nhbm_gbps = {}\n",
                     g.bf16_tflops, g.fp16_tflops, g.fp8_tflops, g.fp4_tflops, g.hbm_gbps);
  out += fmt::format("memory_gib = {}\nmax_memory_efficiency = {}\n", g.memory_gib, g.max_memory_efficiency);
  out += fmt::format("tdp_w = {}\nsm_count = {}\nscale_up_link = {}\nkernel_launch_us = {}\n", g.tdp_w, g.sm_count,
                     quoted(g.scale_up_link), g.kernel_launch_us);
  out += fmt::format("moe_tile_small = {}\nmoe_tile_large = {}\nmoe_tile_threshold = {}\n", g.moe_tile_small,
                     g.moe_tile_large, g.moe_tile_threshold);
  out += fmt::format("gemm_tile_m = {}\ngemm_tile_n = {}\n", g.gemm_tile_m, g.gemm_tile_n);
  out += fmt::format("[max_compute_efficiency]\nbf16 = {}\nfp8 = {}\nfp4 = {}\n", g.max_compute_efficiency[0],
                     g.max_compute_efficiency[1], g.max_compute_efficiency[2]);
  for (int k = 0; k < k_op_kinds; ++k) {
    const std::string family = op_kind_name(static_cast<OpKind>(k));
    out += efficiency_toml(family, g.family_efficiency[static_cast<std::size_t>(k)]);
    for (int p = 0; p < k_precisions; ++p) {  // a precision's own table only where it differs
      const Efficiency& e = g.efficiency[static_cast<std::size_t>(k)][static_cast<std::size_t>(p)];
      if (!(e == g.family_efficiency[static_cast<std::size_t>(k)])) {
        out += efficiency_toml(family + "." + precision_name(static_cast<Precision>(p)), e);
      }
    }
  }
  return out;
}

std::string cluster_spec_toml(const ClusterSpec& c, const std::string& header) {
  static constexpr const char* k_up[] = {"switch", "mesh", "pcie"};
  static constexpr const char* k_out[] = {"none", "rail", "fat_tree"};
  std::string out = header;
  out += fmt::format("name = {}\ngpu = {}\nnodes = {}\ngpus_per_node = {}\n", quoted(c.name), quoted(c.gpu), c.nodes,
                     c.gpus_per_node);
  out += fmt::format("scale_up = \"{}\"\nscale_out = \"{}\"\nnics_per_node = {}\ngpus_per_pcie_switch = {}\n",
                     k_up[static_cast<int>(c.scale_up)], k_out[static_cast<int>(c.scale_out)], c.nics_per_node,
                     c.gpus_per_pcie_switch);
  out += fmt::format("leaf_radix = {}\noversubscription = {}\ncollective_overhead_us = {}\n", c.leaf_radix,
                     c.oversubscription, c.collective_overhead_us);
  out += link_toml("intra_node", c.scale_up_link);
  out += link_toml("inter_node", c.nic_link);
  out += link_toml("pcie", c.pcie_link);
  return out;
}

GpuSpec read_gpu_spec_toml(const std::string& text, const std::string& where) {
  const toml::table t = parsed(text, where);
  core::ParamTable p({core::ParamLayer{&t, where}}, "gpu");
  return parse_gpu_spec(p);
}

ClusterSpec read_cluster_spec_toml(const std::string& text, const std::string& where) {
  const toml::table t = parsed(text, where);
  core::ParamTable p({core::ParamLayer{&t, where}}, "cluster");
  return parse_cluster_spec(p);
}

}  // namespace epsim::hardware
