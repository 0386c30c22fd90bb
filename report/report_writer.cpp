// SPDX-License-Identifier: Apache-2.0
#include "report/report_writer.hpp"

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/file_kind.hpp"
#include "core/signal_cleanup.hpp"
#include "core/staged_directory.hpp"
#include "report/svg_export.hpp"

namespace epsim::report {

namespace fs = std::filesystem;

fs::path figures_dir_of(const fs::path& html) {
  return html.parent_path() / (html.stem().string() + "-figures");
}

void check_report_target(const fs::path& html) {
  core::check_output_file(html);
  const fs::path dir = figures_dir_of(html);
  if (fs::is_symlink(dir)) {
    throw core::Error(
        fmt::format("{}: the report's figures folder is a symbolic link; epsim writes it only as a "
                    "real folder, so remove the link or give another --out",
                    dir.string()));
  }
  if (core::entry_exists(dir) && !fs::is_directory(dir)) {
    throw core::Error(fmt::format("{}: exists and is not a folder (the report's figures go there)", dir.string()));
  }
}

WrittenReport write_report(const Report& report, const fs::path& html, const WriteOptions& options) {
  if (html.extension() != ".html") {
    throw core::Error(fmt::format("{}: the report file must end in .html", html.string()));
  }
  check_report_target(html);  // before the figures are drawn: a bad --out fails at once
  std::vector<const Figure*> figures;
  for (const ReportSection& s : report.sections) {
    for (const Figure& f : s.figures) {
      figures.push_back(&f);
    }
  }
  std::vector<std::string> svgs;
  if (options.svg) {
    std::vector<nlohmann::json> specs;
    specs.reserve(figures.size());
    for (const Figure* f : figures) {
      specs.push_back(f->spec);
    }
    svgs = render_svgs(specs, options.node);
  }
  const fs::path dir = figures_dir_of(html);
  const std::string page = html_page(report, dir.filename().string());

  // The figures folder is written beside its place and swapped in whole, keeping whatever in it epsim did
  // not write (its manifest says what it did); the page goes in right after. SIGINT / SIGTERM wait until
  // all is in place (a few files' writes), so an interrupted report leaves the old one or the new one.
  const core::SignalBlock block;
  try {
    if (!html.parent_path().empty()) {
      fs::create_directories(html.parent_path());
    }
    core::PreparedFile page_file(html, page);
    core::StagedDirectory staged(dir, {}, core::StagedDirectory::Existing::carry_foreign);
    for (std::size_t i = 0; i < figures.size(); ++i) {
      const Figure& f = *figures[i];
      core::write_file_atomically(staged.path() / (f.id + ".csv"), f.csv);
      core::write_file_atomically(staged.path() / (f.id + ".vg.json"), f.spec.dump(1) + "\n");
      if (options.svg) {
        core::write_file_atomically(staged.path() / (f.id + ".svg"), svgs[i]);
      }
    }
    staged.commit();
    page_file.install();
  } catch (const std::exception& e) {
    throw core::Error(fmt::format("writing the report {}: {}", html.string(), e.what()));
  }
  return {html, dir, figures.size(), svgs.size()};
}

}  // namespace epsim::report
