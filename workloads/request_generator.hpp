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
#include "workloads/session_config.hpp"
#include "workloads/shared_prefix.hpp"

namespace epsim::workloads {

struct WorkloadConfig {
  ArrivalConfig arrivals;
  std::int64_t num_requests = 0;  ///< stop after this many requests (0 = no count limit)
  double duration_s = 0.0;        ///< stop generating arrivals after this time (0 = no time limit)
  LengthDistribution prompt;
  LengthDistribution output;
  SharedPrefixConfig shared_prefix;  ///< [workload.shared_prefix]: off unless prompts > 0
  SessionConfig sessions;            ///< [workload.sessions]: off unless kind is set
};

WorkloadConfig parse_workload(core::ParamTable& t);

class SessionSource;

/// With sessions, each arrival of the arrival process starts a session (rate_rps is sessions per
/// second) and num_requests and duration_s count every turn: no turn is made past either.
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
  /// `r`'s session ends without it finishing (the engine rejected it).
  void end_session(const RequestSpec& r);
  /// Whether a session may still make a turn: one whose latest turn has not been asked for its
  /// follow-up (or ended) yet. With none, next() returning nullopt means no request arrives any more.
  bool sessions_open() const { return open_sessions_ > 0; }

 private:
  std::optional<RequestSpec> next_replayed();
  // Gives a new request its shared system prompt and opens its session.
  void add_content(RequestSpec& r);
  bool at_count_limit() const;

  WorkloadConfig cfg_;
  ArrivalProcess arrivals_;
  core::Rng length_rng_;
  std::int64_t issued_ = 0;
  std::unique_ptr<RequestTrace> replay_;  // the replayed file, in its format
  std::optional<SharedPrefixes> prefixes_;
  core::Rng prefix_rng_;
  std::unique_ptr<SessionSource> sessions_;
  std::int64_t open_sessions_ = 0;
};

}  // namespace epsim::workloads
