#include "calibration/import_nccl_tests.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "sim/core/csv_lines.hpp"
#include "sim/core/error.hpp"

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
  if (size >= words.size() || time >= words.size() || wrong >= words.size()) {
    return false;
  }
  // The rows carry no '#': one word less.
  c = {size - 1, time - 1, wrong - 1, words.size() - 1};
  return true;
}

}  // namespace

MeasurementTable import_nccl_tests(std::span<const std::filesystem::path> files, const ImportOptions& o) {
  MeasurementTable t;
  for (const std::filesystem::path& path : files) {
    const std::string file = path.string();
    const std::string text = read_import_file(path);
    const std::vector<std::string_view> lines = import_lines(text);
    bool have_op = false;
    MeasuredOp op = MeasuredOp::all_reduce;
    std::string device;
    std::set<int> ranks;
    std::map<std::string, int, std::less<>> ranks_per_host;
    int single_process_gpus = 0;
    Columns cols;
    bool have_columns = false;
    const std::size_t rows_before = t.rows.size();
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const std::string where = fmt::format("{}:{}", file, i + 1);
      const std::vector<std::string_view> w = import_words(lines[i]);
      if (w.empty()) {
        continue;
      }
      if (w[0] == "#") {
        if (w.size() >= 5 && w[1] == "Collective" && w[2] == "test" && w[3] == "starting:") {
          have_op = op_of_program(w[4], op);
        } else if (w.size() >= 5 && w[1] == "nThread" && w[3] == "nGpus") {
          long long threads = 0;
          long long gpus = 0;
          if (core::parse_number(std::string(w[2]), threads) && core::parse_number(std::string(w[4]), gpus)) {
            single_process_gpus = static_cast<int>(threads * gpus);
          }
        } else if (w.size() >= 3 && w[1] == "Rank") {
          // "#  Rank R Group G Pid P on HOST device D [PCI] NAME" (older versions have no Group).
          const auto on = std::find(w.begin(), w.end(), "on");
          const auto dev = std::find(w.begin(), w.end(), "device");
          long long rank = 0;
          if (!core::parse_number(std::string(w[2]), rank) || on + 1 >= w.end() || dev == w.end()) {
            throw core::Error(fmt::format("{}: expected \"#  Rank N Group G Pid P on HOST device D ...\"", where));
          }
          if (ranks.insert(static_cast<int>(rank)).second) {
            ++ranks_per_host[std::string(*(on + 1))];
          }
          // The device name is the rest of the line after the device index and the PCI id in brackets.
          if (device.empty() && dev + 3 < w.end()) {
            const std::string_view line = lines[i];
            device = std::string(line.substr(static_cast<std::size_t>((dev + 3)->data() - line.data())));
          }
        } else if (parse_columns(w, cols)) {
          have_columns = true;
        }
        continue;
      }
      if (!have_columns) {
        continue;  // warnings and NCCL INFO lines before the table
      }
      double bytes = 0.0;
      if (!core::parse_number(std::string(w[0]), bytes)) {
        continue;  // not a data row (e.g. an NCCL INFO line inside the table)
      }
      if (w.size() <= cols.wrong) {
        throw core::Error(fmt::format("{}: expected {} columns as in the header, got {}", where, cols.count, w.size()));
      }
      double time_us = 0.0;
      if (!core::parse_number(std::string(w[cols.time]), time_us) || !(time_us > 0.0)) {
        throw core::Error(
            fmt::format("{}: out-of-place time: expected a positive number of us, got \"{}\"", where, w[cols.time]));
      }
      if (w[cols.wrong] != "0" && w[cols.wrong] != "N/A") {
        throw core::Error(
            fmt::format("{}: {} wrong results at {} bytes: nccl-tests found the collective broken, "
                        "its time is no calibration data (fix the run, or drop the row)",
                        where, w[cols.wrong], w[cols.size]));
      }
      if (!have_op) {
        op = import_op(o, file + " (nccl-tests printed no \"# Collective test starting\" line)");
        have_op = true;
      }
      Measurement m;
      m.op = op;
      m.bytes = bytes;
      m.gpus = ranks.empty() ? single_process_gpus : static_cast<int>(ranks.size());
      m.gpus_per_node = m.gpus;
      if (!ranks_per_host.empty()) {
        m.gpus_per_node = 0;
        for (const auto& [host, n] : ranks_per_host) {
          m.gpus_per_node = std::max(m.gpus_per_node, n);
        }
      }
      m.latency_us = time_us;
      m.gpu = import_gpu(o, device, where);
      m.gpu_id = o.gpu_id;
      m.line = static_cast<std::int64_t>(i + 1);
      apply_shape_options(m, o);
      validate_measurement(m, where);
      t.rows.push_back(std::move(m));
    }
    if (!o.op.empty() && have_op) {
      MeasuredOp given = MeasuredOp::all_reduce;
      if (parse_op(o.op, given) && given != op) {
        throw core::Error(fmt::format("{}: --op {} but the file measured {}", file, o.op, op_name(op)));
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
