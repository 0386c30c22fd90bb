#pragma once
// The sweep's journal: one JSON line per finished run, appended with a single write() as the run ends,
// so a killed sweep (even by SIGKILL) loses no finished run. Each writer (a process, or an MPI rank)
// appends to its own file DIR/journal/<writer>.jsonl; loading reads them all and skips any line that
// does not parse (the tail a killed writer left). Records are found by key (study_plan.hpp), so a
// changed study reuses exactly the runs whose inputs did not change.
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>

#include "experiments/assembly/run_metrics.hpp"

namespace epsim::experiments {

struct RunRecord {
  std::string key;
  std::int64_t run = 0;  ///< index in the study that wrote it (informative; matching is by key)
  double wall_s = 0.0;
  std::int64_t routing_loops = 0;
  std::string error;  ///< empty when the run succeeded
  NamedValues metrics;
};

std::string record_line(const RunRecord& r);  ///< one JSON line, newline-terminated
/// Parses one line; false when it is not a complete record.
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
  /// Every complete, successful record of every writer's file under DIR/journal, by key.
  static std::map<std::string, RunRecord> load(const std::filesystem::path& dir);

 private:
  std::mutex mutex_;
  int fd_ = -1;
  std::filesystem::path path_;
};

}  // namespace epsim::experiments
