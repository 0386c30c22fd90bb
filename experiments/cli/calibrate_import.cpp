// SPDX-License-Identifier: Apache-2.0
#include "experiments/cli/calibrate_import.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "calibration/importers.hpp"
#include "core/atomic_file.hpp"
#include "experiments/cli/command_line.hpp"
#include "models/model_spec.hpp"

namespace po = boost::program_options;

namespace epsim::experiments {
namespace {

po::options_description import_options() {
  po::options_description d("options (epsim calibrate import FORMAT FILE... --out TABLE.csv)");
  d.add_options()("help,h", "show this help")("out,o", po::value<std::string>(), "the measurement table to write")(
      "gpu", po::value<std::string>(), "GPU label for the rows (default: the device name the file gives)")(
      "gpu-id", po::value<int>(), "physical GPU the rows were measured on")(
      "model", po::value<std::string>(), "vllm_moe: model preset giving experts, top_k, hidden, intermediate")(
      "tp", po::value<int>(), "vllm_moe: tensor-parallel size the benchmark ran (default: its printed tp_size)")(
      "ep", po::value<int>(), "vllm_moe: expert-parallel size (experts split, intermediate whole)")(
      "dtype", po::value<std::string>(), "bf16 or fp8 (default: the file's, else bf16)")(
      "op", po::value<std::string>(), "nsys kernels, nccl-tests without a test name: the measured op")(
      "shape", po::value<std::vector<std::string>>()->multitoken()->composing(),
      "key=value ... shape columns (e.g. m=128 n=4096 k=4096): nsys kernels; defaults for vllm_moe and NVTX")(
      "kernel", po::value<std::string>(), "nsys kernel reports: the kernels (name substring) of one op call")(
      "format", po::value<std::string>(), "the input format (positional)")(
      "files", po::value<std::vector<std::string>>(), "the input files (positional)");
  return d;
}

int positive_option(const po::variables_map& vm, const char* name) {
  const int v = vm[name].as<int>();
  if (v < 1) {
    throw std::invalid_argument(fmt::format("--{}: expected a positive number, got {}", name, v));
  }
  return v;
}

calibration::ImportOptions make_options(const po::variables_map& vm, std::ostream& err) {
  calibration::ImportOptions o;
  const auto text = [&](const char* name) { return vm.count(name) ? vm[name].as<std::string>() : std::string(); };
  o.gpu = text("gpu");
  o.model = text("model");
  o.dtype = text("dtype");
  o.op = text("op");
  o.kernel = text("kernel");
  o.gpu_id = vm.count("gpu-id") ? vm["gpu-id"].as<int>() : -1;
  o.tp = vm.count("tp") ? positive_option(vm, "tp") : 0;
  o.ep = vm.count("ep") ? positive_option(vm, "ep") : 0;
  o.log = &err;
  if (!o.model.empty()) {
    if (const std::string m = models::model_presets().unknown_message(o.model); !m.empty()) {
      throw std::invalid_argument("--model: " + m);
    }
  }
  hardware::Precision p = hardware::Precision::bf16;
  if (!o.dtype.empty() && !calibration::parse_import_dtype(o.dtype, p)) {
    throw std::invalid_argument(fmt::format("--dtype: expected bf16 or fp8, got \"{}\"", o.dtype));
  }
  calibration::MeasuredOp op = calibration::MeasuredOp::dense_gemm;
  if (!o.op.empty() && !calibration::parse_op(o.op, op)) {
    std::string valid;
    for (const calibration::OpInfo& i : calibration::measured_ops()) {
      valid += (valid.empty() ? "" : ", ") + std::string(i.name);
    }
    throw std::invalid_argument(fmt::format("--op: unknown op \"{}\"; valid ops are: {}", o.op, valid));
  }
  if (vm.count("shape")) {
    for (const std::string& kv : vm["shape"].as<std::vector<std::string>>()) {
      const std::size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) {
        throw std::invalid_argument(fmt::format("--shape: expected key=value, got \"{}\"", kv));
      }
      o.shape.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    }
  }
  return o;
}

}  // namespace

int calibrate_import_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::positional_options_description positional;
  positional.add("format", 1).add("files", -1);
  const po::variables_map vm = parse_command_line(args, import_options(), positional);
  if (vm.count("help")) {
    out << calibrate_import_help();
    return 0;
  }
  if (!vm.count("format")) {
    throw std::invalid_argument("expected FORMAT FILE...: epsim calibrate import --help lists the formats");
  }
  const std::string format = vm["format"].as<std::string>();
  const calibration::Importer* importer = calibration::find_importer(format);
  if (importer == nullptr) {
    std::string valid;
    for (const calibration::Importer& i : calibration::importers()) {
      valid += (valid.empty() ? "" : ", ") + std::string(i.name);
    }
    throw std::invalid_argument(fmt::format("unknown format \"{}\"; valid formats are: {}", format, valid));
  }
  if (!vm.count("files")) {
    throw std::invalid_argument(fmt::format("{}: expected at least one FILE to import", format));
  }
  if (!vm.count("out")) {
    throw std::invalid_argument("--out: required (the measurement table to write)");
  }
  check_output_options(vm, {"out"});
  const calibration::ImportOptions o = make_options(vm, err);
  std::vector<std::filesystem::path> files;
  for (const std::string& f : vm["files"].as<std::vector<std::string>>()) {
    files.emplace_back(f);
  }
  const calibration::MeasurementTable t = importer->run(files, o);
  const std::string path = vm["out"].as<std::string>();
  core::write_file_atomically(path, calibration::format_measurement_table(t));
  out << fmt::format("{}: {} rows from {} file(s) -> {}\n", format, t.rows.size(), files.size(), path);
  return 0;
}

std::string calibrate_import_help() {
  std::ostringstream s;
  s << "usage: epsim calibrate import FORMAT FILE... --out TABLE.csv [options]\n\nformats:\n";
  for (const calibration::Importer& i : calibration::importers()) {
    s << fmt::format("  {:<12} {}\n", i.name, i.description);
  }
  s << "\nsee docs/calibration.md (Importers) for each format's mapping\n\n";
  s << import_options();
  return s.str();
}

}  // namespace epsim::experiments
