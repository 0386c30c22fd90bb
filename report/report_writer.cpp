#include "report/report_writer.hpp"

#include <fmt/format.h>

#include <set>
#include <system_error>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "report/svg_export.hpp"

namespace epsim::report {

namespace fs = std::filesystem;

fs::path figures_dir_of(const fs::path& html) {
  return html.parent_path() / (html.stem().string() + "-figures");
}

WrittenReport write_report(const Report& report, const fs::path& html, const WriteOptions& options) {
  if (html.extension() != ".html") {
    throw core::Error(fmt::format("{}: the report file must end in .html", html.string()));
  }
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

  // From here on only file writes can fail; undo them if one does.
  std::vector<fs::path> written;
  const bool created_dir = !fs::exists(dir);
  try {
    if (!html.parent_path().empty()) {
      fs::create_directories(html.parent_path());
    }
    fs::create_directories(dir);
    const auto put = [&](const fs::path& p, const std::string& text) {
      core::write_file_atomically(p, text);
      written.push_back(p);
    };
    for (std::size_t i = 0; i < figures.size(); ++i) {
      const Figure& f = *figures[i];
      put(dir / (f.id + ".csv"), f.csv);
      put(dir / (f.id + ".vg.json"), f.spec.dump(1) + "\n");
      if (options.svg) {
        put(dir / (f.id + ".svg"), svgs[i]);
      }
    }
    put(html, page);
  } catch (const std::exception& e) {
    std::error_code ec;
    for (const fs::path& p : written) {
      fs::remove(p, ec);
    }
    if (created_dir) {
      fs::remove_all(dir, ec);
    }
    throw core::Error(fmt::format("writing the report {}: {}", html.string(), e.what()));
  }
  // Figures of an earlier report in the same place that this one no longer has would mislead.
  std::set<fs::path> keep(written.begin(), written.end());
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    const bool ours = name.ends_with(".svg") || name.ends_with(".csv") || name.ends_with(".vg.json");
    if (ours && keep.count(e.path()) == 0) {
      fs::remove(e.path(), ec);
    }
  }
  return {html, dir, figures.size(), svgs.size()};
}

}  // namespace epsim::report
