// SPDX-License-Identifier: Apache-2.0
// `epsim report`'s inputs and what it makes of them: a study directory (study.json, runs.csv, points.csv
// and the optional scaling / distribution / max_rate / ranking CSVs) or a run directory (summary.json,
// requests.csv, steps.csv, events.csv, gpu_layers.csv), read, built into a report and rendered as its
// page (all in memory: nothing is written but the scratch inputs). The input's first byte picks the kind;
// the rest is the files' contents, separated by lines "%%", in the order above (an empty or missing
// section: no such file).
#include <unistd.h>
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "fuzz/fuzz_input.hpp"
#include "report/html_page.hpp"
#include "report/report_builder.hpp"
#include "report/report_inputs.hpp"

namespace {

constexpr std::array<const char*, 9> k_study_files{"study.json",  "runs.csv",         "points.csv",
                                                   "scaling.csv", "distribution.csv", "max_rate.csv",
                                                   "ranking.csv", "rebalance.csv",    "break_even.csv"};
constexpr std::array<const char*, 5> k_run_files{"summary.json", "requests.csv", "steps.csv", "events.csv",
                                                 "gpu_layers.csv"};

// The scratch input directory, emptied and filled with the input's files.
template <std::size_t N>
std::filesystem::path fill(std::string_view rest, const std::array<const char*, N>& names) {
  namespace fs = std::filesystem;
  static const fs::path dir = epsim::fuzz::scratch_directory() / ("epsim_fuzz_report_" + std::to_string(::getpid()));
  static const struct Cleanup {
    ~Cleanup() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } cleanup;
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir);
  for (const char* name : names) {
    if (rest.empty()) {
      break;
    }
    const std::size_t cut = rest.find("\n%%\n");
    const std::string_view content = rest.substr(0, cut);
    if (!content.empty()) {  // an empty section: the file is absent (the optional CSVs)
      std::ofstream(dir / name, std::ios::binary).write(content.data(), static_cast<std::streamsize>(content.size()));
    }
    rest = cut == std::string_view::npos ? std::string_view() : rest.substr(cut + 4);
  }
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  epsim::fuzz::Selected in;
  if (!epsim::fuzz::select(data, size, 2, in)) {
    return 0;
  }
  try {
    const std::filesystem::path dir = in.choice == 0 ? fill(in.text(), k_study_files) : fill(in.text(), k_run_files);
    const epsim::report::ReportInputs inputs = epsim::report::load_report_inputs({dir});
    const epsim::report::Report report = epsim::report::build_report(inputs, "fuzz", "epsim fuzz");
    (void)epsim::report::html_page(report, "fuzz-figures");
  } catch (const epsim::core::Error&) {
  } catch (const nlohmann::json::exception&) {
    // A value of the wrong type in study.json / summary.json: `epsim report` turns this into one error line
    // naming its inputs (experiments/cli/report_command.cpp); the library leaves the naming to it.
  }
  return 0;
}
