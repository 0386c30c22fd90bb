// SPDX-License-Identifier: Apache-2.0
#include "calibration/importers.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.hpp"

using namespace epsim;
using calibration::MeasuredOp;
using calibration::Measurement;

namespace {

const std::filesystem::path k_data = std::filesystem::path(EPSIM_TEST_DATA_DIR) / "calibration";

calibration::MeasurementTable run(std::string_view format, const std::vector<std::string>& names,
                                  const calibration::ImportOptions& o) {
  std::vector<std::filesystem::path> files;
  for (const std::string& n : names) {
    files.push_back(k_data / n);
  }
  const calibration::Importer* importer = calibration::find_importer(format);
  REQUIRE(importer != nullptr);
  return importer->run(files, o);
}

// Written and parsed back, the table holds the same rows.
void check_round_trip(const calibration::MeasurementTable& t) {
  const auto back = calibration::parse_measurement_table(calibration::format_measurement_table(t), "back.csv");
  REQUIRE(back.rows.size() == t.rows.size());
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const Measurement& a = t.rows[i];
    const Measurement& b = back.rows[i];
    CHECK(a.op == b.op);
    CHECK(a.gpu == b.gpu);
    CHECK(a.gpu_id == b.gpu_id);
    CHECK(a.latency_us == Approx(b.latency_us));
    CHECK(a.tokens == b.tokens);
    CHECK(a.experts == b.experts);
    CHECK(a.hidden == b.hidden);
    CHECK(a.intermediate == b.intermediate);
    CHECK(a.m == b.m);
    CHECK(a.n == b.n);
    CHECK(a.k == b.k);
    CHECK(a.kv_tokens == b.kv_tokens);
    CHECK(a.bytes == b.bytes);
    CHECK(a.gpus_per_node == b.gpus_per_node);
    CHECK(a.dtype == b.dtype);
  }
}

std::filesystem::path write_temp(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("epsim_import_" + name);
  std::ofstream(path) << text;
  return path;
}

std::string error_of(std::string_view format, const std::filesystem::path& path, const calibration::ImportOptions& o) {
  try {
    const std::vector<std::filesystem::path> files{path};
    calibration::find_importer(format)->run(files, o);
  } catch (const core::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("the importer registry names each format once, with a description") {
  for (const auto& i : calibration::importers()) {
    CHECK(calibration::find_importer(i.name) == &i);
    CHECK(!i.description.empty());
  }
  CHECK(calibration::find_importer("nope") == nullptr);
}

TEST_CASE("vllm_moe: one expert_ffn row per batch size, intermediate sharded by the printed tp_size") {
  calibration::ImportOptions o;
  o.model = "mixtral-8x7b";
  o.gpu = "h100";
  const auto t = run("vllm_moe", {"vllm_moe.txt"}, o);
  REQUIRE(t.rows.size() == 2);
  const Measurement& r = t.rows[1];
  CHECK(r.op == MeasuredOp::expert_ffn);
  CHECK(r.tokens == 64);
  CHECK(r.latency_us == 412.5);  // "Kernel time: 412.50 us"
  CHECK(r.experts == 8);
  CHECK(r.top_k == 2);
  CHECK(r.hidden == 4096);
  CHECK(r.intermediate == 14336 / 2);  // tp_size=2: w13 is [8, 2 x 7168, 4096]
  CHECK(r.line == 6);
  CHECK(t.rows[0].tokens == 1);
  CHECK(t.rows[0].latency_us == 98.41);
  check_round_trip(t);

  o.ep = 2;  // experts split instead... on top of the printed tp
  CHECK(run("vllm_moe", {"vllm_moe.txt"}, o).rows[0].experts == 4);

  calibration::ImportOptions none;
  none.gpu = "h100";
  CHECK_THAT(error_of("vllm_moe", k_data / "vllm_moe.txt", none),
             Catch::Contains("give --model PRESET") && Catch::Contains("mistralai/Mixtral-8x7B"));
  o.tp = 2;  // no Namespace line in this one
  const auto bad = write_temp("vllm_bad.txt", "Batch size: 8, config: {}\nKernel time: 12.00 us\nKernel time: 3 us\n");
  CHECK_THAT(error_of("vllm_moe", bad, o), Catch::Contains("vllm_bad.txt:3") && Catch::Contains("Batch size"));
}

TEST_CASE("nccl_tests: bytes and out-of-place time per row, GPUs and nodes from the rank lines") {
  calibration::ImportOptions o;
  const auto t = run("nccl_tests", {"all_reduce_perf.txt"}, o);
  REQUIRE(t.rows.size() == 3);
  const Measurement& r = t.rows[2];
  CHECK(r.op == MeasuredOp::all_reduce);
  CHECK(r.bytes == 1048576.0);
  CHECK(r.latency_us == 60.12);
  CHECK(r.gpus == 4);
  CHECK(r.gpus_per_node == 2);  // node-a and node-b
  CHECK(r.gpu == "NVIDIA H100 80GB HBM3");
  CHECK(r.line == 16);
  check_round_trip(t);

  // No test name printed: --op says what it was; #wrong N/A (validation off) is accepted.
  CHECK_THAT(error_of("nccl_tests", k_data / "alltoall_perf.txt", o), Catch::Contains("give --op"));
  o.op = "all_to_all";
  o.gpu = "a100";
  const auto a = run("nccl_tests", {"alltoall_perf.txt"}, o);
  REQUIRE(a.rows.size() == 2);
  CHECK(a.rows[0].op == MeasuredOp::all_to_all);
  CHECK(a.rows[0].gpus == 8);
  CHECK(a.rows[0].gpus_per_node == 8);
  CHECK(a.rows[0].latency_us == 35.10);
  CHECK(a.rows[0].gpu == "a100");

  std::ifstream in(k_data / "all_reduce_perf.txt");
  std::stringstream s;
  s << in.rdbuf();
  std::string text = s.str();
  text.replace(text.find("26.16      0"), 12, "26.16      3");
  calibration::ImportOptions plain;
  CHECK_THAT(error_of("nccl_tests", write_temp("wrong.txt", text), plain),
             Catch::Contains("wrong.txt:16") && Catch::Contains("3 wrong results"));
}

TEST_CASE("nsys: kernel reports with --kernel, --op and --shape, and epsim NVTX ranges that carry their own shape") {
  calibration::ImportOptions o;
  o.kernel = "moe";
  o.op = "expert_ffn";
  o.gpu = "h100";
  o.shape = {{"tokens", "64"}, {"experts", "8"}, {"top_k", "2"}, {"hidden", "4096"}, {"intermediate", "14336"}};
  const auto sum = run("nsys", {"nsys_kern_sum.csv"}, o);
  REQUIRE(sum.rows.size() == 1);
  // fused_moe_kernel runs twice per call (20 of 10 calls): 2 x 121 us median + 88 us align.
  CHECK(sum.rows[0].latency_us == Approx(2 * 121.0 + 88.0));
  CHECK(sum.rows[0].tokens == 64);
  check_round_trip(sum);

  calibration::ImportOptions g;
  g.kernel = "sm90_xmma_gemm";
  g.op = "dense_gemm";
  g.shape = {{"m", "128"}, {"n", "4096"}, {"k", "4096"}};
  const auto trace = run("nsys", {"nsys_gpu_trace.csv"}, g);
  REQUIRE(trace.rows.size() == 1);
  CHECK(trace.rows[0].latency_us == Approx(21.0));  // median of 21, 19, 25 us
  CHECK(trace.rows[0].gpu == "NVIDIA H100 80GB HBM3");
  CHECK(trace.rows[0].gpu_id == 3);
  CHECK(trace.rows[0].line == 3);

  calibration::ImportOptions n;
  n.gpu = "h100";
  std::ostringstream log;
  n.log = &log;
  const auto nvtx = run("nsys", {"nsys_nvtx_proj.csv"}, n);
  REQUIRE(nvtx.rows.size() == 1);
  CHECK(nvtx.rows[0].op == MeasuredOp::expert_ffn);
  CHECK(nvtx.rows[0].latency_us == Approx(415.0));  // median of 410, 430, 415 us
  CHECK(nvtx.rows[0].intermediate == 14336);
  CHECK(nvtx.rows[0].line == 4);
  CHECK_THAT(log.str(), Catch::Contains("warmup"));
  check_round_trip(nvtx);

  CHECK_THAT(error_of("nsys", k_data / "nsys_kern_sum.csv", n), Catch::Contains("give --kernel"));
  const auto bad = write_temp("nsys_bad.csv",
                              "\"Name\",\"Projected Start (ns)\",\"Projected Duration (ns)\"\n"
                              "\"epsim:expert_ffn tokens=4\",1,2\n\"x\",1\n");
  CHECK_THAT(error_of("nsys", bad, n), Catch::Contains("nsys_bad.csv:3") && Catch::Contains("expected 3 cells"));
}

TEST_CASE("vidur: the projections as dense GEMMs and attention rows, m, n, k derived from the model columns") {
  calibration::ImportOptions o;
  o.gpu = "h100";
  const auto mlp = run("vidur", {"vidur_mlp.csv"}, o);
  REQUIRE(mlp.rows.size() == 7);  // the second row's attn_post_proj is 0: not measured
  const Measurement& qkv = mlp.rows[0];
  CHECK(qkv.m == 128);
  CHECK(qkv.k == 4096);
  CHECK(qkv.n == (32 + 2 * 8) * 128 / 2);
  CHECK(qkv.latency_us == Approx(42.1));
  CHECK(mlp.rows[1].k == 2048);   // attn_post_proj: 32 x 128 / tp 2
  CHECK(mlp.rows[2].n == 14336);  // gated up: 2 x 14336 / 2
  CHECK(mlp.rows[3].k == 7168);
  CHECK(mlp.rows[3].latency_us == Approx(55.6));
  CHECK(mlp.rows[4].m == 512);
  check_round_trip(mlp);

  const auto att = run("vidur", {"vidur_attention.csv"}, o);
  REQUIRE(att.rows.size() == 2);
  CHECK(att.rows[0].op == MeasuredOp::attention_prefill);
  CHECK(att.rows[0].q_tokens == 512);
  CHECK(att.rows[0].kv_tokens == 1024 + 512);
  CHECK(att.rows[0].heads == 16);
  CHECK(att.rows[0].kv_heads == 4);
  CHECK(att.rows[0].head_dim == 128);
  CHECK(att.rows[0].latency_us == Approx(187.5));
  CHECK(att.rows[1].op == MeasuredOp::attention_decode);
  CHECK(att.rows[1].batch == 32);
  CHECK(att.rows[1].kv_tokens == 2048);
  check_round_trip(att);

  const auto bad = write_temp("vidur_bad.csv",
                              "n_head,n_kv_head,n_embd,n_expanded_embd,num_tokens,"
                              "num_tensor_parallel_workers,time_stats.mlp_up_proj.median\n"
                              "32,8,4096,14336,12x,1,0.5\n");
  CHECK_THAT(error_of("vidur", bad, o), Catch::Contains("vidur_bad.csv:2") && Catch::Contains("num_tokens"));
}

TEST_CASE("torch_trace: kernels summed per op call, shapes from Input Dims, others skipped and counted") {
  calibration::ImportOptions o;
  std::ostringstream log;
  o.log = &log;
  const auto t = run("torch_trace", {"torch_trace.json"}, o);
  REQUIRE(t.rows.size() == 3);
  const Measurement& gemm = t.rows[0];  // aten::linear [4, 32, 4096] x [11008, 4096]^T
  CHECK(gemm.op == MeasuredOp::dense_gemm);
  CHECK(gemm.m == 128);
  CHECK(gemm.k == 4096);
  CHECK(gemm.n == 11008);
  CHECK(gemm.latency_us == Approx(40.5 + 3.5));  // GEMM + split-K reduce
  CHECK(gemm.gpu == "NVIDIA H100 80GB HBM3");
  CHECK(gemm.gpu_id == 0);
  const Measurement& att = t.rows[1];  // query [2, 32, 1, 128], key [2, 8, 2048, 128]
  CHECK(att.op == MeasuredOp::attention_decode);
  CHECK(att.batch == 2);
  CHECK(att.heads == 32);
  CHECK(att.kv_heads == 8);
  CHECK(att.kv_tokens == 2048);
  CHECK(att.latency_us == Approx(30.25 + 4.75));  // the combine kernel linked by its correlation id
  const Measurement& moe = t.rows[2];             // hidden [64, 4096], w1 [8, 28672, 4096], topk ids [64, 2]
  CHECK(moe.op == MeasuredOp::expert_ffn);
  CHECK(moe.tokens == 64);
  CHECK(moe.experts == 8);
  CHECK(moe.intermediate == 14336);
  CHECK(moe.top_k == 2);
  CHECK(moe.latency_us == Approx(10.0 + 150.5 + 9.5 + 120.0));
  CHECK_THAT(log.str(), Catch::Contains("vectorized_elementwise_kernel") && Catch::Contains("aten::mm (float"));
  check_round_trip(t);

  CHECK_THAT(error_of("torch_trace", write_temp("broken.json", "{\"traceEvents\": [1,"), o),
             Catch::Contains("broken.json: byte"));
  CHECK_THAT(
      error_of("torch_trace",
               write_temp("bad_ts.json", "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"dur\": 1}]}"), o),
      Catch::Contains("bad_ts.json: /traceEvents/0/ts"));
  // Found by fuzz_calibration: a number past double's range is valid JSON syntax that nlohmann::json throws
  // out_of_range for, not parse_error; it had escaped as an uncaught exception.
  CHECK_THAT(error_of("torch_trace", write_temp("huge.json", "{\"traceEvents\": [0.1e7071]}"), o),
             Catch::Contains("huge.json: not JSON epsim can read") && Catch::Contains("number overflow"));
}
