// SPDX-License-Identifier: Apache-2.0
#include "calibration/import_nsys.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/csv_lines.hpp"
#include "core/error.hpp"

namespace epsim::calibration {
namespace {

enum class Report : std::uint8_t { none, kern_sum, gpu_trace, nvtx_proj };

struct Column {
  std::size_t index = 0;
  double to_us = 1.0;  // factor from the column's unit to microseconds
  bool found = false;
};

// The column whose name is `base` followed by nothing or a unit in parentheses.
Column find_column(const std::vector<std::string>& header, std::string_view base) {
  for (std::size_t i = 0; i < header.size(); ++i) {
    const std::string_view h = header[i];
    if (!h.starts_with(base)) {
      continue;
    }
    const std::string_view rest = h.substr(base.size());
    const struct {
      std::string_view unit;
      double to_us;
    } k_units[] = {{"", 1.0}, {" (ns)", 1e-3}, {" (us)", 1.0}, {" (ms)", 1e3}, {" (s)", 1e6}};
    for (const auto& u : k_units) {
      if (rest == u.unit) {
        return {i, u.to_us, true};
      }
    }
  }
  return {};
}

Report report_of(const std::vector<std::string>& header) {
  const auto has = [&](std::string_view c) { return find_column(header, c).found; };
  if (has("Projected Duration") && has("Name")) {
    return Report::nvtx_proj;
  }
  if (has("Instances") && has("Name") && (has("Med") || has("Avg"))) {
    return Report::kern_sum;
  }
  if (has("Start") && has("Duration") && has("Name")) {
    return Report::gpu_trace;
  }
  return Report::none;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

double time_cell(const std::vector<std::string>& cells, const Column& c, const std::string& where) {
  double v = 0.0;
  if (!core::parse_number(cells[c.index], v) || v < 0.0) {
    throw core::Error(
        fmt::format("{}: column {}: expected a time >= 0, got \"{}\"", where, c.index + 1, cells[c.index]));
  }
  return v * c.to_us;
}

// One picked kernel name: how often it ran and its typical duration (us).
struct KernelStats {
  double instances = 0.0;
  double typical_us = 0.0;
  std::vector<double> traced_us;  // cuda_gpu_trace: every launch
};

// A range name "... epsim:OP key=value ..." as a row (gpu and latency left to the caller); false if the
// name is not epsim's.
bool range_row(std::string_view name, const ImportOptions& o, Measurement& m, const std::string& where) {
  const std::size_t at = name.find("epsim:");
  if (at == std::string_view::npos) {
    return false;
  }
  const std::vector<std::string_view> words = import_words(name.substr(at + 6));
  if (words.empty() || !parse_op(words[0], m.op)) {
    throw core::Error(
        fmt::format("{}: NVTX range \"{}\": expected \"epsim:OP key=value ...\" with a measured op", where, name));
  }
  apply_shape_options(m, o);  // defaults the range may override
  for (std::size_t i = 1; i < words.size(); ++i) {
    const std::size_t eq = words[i].find('=');
    if (eq == std::string_view::npos) {
      throw core::Error(fmt::format("{}: NVTX range \"{}\": expected key=value, got \"{}\"", where, name, words[i]));
    }
    set_shape_value(m, words[i].substr(0, eq), words[i].substr(eq + 1), where);
  }
  return true;
}

struct FileState {
  std::map<std::string, std::vector<double>, std::less<>> ranges;  // epsim range name -> projected durations
  std::map<std::string, std::int64_t, std::less<>> range_line;     // its first line
  std::map<std::string, KernelStats, std::less<>> kernels;         // picked kernel name -> stats
  std::vector<std::pair<std::string, long>> skipped;
  std::string device;  // cuda_gpu_trace's Device column, e.g. "NVIDIA H100 80GB HBM3 (0)"
  std::int64_t first_kernel_line = 0;
};

void count_skip(FileState& s, const std::string& name) {
  const auto it = std::find_if(s.skipped.begin(), s.skipped.end(), [&](const auto& p) { return p.first == name; });
  if (it == s.skipped.end()) {
    s.skipped.emplace_back(name, 1);
  } else {
    ++it->second;
  }
}

void read_row(Report r, const std::vector<std::string>& header, const std::vector<std::string>& cells,
              const ImportOptions& o, FileState& s, const std::string& where, std::int64_t line) {
  const std::string& name = cells[find_column(header, "Name").index];
  if (r == Report::nvtx_proj) {
    Measurement probe;
    if (!range_row(name, o, probe, where)) {
      count_skip(s, name);
      return;
    }
    s.ranges[name].push_back(time_cell(cells, find_column(header, "Projected Duration"), where));
    s.range_line.emplace(name, line);
    return;
  }
  if (o.kernel.empty() || name.find(o.kernel) == std::string::npos) {
    count_skip(s, name);
    return;
  }
  if (s.first_kernel_line == 0) {
    s.first_kernel_line = line;
  }
  KernelStats& k = s.kernels[name];
  if (r == Report::gpu_trace) {
    k.traced_us.push_back(time_cell(cells, find_column(header, "Duration"), where));
    k.instances += 1.0;
    if (const Column d = find_column(header, "Device"); d.found && s.device.empty()) {
      s.device = cells[d.index];
    }
    return;
  }
  const Column med = find_column(header, "Med");
  k.typical_us = time_cell(cells, med.found ? med : find_column(header, "Avg"), where);
  if (!core::parse_number(cells[find_column(header, "Instances").index], k.instances) || !(k.instances > 0.0)) {
    throw core::Error(fmt::format("{}: Instances: expected a positive count", where));
  }
}

// "NVIDIA H100 80GB HBM3 (0)" -> name and device index.
void split_device(const std::string& device, std::string& name, int& id) {
  name = device;
  const std::size_t open = device.rfind(" (");
  long long v = 0;
  if (open != std::string::npos && device.back() == ')' &&
      core::parse_number(device.substr(open + 2, device.size() - open - 3), v)) {
    name = device.substr(0, open);
    id = static_cast<int>(v);
  }
}

void finish_file(const std::string& file, const ImportOptions& o, FileState& s, MeasurementTable& t) {
  for (const auto& [name, durations] : s.ranges) {
    const std::int64_t line = s.range_line[name];
    const std::string where = fmt::format("{}:{}", file, line);
    Measurement m;
    range_row(name, o, m, where);
    m.latency_us = median(durations);
    m.gpu = import_gpu(o, "", where);
    m.gpu_id = o.gpu_id;
    m.line = line;
    validate_measurement(m, where);
    t.rows.push_back(std::move(m));
  }
  if (!s.kernels.empty()) {
    const std::string where = fmt::format("{}:{}", file, s.first_kernel_line);
    Measurement m;
    m.op = import_op(o, file);
    apply_shape_options(m, o);
    double calls = 0.0;
    for (auto& [name, k] : s.kernels) {
      if (!k.traced_us.empty()) {
        k.typical_us = median(k.traced_us);
      }
      calls = calls == 0.0 ? k.instances : std::min(calls, k.instances);
    }
    for (const auto& [name, k] : s.kernels) {
      m.latency_us += k.typical_us * k.instances / calls;
    }
    std::string device;
    int id = -1;
    split_device(s.device, device, id);
    m.gpu = import_gpu(o, device, where);
    m.gpu_id = o.gpu_id >= 0 ? o.gpu_id : id;
    m.line = s.first_kernel_line;
    validate_measurement(m, where + " (the kernels --kernel picked)");
    t.rows.push_back(std::move(m));
  }
}

}  // namespace

MeasurementTable import_nsys(std::span<const std::filesystem::path> files, const ImportOptions& o) {
  MeasurementTable t;
  for (const std::filesystem::path& path : files) {
    const std::string file = path.string();
    const std::string text = read_import_file(path);
    const std::vector<std::string_view> lines = import_lines(text);
    FileState s;
    Report report = Report::none;
    bool any_report = false;
    std::vector<std::string> header;
    std::vector<std::string> cells;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const std::string where = fmt::format("{}:{}", file, i + 1);
      if (lines[i].empty()) {
        report = Report::none;  // a blank line ends a report (nsys separates several with one)
        continue;
      }
      // Lines nsys prints around its reports ("Processing [...] with [...]...") have no quoted cells.
      if (!core::split_csv_quoted(lines[i], cells)) {
        throw core::Error(where + ": a quoted cell is not closed");
      }
      if (report == Report::none) {
        report = report_of(cells);
        if (report != Report::none) {
          header = cells;
          any_report = true;
          if (report != Report::nvtx_proj && o.kernel.empty()) {
            throw core::Error(where +
                              ": a kernel report has no shapes: give --kernel SUBSTRING (the kernels of "
                              "one op call), --op OP and --shape key=value ...");
          }
        }
        continue;
      }
      if (cells.size() != header.size()) {
        throw core::Error(
            fmt::format("{}: expected {} cells as in the header, got {}", where, header.size(), cells.size()));
      }
      read_row(report, header, cells, o, s, where, static_cast<std::int64_t>(i + 1));
    }
    if (!any_report) {
      throw core::Error(file +
                        ": no nsys stats report found: expected the CSV of cuda_gpu_kern_sum, "
                        "cuda_gpu_trace or nvtx_gpu_proj_trace (nsys stats --format csv)");
    }
    const std::size_t before = t.rows.size();
    finish_file(file, o, s, t);
    log_skipped(o, file, s.skipped);
    if (t.rows.size() == before) {
      throw core::Error(file + (o.kernel.empty() ? std::string(": no NVTX range named \"epsim:OP key=value ...\"")
                                                 : ": no kernel name contains \"" + o.kernel + "\""));
    }
  }
  return t;
}

}  // namespace epsim::calibration
