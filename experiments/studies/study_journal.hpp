// SPDX-License-Identifier: Apache-2.0
#pragma once
// The sweep's journal: one JSON line per finished run, appended with a single write() as the run ends,
// so a killed sweep (even by SIGKILL) loses no finished run. Each writer (a process, or an MPI rank)
// appends to its own file DIR/journal/<writer>.jsonl, flushed to disk with each record. Loading reads them
// all and skips, with a warning, any line that is not a whole record (a damaged line never blocks a
// resume; its run just runs again); a writer opening its file sets aside the torn last line a killed
// writer left (to <writer>.jsonl.torn). Records are found by key (study_plan.hpp: a hash of the run's
// whole config), so a changed study reuses exactly the runs whose inputs did not change.
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "experiments/assembly/run_metrics.hpp"

namespace epsim::experiments {

struct RunRecord {
  std::string key;
  std::int64_t run = 0;  ///< index in the study that wrote it (informative; matching is by key)
  double wall_s = 0.0;
  double cpu_s = 0.0;  ///< the run's CPU time (0 in records written before it was kept)
  std::int64_t routing_loops = 0;
  std::string error;  ///< empty when the run succeeded
  NamedValues metrics;
};

std::string record_line(const RunRecord& r);  ///< one JSON line, newline-terminated
/// The longest line a record may have (a run's metrics take a few KiB).
inline constexpr std::size_t k_max_record_bytes = std::size_t{1} << 20;
/// Parses one line; false when it is not a complete record (bad JSON, a field of the wrong type, nested
/// deeper than a record, longer than k_max_record_bytes).
bool parse_record_line(const std::string& line, RunRecord& out);

class Journal {
 public:
  /// Opens DIR/journal/<writer>.jsonl for appending (created with its folder when absent).
  Journal(const std::filesystem::path& dir, const std::string& writer);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;
  /// Appends one record (thread-safe).
  void append(const RunRecord& r);
  /// Every complete, successful record of every writer's file under DIR/journal, by key; one warning per
  /// file with lines that are not records goes to `warnings` (when given).
  static std::map<std::string, RunRecord> load(const std::filesystem::path& dir,
                                               std::vector<std::string>* warnings = nullptr);

 private:
  void set_aside_torn_tail();
  std::mutex mutex_;
  int fd_ = -1;
  std::filesystem::path path_;
};

}  // namespace epsim::experiments
