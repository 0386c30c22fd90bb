// SPDX-License-Identifier: Apache-2.0
#include "experiments/cli/calibrate_import.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "calibration/measurement_table.hpp"

using namespace epsim;

TEST_CASE("epsim calibrate import writes the measurement table an importer makes") {
  const std::string data = std::string(EPSIM_TEST_DATA_DIR) + "/calibration/";
  const auto out_path = std::filesystem::temp_directory_path() / "epsim_calibrate_import_test.csv";
  std::ostringstream out;
  std::ostringstream err;
  CHECK(experiments::calibrate_import_command({"vllm_moe", data + "vllm_moe.txt", "--model", "mixtral-8x7b", "--gpu",
                                               "h100", "--gpu-id", "2", "--out", out_path.string()},
                                              out, err) == 0);
  CHECK_THAT(out.str(), Catch::Contains("2 rows"));
  const auto t = calibration::read_measurement_table(out_path);
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[0].gpu_id == 2);
  CHECK(t.rows[1].latency_us == 412.5);

  std::ostringstream nsys_out;
  CHECK(experiments::calibrate_import_command(
            {"nsys", data + "nsys_gpu_trace.csv", "--kernel", "xmma", "--op", "dense_gemm", "--shape", "m=128",
             "n=4096", "k=4096", "--out", out_path.string()},
            nsys_out, err) == 0);
  CHECK(calibration::read_measurement_table(out_path).rows[0].k == 4096);

  std::ostringstream help;
  CHECK(experiments::calibrate_import_command({"--help"}, help, err) == 0);
  for (const char* format : {"vllm_moe", "torch_trace", "nsys", "nccl_tests", "vidur"}) {
    CHECK_THAT(help.str(), Catch::Contains(format));
  }
  CHECK_THROWS_WITH(experiments::calibrate_import_command({"nope", "x", "--out", "y"}, out, err),
                    Catch::Contains("unknown format \"nope\""));
  CHECK_THROWS_AS(experiments::calibrate_import_command({"vllm_moe", data + "vllm_moe.txt"}, out, err),
                  std::invalid_argument);
  CHECK_THROWS_WITH(experiments::calibrate_import_command({"nsys", "f.csv", "--shape", "m128", "--out", "y"}, out, err),
                    Catch::Contains("--shape: expected key=value"));
  std::filesystem::remove(out_path);
}
