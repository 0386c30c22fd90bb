// SPDX-License-Identifier: Apache-2.0
#include "calibration/import_nccl_tests.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <map>
#include <set>

#include "core/csv_lines.hpp"
#include "core/error.hpp"

namespace epsim::calibration {
namespace {

// nccl-tests' binaries and the collective each measures.
bool op_of_program(std::string_view program, MeasuredOp& op) {
  const struct {
    std::string_view name;
    MeasuredOp op;
  } k_programs[] = {{"all_reduce_perf", MeasuredOp::all_reduce},
                    {"alltoall_perf", MeasuredOp::all_to_all},
                    {"sendrecv_perf", MeasuredOp::send_recv}};
  for (const auto& p : k_programs) {
    if (program.find(p.name) != std::string_view::npos) {
      op = p.op;
      return true;
    }
  }
  return false;
}

// The header's column names ("size", "count", ..., "time", "algbw", "busbw", "#wrong", ...), which the
// data rows follow word for word.
struct Columns {
  std::size_t size = 0;
  std::size_t time = 0;   // the out-of-place time: the first "time" (or "cputime" with -C)
  std::size_t wrong = 0;  // the out-of-place #wrong
  std::size_t count = 0;  // words in the header
};

bool parse_columns(const std::vector<std::string_view>& words, Columns& c) {
  // words[0] is the '#'; the unit line "#  (B) (elements) ..." has no "size".
  const auto find = [&](std::string_view a, std::string_view b) {
    const auto it = std::find_if(words.begin(), words.end(), [&](std::string_view w) { return w == a || w == b; });
    return static_cast<std::size_t>(it - words.begin());
  };
  const std::size_t size = find("size", "size");
  const std::size_t time = find("time", "cputime");
  const std::size_t wrong = find("#wrong", "#wrong");
  // Index 0 is the comment mark itself (a line "#wrong ..." names no column).
  if (size == 0 || time == 0 || wrong == 0 || size >= words.size() || time >= words.size() || wrong >= words.size()) {
    return false;
  }
  // The rows carry no '#': one word less.
  c = {size - 1, time - 1, wrong - 1, words.size() - 1};
  return true;
}

// What one file's comment lines said so far: the collective, the device, the ranks and their hosts,
// the table's columns.
struct FileState {
  bool have_op = false;
  MeasuredOp op = MeasuredOp::all_reduce;
  std::string device;
  std::set<int> ranks;
  std::map<std::string, int, std::less<>> ranks_per_host;
  int single_process_gpus = 0;
  Columns cols;
  bool have_columns = false;

  int gpus() const { return ranks.empty() ? single_process_gpus : static_cast<int>(ranks.size()); }
  int gpus_per_node() const {
    int most = 0;
    for (const auto& [host, n] : ranks_per_host) {
      most = std::max(most, n);
    }
    return ranks_per_host.empty() ? gpus() : most;
  }
};

// A "#" line: the test's name, its thread and GPU counts, a rank's host and device, or the column header.
void read_comment(FileState& f, const std::vector<std::string_view>& w, std::string_view line,
                  const std::string& where) {
  if (w.size() >= 5 && w[1] == "Collective" && w[2] == "test" && w[3] == "starting:") {
    f.have_op = op_of_program(w[4], f.op);
  } else if (w.size() >= 5 && w[1] == "nThread" && w[3] == "nGpus") {
    long long threads = 0;
    long long gpus = 0;
    // Counts beyond any machine are left unread rather than multiplied past int.
    if (core::parse_number(std::string(w[2]), threads) && core::parse_number(std::string(w[4]), gpus) && threads > 0 &&
        gpus > 0 && threads <= 1 << 15 && gpus <= 1 << 15) {
      f.single_process_gpus = static_cast<int>(threads * gpus);
    }
  } else if (w.size() >= 3 && w[1] == "Rank") {
    // "#  Rank R Group G Pid P on HOST device D [PCI] NAME" (older versions have no Group). Positions are
    // indices: an iterator moved past the words' end is undefined even before it is compared.
    const auto index_of = [&](std::string_view word) {
      return static_cast<std::size_t>(std::find(w.begin(), w.end(), word) - w.begin());
    };
    const std::size_t on = index_of("on");
    const std::size_t dev = index_of("device");
    long long rank = 0;
    if (!core::parse_number(std::string(w[2]), rank) || rank < 0 || rank > INT_MAX || on + 1 >= w.size() ||
        dev >= w.size()) {
      throw core::Error(fmt::format("{}: expected \"#  Rank N Group G Pid P on HOST device D ...\"", where));
    }
    if (f.ranks.insert(static_cast<int>(rank)).second) {
      ++f.ranks_per_host[std::string(w[on + 1])];
    }
    // The device name is the rest of the line after the device index and the PCI id in brackets.
    if (f.device.empty() && dev + 3 < w.size()) {
      f.device = std::string(line.substr(static_cast<std::size_t>(w[dev + 3].data() - line.data())));
    }
  } else if (parse_columns(w, f.cols)) {
    f.have_columns = true;
  }
}

// A data row (its first word a size) as a measurement.
Measurement data_row(FileState& f, const std::vector<std::string_view>& w, double bytes, const ImportOptions& o,
                     const std::string& file, const std::string& where) {
  if (w.size() <= std::max({f.cols.size, f.cols.time, f.cols.wrong})) {
    throw core::Error(fmt::format("{}: expected {} columns as in the header, got {}", where, f.cols.count, w.size()));
  }
  double time_us = 0.0;
  if (!core::parse_number(std::string(w[f.cols.time]), time_us) || !(time_us > 0.0)) {
    throw core::Error(
        fmt::format("{}: out-of-place time: expected a positive number of us, got \"{}\"", where, w[f.cols.time]));
  }
  if (w[f.cols.wrong] != "0" && w[f.cols.wrong] != "N/A") {
    throw core::Error(
        fmt::format("{}: {} wrong results at {} bytes: nccl-tests found the collective broken, "
                    "its time is no calibration data (fix the run, or drop the row)",
                    where, w[f.cols.wrong], w[f.cols.size]));
  }
  if (!f.have_op) {
    f.op = import_op(o, file + " (nccl-tests printed no \"# Collective test starting\" line)");
    f.have_op = true;
  }
  Measurement m;
  m.op = f.op;
  m.bytes = bytes;
  m.gpus = f.gpus();
  m.gpus_per_node = f.gpus_per_node();
  m.latency_us = time_us;
  m.gpu = import_gpu(o, f.device, where);
  m.gpu_id = o.gpu_id;
  apply_shape_options(m, o);
  validate_measurement(m, where);
  return m;
}

}  // namespace

MeasurementTable import_nccl_tests(std::span<const std::filesystem::path> files, const ImportOptions& o) {
  MeasurementTable t;
  for (const std::filesystem::path& path : files) {
    const std::string file = path.string();
    const std::string text = read_import_file(path);
    const std::vector<std::string_view> lines = import_lines(text);
    FileState f;
    const std::size_t rows_before = t.rows.size();
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const std::string where = fmt::format("{}:{}", file, i + 1);
      const std::vector<std::string_view> w = import_words(lines[i]);
      if (w.empty()) {
        continue;
      }
      if (w[0] == "#") {
        read_comment(f, w, lines[i], where);
        continue;
      }
      double bytes = 0.0;
      // Before the table: warnings and NCCL INFO lines; inside it, a line that is no size is not a row.
      if (!f.have_columns || !core::parse_number(std::string(w[0]), bytes)) {
        continue;
      }
      Measurement m = data_row(f, w, bytes, o, file, where);
      m.line = static_cast<std::int64_t>(i + 1);
      t.rows.push_back(std::move(m));
    }
    if (!o.op.empty() && f.have_op) {
      MeasuredOp given = MeasuredOp::all_reduce;
      if (parse_op(o.op, given) && given != f.op) {
        throw core::Error(fmt::format("{}: --op {} but the file measured {}", file, o.op, op_name(f.op)));
      }
    }
    if (t.rows.size() == rows_before) {
      throw core::Error(file +
                        ": no data rows: expected nccl-tests output (a \"# size count type redop root time "
                        "algbw busbw #wrong ...\" header and rows under it)");
    }
  }
  return t;
}

}  // namespace epsim::calibration
