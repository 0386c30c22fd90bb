// SPDX-License-Identifier: Apache-2.0
#pragma once
// Produces requests one at a time (never the whole list): arrivals from an arrival process or a
// replayed request trace (request_trace.hpp), lengths from two distributions (or the trace), each
// purpose on its own random stream so changing one never shifts the other.
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/random_streams.hpp"
#include "workloads/arrival_process.hpp"
#include "workloads/length_distribution.hpp"
#include "workloads/request.hpp"
#include "workloads/request_trace.hpp"

namespace epsim::workloads {

struct WorkloadConfig {
  ArrivalConfig arrivals;
  std::int64_t num_requests = 0;  ///< stop after this many requests (0 = no count limit)
  double duration_s = 0.0;        ///< stop generating arrivals after this time (0 = no time limit)
  LengthDistribution prompt;
  LengthDistribution output;
};

WorkloadConfig parse_workload(core::ParamTable& t);

class RequestGenerator {
 public:
  RequestGenerator(const WorkloadConfig& cfg, const core::RandomStreams& streams);
  ~RequestGenerator();
  /// The next request, or nullopt when the count or duration limit (or the replay file) is exhausted.
  /// Throws core::Error naming the replay file and line on a malformed row, or the file when it has no row.
  std::optional<RequestSpec> next();
  /// The request that follows `done` in its session (a conversation's next turn, an agent's next call),
  /// arriving after `done` finished at `finish_ns`; nullopt when the session ended, `done` belongs to none,
  /// or the count or duration limit is reached. `done` finished with every output token (a request the
  /// engine rejected ends its session instead).
  std::optional<RequestSpec> follow_up(const RequestSpec& done, core::Time finish_ns);
  /// The replayed file's rows skipped so far (a format's failed rows, another model's), and what they were.
  std::int64_t replay_skipped_rows() const { return replay_ ? replay_->skipped_rows() : 0; }
  std::string replay_skipped_what() const { return replay_ ? replay_->skipped_what() : std::string(); }

 private:
  std::optional<RequestSpec> next_replayed();

  WorkloadConfig cfg_;
  ArrivalProcess arrivals_;
  core::Rng length_rng_;
  std::int64_t issued_ = 0;
  std::unique_ptr<RequestTrace> replay_;  // the replayed file, in its format
};

}  // namespace epsim::workloads
