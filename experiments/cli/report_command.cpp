// SPDX-License-Identifier: Apache-2.0
#include "experiments/cli/report_command.hpp"

#include <fmt/format.h>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "core/error.hpp"

#include "experiments/cli/command_line.hpp"
#include "report/report_builder.hpp"
#include "report/report_inputs.hpp"
#include "report/report_writer.hpp"
#include "report/svg_export.hpp"
#include "version.hpp"

namespace po = boost::program_options;

namespace epsim::experiments {
namespace {

std::string generator() {
  return fmt::format("epsim {}", k_version);
}

}  // namespace

int report_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& /*err*/) {
  po::options_description d("options");
  d.add_options()("help,h", "show this help")(
      "dirs", po::value<std::vector<std::string>>(),
      "study directories (epsim sweep --out) and run directories (epsim run --out)")(
      "out", po::value<std::string>(), "the report file, REPORT.html (figures go to REPORT-figures/ beside it)")(
      "title", po::value<std::string>(), "the report's title (default: the inputs' names)")(
      "no-svg", "skip each figure's SVG (they need Node.js); the page, CSVs and Vega specs are still written");
  po::positional_options_description pos;
  pos.add("dirs", -1);
  const po::variables_map vm = parse_command_line(args, d, pos);
  if (vm.count("help")) {
    out << "usage: epsim report DIR... --out REPORT.html [--title TEXT] [--no-svg]\n\n"
           "DIR: a study directory (epsim sweep) or a run directory (epsim run); several may be mixed.\n\n"
        << d;
    return 0;
  }
  if (!vm.count("dirs")) {
    throw std::invalid_argument("report needs at least one study or run directory");
  }
  if (!vm.count("out")) {
    throw std::invalid_argument("report needs --out REPORT.html");
  }
  report::check_report_target(vm["out"].as<std::string>());  // before the inputs are read and drawn
  const auto dirs_text = vm["dirs"].as<std::vector<std::string>>();
  const std::vector<std::filesystem::path> dirs(dirs_text.begin(), dirs_text.end());
  const report::ReportInputs inputs = report::load_report_inputs(dirs);
  std::string title;
  if (vm.count("title")) {
    title = vm["title"].as<std::string>();
  } else {
    for (const auto& s : inputs.studies) {
      title += (title.empty() ? "" : ", ") + s.label;
    }
    for (const auto& r : inputs.runs) {
      title += (title.empty() ? "" : ", ") + r.label;
    }
    title = "epsim report: " + title;
  }
  // The inputs' JSON is read as the figures need it: a value of the wrong type names the inputs.
  const report::Report rep = [&] {
    try {
      return report::build_report(inputs, title, generator());
    } catch (const nlohmann::json::exception& e) {
      throw core::Error(fmt::format("{}: a value in study.json or summary.json has the wrong type: {}",
                                    fmt::join(dirs_text, ", "), e.what()));
    }
  }();
  const report::WrittenReport w =
      report::write_report(rep, vm["out"].as<std::string>(), {vm.count("no-svg") == 0, report::node_program()});
  out << fmt::format("report: {} ({} figures; SVG, CSV and Vega spec of each in {}/)\n", w.html.string(), w.figures,
                     w.figures_dir.string());
  return 0;
}

std::filesystem::path write_run_report(const std::filesystem::path& run_dir, bool svg,
                                       const std::filesystem::path& results_dir) {
  const std::filesystem::path shown = results_dir.empty() ? run_dir : results_dir;
  const std::string label = shown.filename().string();
  report::ReportInputs inputs;
  inputs.runs.push_back(report::load_run(run_dir, label));
  // Everything is read: from here on the run is named where its reader finds it, not where it was staged.
  inputs.runs.back().dir = shown;
  const report::Report rep = report::build_report(inputs, fmt::format("epsim run: {}", label), generator());
  return report::write_report(rep, run_dir / "report.html", {svg, report::node_program()}).html;
}

}  // namespace epsim::experiments
