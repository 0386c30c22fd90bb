// SPDX-License-Identifier: Apache-2.0
// `epsim accuracy`: the suite's point files read and refused as documented, each measure priced as the
// figure says (step figures against steps.csv of the same run, metrics against summary.json, cost
// figures against `epsim cost`, profile rows against calibrate's row pricing), the error summaries against
// hand-computed values, the output set whole and the same at any -j. The shipped suite's quick points are
// pinned by tests/experiments/accuracy_pinned_test.sh (release only: DeepSeek-V3 at EP32-144).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "calibration/measurement_table.hpp"
#include "core/error.hpp"
#include "experiments/assembly/row_pricing.hpp"
#include "experiments/cli/accuracy_figures.hpp"
#include "experiments/cli/accuracy_report.hpp"
#include "experiments/cli/accuracy_suite.hpp"
#include "hardware/gpu_spec.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/csv.hpp"

using namespace epsim;
using namespace epsim::experiments;

namespace {

const std::string k_data = EPSIM_TEST_DATA_DIR;

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    path = std::filesystem::temp_directory_path() /
           ("epsim-accuracy-" + std::to_string(static_cast<long long>(::getpid())) + "-" +
            std::to_string(reinterpret_cast<std::uintptr_t>(this)));
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string write(const std::string& name, const std::string& text) const {
    const auto p = path / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
};

const std::string k_point_head = "[point]\ntitle = \"t\"\ngpu = \"h100\"\nphase = \"decode\"\nsource = \"s\"\n";

std::string parse_error(const std::string& text) {
  try {
    (void)parse_point(text, "p.toml", SuiteFiles::embedded());
  } catch (const core::Error& e) {
    return e.what();
  }
  return "";
}

FigureResult result(double published, double predicted, Quantity q, Sample s = Sample::out) {
  // Built in place: GCC 12's -Wrestrict misfires on assigning short literals to these strings at -O3.
  return FigureResult{.point = std::string("p"),
                      .gpu = std::string("h100"),
                      .phase = PointPhase::kernel,
                      .figure = std::string("f"),
                      .published = published,
                      .predicted = predicted,
                      .sample = s,
                      .quantity = q,
                      .family = {},
                      .regime = {},
                      .table = {}};
}

}  // namespace

TEST_CASE("accuracy: point files are refused naming the file and the key", "[accuracy]") {
  const std::string cost_fig =
      "[[figure]]\nname = \"a\"\npublished = 10.0\nsample = \"out\"\nmeasure = \"cost\"\nargs = [\"--op\"]\n";
  CHECK(parse_error(k_point_head + cost_fig).empty());
  // A typo in a key, a key of another measure, a missing or non-positive published value.
  CHECK_THAT(parse_error(k_point_head + "titel = \"x\"\n" + cost_fig),
             Catch::Contains("p.toml") && Catch::Contains("point.titel") && Catch::Contains("unknown key"));
  CHECK_THAT(parse_error(k_point_head + cost_fig + "metric = \"tpot_ms.mean\"\n"),
             Catch::Contains("figure[0].metric") && Catch::Contains("unknown key"));
  CHECK_THAT(parse_error(k_point_head + "[[figure]]\nname = \"a\"\nsample = \"out\"\nmeasure = \"cost\"\n"),
             Catch::Contains("figure[0].published"));
  CHECK_THAT(parse_error(k_point_head + "[[figure]]\nname = \"a\"\npublished = -1.0\nsample = \"out\"\nmeasure = "
                                        "\"cost\"\nargs = [\"x\"]\n"),
             Catch::Contains("positive"));
  // Unknown choices name the valid ones.
  CHECK_THAT(parse_error(k_point_head + "[[figure]]\nname = \"a\"\npublished = 1.0\nsample = \"maybe\"\nmeasure = "
                                        "\"cost\"\nargs = [\"x\"]\n"),
             Catch::Contains("figure[0].sample") && Catch::Contains("in, out"));
  CHECK_THAT(parse_error(k_point_head + "[[figure]]\nname = \"a\"\npublished = 1.0\nsample = \"in\"\nmeasure = "
                                        "\"guess\"\n"),
             Catch::Contains("step_throughput, step_ms, metric, cost, profile"));
  // A run's figure needs a config; two figures may not share a name; a point needs figures.
  CHECK_THAT(parse_error(k_point_head + "[[figure]]\nname = \"a\"\npublished = 1.0\nsample = \"in\"\nmeasure = "
                                        "\"metric\"\nmetric = \"tpot_ms.mean\"\n"),
             Catch::Contains("needs the point's `config`"));
  CHECK_THAT(parse_error(k_point_head + cost_fig + cost_fig), Catch::Contains("already a figure"));
  CHECK_THAT(parse_error(k_point_head), Catch::Contains("[[figure]]"));
  CHECK_THAT(parse_error("[point]\ntitle = \"t\"\n[extra]\n"), Catch::Contains("unknown section"));
  CHECK_THAT(parse_error(k_point_head + "set = { a = 1 }\n" + cost_fig), Catch::Contains("without a `config`"));
  CHECK_THAT(parse_error("[point\n"), Catch::Contains("invalid TOML"));
}

TEST_CASE("accuracy: a point's paths resolve against its own folder", "[accuracy]") {
  const SuiteFiles files = SuiteFiles::embedded();
  CHECK(files.resolve("accuracy/points/x.toml", "../../examples/deployments/a.toml") == "examples/deployments/a.toml");
  CHECK(files.resolve("/s/points/x.toml", "../configs/c.toml") == "/s/configs/c.toml");
  // The embedded suite holds its points and the files they name, and nothing else.
  const std::vector<std::string> points = files.point_files();
  REQUIRE(points.size() >= 6);
  for (const std::string& p : points) {
    CHECK(p.starts_with("accuracy/points/"));
  }
  CHECK_THROWS_WITH(files.read("/etc/passwd"), Catch::Contains("not in the embedded suite"));
  CHECK_NOTHROW(read_suite(files));
}

TEST_CASE("accuracy: errors summarised against hand-computed values", "[accuracy]") {
  // Errors +10 %, -20 %, +5 % on kernels (target 10 %): MAPE 11.67 %, worst -20 %, 2 within.
  const std::vector<FigureResult> r{result(100, 110, Quantity::kernel), result(50, 40, Quantity::kernel),
                                    result(200, 210, Quantity::kernel)};
  std::vector<const FigureResult*> ptrs{&r[0], &r[1], &r[2]};
  const ErrorSummary e = summarise(ptrs);
  CHECK(e.figures == 3);
  CHECK(e.mape_pct == Approx((10.0 + 20.0 + 5.0) / 3.0));
  CHECK(e.worst_pct == Approx(-20.0));
  CHECK(e.within == 2);
  CHECK(e.target_pct == 10.0);
  // TTFT's band is 25 %: -20 % is inside it.
  const FigureResult ttft = result(50, 40, Quantity::ttft);
  const std::vector<const FigureResult*> one{&ttft};
  CHECK(summarise(one).within == 1);
  // accuracy.csv: the interface columns first, one row per figure.
  const std::string csv = accuracy_csv(r);
  CHECK(csv.starts_with("point,gpu,figure,published,predicted,error_pct,sample,"));
  CHECK(csv.find("\np,h100,f,50,40,-20.00,out,") != std::string::npos);
}

TEST_CASE("accuracy: run figures are the run's steps and metrics", "[accuracy]") {
  // The same config run by `epsim run` with steps.csv: the figures computed from its files by hand.
  TempDir dir;
  const std::string config = k_data + "/small.toml";
  const auto run = test::cli({"run", config, "--set", "output.steps_csv=true", "--out", (dir.path / "run").string()});
  REQUIRE(run.code == 0);
  std::istringstream steps(read(dir.path / "run" / "steps.csv"));
  std::string line;
  std::getline(steps, line);
  const std::vector<std::string> header = test::csv_cells(line);
  REQUIRE(header.at(4) == "duration_ns");
  REQUIRE(header.at(5) == "prefill_tokens");
  REQUIRE(header.at(6) == "decode_tokens");
  double decode_tokens = 0.0, decode_ns = 0.0, decode_steps = 0.0;
  while (std::getline(steps, line)) {
    const auto c = test::csv_cells(line);
    if (std::stoll(c[5]) == 0 && std::stoll(c[6]) >= 2) {  // decode-only steps of at least 2 requests
      decode_tokens += std::stod(c[6]);
      decode_ns += std::stod(c[4]);
      ++decode_steps;
    }
  }
  REQUIRE(decode_steps > 0);
  const auto summary = nlohmann::json::parse(read(dir.path / "run" / "summary.json"));
  const double tpot = summary["metrics"]["tpot_ms"]["mean"].get<double>();

  const std::string point =
      dir.write("points/small.toml",
                "[point]\ntitle = \"t\"\ngpu = \"h100\"\nphase = \"decode\"\nsource = \"s\"\nconfig = \"" + config +
                    "\"\n"
                    "[[figure]]\nname = \"tok\"\npublished = 1000.0\nsample = \"out\"\nmeasure = \"step_throughput\"\n"
                    "tokens = \"decode\"\nper = \"gpu\"\nmax_prefill_tokens = 0\nmin_decode_tokens = 2\n"
                    "[[figure]]\nname = \"step\"\npublished = 10.0\nsample = \"in\"\nmeasure = \"step_ms\"\n"
                    "max_prefill_tokens = 0\nmin_decode_tokens = 2\nper_layer = true\n"
                    "[[figure]]\nname = \"tpot\"\npublished = 20.0\nsample = \"out\"\nmeasure = \"metric\"\n"
                    "metric = \"tpot_ms.mean\"\n");
  const SuiteFiles files = SuiteFiles::on_disk(dir.path);
  const std::vector<FigureResult> r = price_point(read_suite(files).at(0), files);
  REQUIRE(r.size() == 3);
  // One EP group over 4 GPUs (small.toml): tokens over the steps' time, per GPU.
  CHECK(r[0].predicted == Approx(decode_tokens / (decode_ns / 1e9) / 4.0).epsilon(1e-12));
  CHECK(r[0].error_pct() == Approx(100.0 * (r[0].predicted - 1000.0) / 1000.0));
  CHECK(r[0].quantity == Quantity::throughput);
  CHECK(r[1].predicted == Approx(decode_ns / decode_steps / 1e6 / 32.0).epsilon(1e-12));  // Mixtral: 32 layers
  CHECK(r[1].sample == Sample::in);
  CHECK(r[2].predicted == Approx(tpot).epsilon(1e-12));
  CHECK(r[2].quantity == Quantity::tpot);

  // A filter no step passes, or an unknown metric, is an error naming the point and the figure.
  const std::string base = read(point);
  // (append, not operator+: GCC 12's -Wrestrict misfires on string + literal at -O3)
  const auto with = [&](std::string_view more) { return std::string(base).append(more); };
  dir.write("points/small.toml", with("[[figure]]\nname = \"none\"\npublished = 1.0\nsample = \"out\"\n"
                                      "measure = \"step_ms\"\nmin_prefill_tokens = 1000000000\n"));
  CHECK_THROWS_WITH(price_point(read_suite(files).at(0), files),
                    Catch::Contains("small.toml") && Catch::Contains("\"none\"") && Catch::Contains("no step"));
  dir.write("points/small.toml", with("[[figure]]\nname = \"m\"\npublished = 1.0\nsample = \"out\"\n"
                                      "measure = \"metric\"\nmetric = \"no_such.metric\"\n"));
  CHECK_THROWS_WITH(price_point(read_suite(files).at(0), files), Catch::Contains("no metric \"no_such.metric\""));
}

TEST_CASE("accuracy: cost and profile figures are epsim cost and calibrate's row prices", "[accuracy]") {
  TempDir dir;
  const auto cost =
      test::cli({"cost", "--op", "dense_gemm", "--gpu", "h100", "--shape", "m=4096", "n=7168", "k=2048", "--csv"});
  REQUIRE(cost.code == 0);
  std::istringstream rows(cost.out);
  std::string header, row;
  std::getline(rows, header);
  std::getline(rows, row);
  const double us = std::stod(test::csv_cells(row).back());  // latency_us is the last column

  const std::string table = dir.write("t.csv",
                                      "gpu,op,m,n,k,dtype,latency_us\n"
                                      "h100,dense_gemm,64,2112,7168,fp8,10.0\n"
                                      "h100,dense_gemm,4096,7168,2048,bf16,150.0\n");
  dir.write("points/k.toml",
            "[point]\ntitle = \"t\"\ngpu = \"h100\"\nphase = \"kernel\"\nsource = \"s\"\npreset = \"h100\"\n"
            "[[figure]]\nname = \"one\"\npublished = 100.0\nsample = \"out\"\nmeasure = \"cost\"\nargs = [\"--op\", "
            "\"dense_gemm\", \"--gpu\", \"h100\", \"--shape\", \"m=4096\", \"n=7168\", \"k=2048\"]\n"
            "[[figure]]\nname = \"tab\"\nsample = \"out\"\nmeasure = \"profile\"\ntable = \"../t.csv\"\n");
  const SuiteFiles files = SuiteFiles::on_disk(dir.path);
  const std::vector<FigureResult> r = price_point(read_suite(files).at(0), files);
  REQUIRE(r.size() == 3);
  CHECK(r[0].predicted == Approx(us).epsilon(1e-5));
  CHECK(r[0].quantity == Quantity::kernel);
  CHECK(r[0].family == "dense_gemm");
  const calibration::MeasurementTable t = calibration::read_measurement_table(table);
  const hardware::GpuSpec h100 = hardware::load_gpu_preset("h100");
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(r[1 + i].published == t.rows[i].latency_us);
    CHECK(r[1 + i].predicted == Approx(price_kernel_row_us(t.rows[i], h100)).epsilon(1e-12));
    CHECK(r[1 + i].table == "tab");
  }
  CHECK(r[1].figure == "tab: dense_gemm m=64 n=2112 k=7168 fp8");
  // A cost command that fails is the point's error, with epsim cost's own message.
  dir.write("points/k.toml",
            "[point]\ntitle = \"t\"\ngpu = \"h100\"\nphase = \"kernel\"\nsource = \"s\"\n"
            "[[figure]]\nname = \"bad\"\npublished = 1.0\nsample = \"out\"\nmeasure = \"cost\"\nargs = [\"--op\", "
            "\"warp_drive\"]\n");
  CHECK_THROWS_WITH(price_point(read_suite(files).at(0), files),
                    Catch::Contains("k.toml") && Catch::Contains("\"bad\"") && Catch::Contains("warp_drive"));
}

TEST_CASE("accuracy: the command's output set, at any -j", "[accuracy]") {
  TempDir dir;
  // Three small runs (tests/data/small.toml at three seeds), so that -j 2 prices them out of order.
  for (int seed = 1; seed <= 3; ++seed) {
    dir.write("suite/points/p" + std::to_string(seed) + ".toml",
              "[point]\ntitle = \"t\"\ngpu = \"h100\"\nphase = \"mixed\"\nsource = \"s\"\n" +
                  std::string(seed == 2 ? "quick = true\n" : "") + "config = \"" + k_data +
                  "/small.toml\"\n[point.set]\nrun.seed = " + std::to_string(seed) +
                  "\n[[figure]]\nname = \"tpot\"\npublished = 20.0\nsample = \"out\"\nmeasure = \"metric\"\n"
                  "metric = \"tpot_ms.mean\"\n");
  }
  const std::string suite = (dir.path / "suite").string();
  const auto one = test::cli({"accuracy", suite, "--csv", "-j", "1"});
  REQUIRE(one.code == 0);
  const auto two = test::cli({"accuracy", suite, "--csv", "-j", "2", "--out", (dir.path / "acc").string()});
  REQUIRE(two.code == 0);
  CHECK(one.out == two.out);
  CHECK(std::count(one.out.begin(), one.out.end(), '\n') == 4);  // header + one figure per point
  CHECK(read(dir.path / "acc" / "accuracy.csv") == one.out);
  const std::string md = read(dir.path / "acc" / "accuracy.md");
  CHECK(md.find("### Summary") != std::string::npos);
  CHECK(md.find("| out of sample | TPOT | 3 |") != std::string::npos);
  // --quick and --point select points.
  const auto quick = test::cli({"accuracy", suite, "--csv", "--quick"});
  CHECK(std::count(quick.out.begin(), quick.out.end(), '\n') == 2);
  CHECK(quick.out.find("\np2,") != std::string::npos);
  const auto picked = test::cli({"accuracy", suite, "--csv", "--point", "p3"});
  CHECK(picked.out.find("\np3,") != std::string::npos);
  CHECK(std::count(picked.out.begin(), picked.out.end(), '\n') == 2);
  // Usage errors: an unknown point, a bad -j, a missing suite; a user's file under --out is not replaced.
  CHECK(test::cli({"accuracy", suite, "--point", "no-such-point"}).code == 2);
  CHECK(test::cli({"accuracy", suite, "-j", "0"}).code == 2);
  CHECK_THAT(test::cli({"accuracy", (dir.path / "missing").string()}).err, Catch::Contains("no such suite"));
  dir.write("mine/notes.txt", "keep");
  CHECK(test::cli({"accuracy", suite, "--out", (dir.path / "mine").string()}).code != 0);
  CHECK(read(dir.path / "mine" / "notes.txt") == "keep");
}
