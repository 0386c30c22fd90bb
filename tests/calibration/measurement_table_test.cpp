// SPDX-License-Identifier: Apache-2.0
#include "calibration/measurement_table.hpp"

#include <catch2/catch.hpp>

#include "calibration/measured_work.hpp"
#include "core/error.hpp"

using namespace epsim;
using calibration::MeasuredOp;

namespace {

std::string error_of(const std::string& text) {
  try {
    calibration::parse_measurement_table(text, "t.csv");
  } catch (const core::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a measurement table parses every op's shape, keeps unknown columns and writes itself back") {
  const std::string text =
      "# measured by hand\n"
      "gpu,op,tokens,experts,top_k,hidden,intermediate,dtype,m,n,k,batch,q_tokens,kv_tokens,heads,kv_heads,"
      "head_dim,bytes,gpus,gpus_per_node,latency_us,gpu_id,note\n"
      "h100,expert_ffn,64,8,2,4096,14336,bf16,,,,,,,,,,,,,412.5,3,\"fused, triton\"\n"
      "h100,dense_gemm,,,,,,fp8,128,7168,2048,,,,,,,,,,21.25,,\n"
      "a100,attention_decode,,,,,,bf16,,,,32,1,2048,32,8,128,,,,88,,\n"
      "h100,all_reduce,,,,,,,,,,,,,,,,1048576,8,8,30.5,,nccl-tests\n";
  const auto t = calibration::parse_measurement_table(text, "t.csv");
  REQUIRE(t.rows.size() == 4);
  REQUIRE(t.extra_columns == std::vector<std::string>{"note"});
  const auto& e = t.rows[0];
  CHECK(e.op == MeasuredOp::expert_ffn);
  CHECK(e.tokens == 64);
  CHECK(e.experts == 8);
  CHECK(e.top_k == 2);
  CHECK(e.hidden == 4096);
  CHECK(e.intermediate == 14336);
  CHECK(e.active_experts == 0);
  CHECK(e.gpu_id == 3);
  CHECK(e.latency_us == 412.5);
  CHECK(e.extra == std::vector<std::string>{"fused, triton"});
  CHECK(e.line == 3);
  CHECK(t.rows[1].dtype == hardware::Precision::fp8);
  CHECK(t.rows[1].m == 128);
  CHECK(t.rows[1].k == 2048);
  CHECK(t.rows[1].gpu_id == -1);
  CHECK(t.rows[2].kv_heads == 8);
  CHECK(t.rows[3].bytes == 1048576.0);
  CHECK(t.rows[3].gpus == 8);

  // Written back and read again: the same rows, and the writer's own output is a fixed point.
  const std::string once = calibration::format_measurement_table(t);
  const auto again = calibration::parse_measurement_table(once, "once.csv");
  REQUIRE(again.rows.size() == 4);
  CHECK(again.rows[0].extra == e.extra);
  CHECK(again.rows[3].latency_us == 30.5);
  CHECK(calibration::format_measurement_table(again) == once);

  // An added column carries one cell per row.
  const std::vector<std::string> added{"predicted_us"};
  const std::vector<std::vector<std::string>> cells{{"1", "2", "3", "4"}};
  const std::string with = calibration::format_measurement_table(t, added, cells);
  CHECK(with.substr(0, with.find('\n')).ends_with(",note,predicted_us"));
  CHECK(with.find(",4\n") != std::string::npos);
}

TEST_CASE("a bad measurement table is refused naming the file, the line and the column") {
  const std::string head = "gpu,op,m,n,k,dtype,latency_us\n";
  CHECK(error_of(head + "h100,dense_gemm,1,2,3,bf16,-1\n") ==
        "t.csv:2: column 'latency_us': expected a positive number of microseconds, got -1");
  CHECK(error_of(head + "h100,gemm,1,2,3,bf16,1\n").starts_with("t.csv:2: column 'op': unknown op \"gemm\"; valid"));
  CHECK(error_of(head + "h100,dense_gemm,1,x,3,bf16,1\n") ==
        "t.csv:2: column 'n': expected a whole number >= 0, got \"x\"");
  CHECK(error_of(head + "h100,dense_gemm,1,,3,bf16,1\n") ==
        "t.csv:2: column 'n': op dense_gemm needs a positive value, got 0");
  CHECK(error_of(head + "h100,dense_gemm,1,2,3,fp4,1\n") ==
        "t.csv:2: column 'dtype': expected bf16 or fp8, got \"fp4\"");
  CHECK(error_of(head + "h100,dense_gemm,1,2,3\n") == "t.csv:2: expected 7 cells as in the header, got 5");
  CHECK(error_of(head + "h100,expert_ffn,1,2,3,bf16,1\n") ==
        "t.csv:2: op expert_ffn needs a 'tokens' column, the header has none");
  CHECK(error_of("gpu,op,m\n").starts_with("t.csv:1: the header has no 'latency_us' column"));
  CHECK(error_of("").starts_with("t.csv: empty"));
  CHECK(error_of("gpu,op,bytes,gpus,gpus_per_node,latency_us\nh100,all_reduce,8,1,8,3\n") ==
        "t.csv:2: column 'gpus': a collective needs at least 2 GPUs, got 1");
  CHECK(error_of("gpu,op,tokens,experts,top_k,hidden,intermediate,dtype,active_experts,latency_us\n"
                 "h100,expert_ffn,2,8,2,64,64,bf16,5,1\n") ==
        "t.csv:2: column 'active_experts': at most min(experts, tokens x top_k) = 4 experts can be active, got 5");
  CHECK_THROWS_WITH(calibration::read_measurement_table("/nonexistent/x.csv"),
                    "/nonexistent/x.csv: cannot read the measurement table");
}

TEST_CASE("a grouped GEMM row (column groups) is priced as that many GEMMs, each with its own weight") {
  const auto t = calibration::parse_measurement_table(
      "gpu,op,m,n,k,dtype,groups,latency_us\nh100,dense_gemm,256,4096,7168,fp8,4,64.5\n"
      "h100,dense_gemm,64,2112,7168,fp8,,9.4\n",
      "t.csv");
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[0].groups == 4);
  CHECK(t.rows[1].groups == 1);
  // Written back: the known column, empty for a single GEMM.
  const auto back = calibration::parse_measurement_table(calibration::format_measurement_table(t), "back.csv");
  CHECK(back.rows[0].groups == 4);
  CHECK(back.rows[1].groups == 1);
  // 4 x (2 x 256 x 4096 x 7168) FLOPs; 4 x (4096 x 7168 FP8 weights + 256 x (7168 + 4096) BF16 activations).
  const hardware::GpuSpec h100 = hardware::load_gpu_preset("h100");
  const hardware::KernelWork w = calibration::kernel_work(h100, t.rows[0]);
  CHECK(w.flops == 4.0 * 2.0 * 256 * 4096 * 7168);
  CHECK(w.bytes == 4.0 * (4096.0 * 7168 + 256.0 * (7168 + 4096) * 2));
  CHECK(w.gemm_m == 1024.0);
  CHECK(w.gemm_n == 4096.0);
  CHECK(error_of("gpu,op,m,n,k,dtype,groups,latency_us\nh100,dense_gemm,1,2,3,bf16,0,1\n") ==
        "t.csv:2: column 'groups': expected a whole number of GEMMs in the grouped call (1 to 1048576), got \"0\"");
}
