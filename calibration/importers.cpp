// SPDX-License-Identifier: Apache-2.0
#include "calibration/importers.hpp"

#include <array>

#include "calibration/import_nccl_tests.hpp"
#include "calibration/import_nsys.hpp"
#include "calibration/import_torch_trace.hpp"
#include "calibration/import_vidur.hpp"
#include "calibration/import_vllm_moe.hpp"
#include "core/named.hpp"

namespace epsim::calibration {
namespace {

constexpr std::array<Importer, 5> k_importers{{
    {"vllm_moe", "vLLM benchmarks/kernels/benchmark_moe.py output -> expert_ffn (shape from --model/--shape, --tp)",
     import_vllm_moe},
    {"torch_trace", "PyTorch profiler Chrome trace JSON (record_shapes=True) -> dense_gemm, attention, expert_ffn",
     import_torch_trace},
    {"nsys", "nsys stats CSV: nvtx_gpu_proj_trace with epsim:OP ranges, or cuda_gpu_kern_sum/trace with --kernel",
     import_nsys},
    {"nccl_tests", "nccl-tests all_reduce_perf / alltoall_perf / sendrecv_perf output -> collectives",
     import_nccl_tests},
    {"vidur", "Vidur compute profiles mlp.csv / attention.csv -> dense_gemm, attention", import_vidur},
}};

}  // namespace

std::span<const Importer> importers() {
  return k_importers;
}

const Importer* find_importer(std::string_view name) {
  return core::find_named<Importer>(k_importers, name);
}

}  // namespace epsim::calibration
