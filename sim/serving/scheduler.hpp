#pragma once
// Continuous batching for one EP group with DP attention: every GPU (rank) owns its requests, FCFS.
// Each step a rank spends its token budget on, in order: one token for each running decode, the next
// chunk of each running partially-prefilled request (chunked prefill), then new admissions while the
// running-request limit allows.
#include <deque>
#include <vector>

#include "sim/core/time.hpp"
#include "sim/serving/batch.hpp"
#include "sim/serving/observer.hpp"
#include "sim/serving/request_state.hpp"
#include "sim/serving/serving_config.hpp"

namespace epsim::serving {

class Scheduler {
 public:
  Scheduler(int ranks, SchedulerConfig cfg);

  int ranks() const { return static_cast<int>(ranks_.size()); }
  /// The rank with the fewest outstanding (waiting + running) requests; ties go to the lowest rank.
  int least_loaded_rank() const;
  void enqueue(int rank, int request);
  /// Fills `out` with the next step's work; returns false if there is none.
  bool form_batch(const std::vector<RequestState>& requests, Batch& out);
  /// Applies a finished step at time `now`: advances requests, emits tokens, retires finished ones.
  void complete(const Batch& batch, std::vector<RequestState>& requests, core::Time now,
                std::span<Observer* const> observers);
  bool idle() const;

 private:
  struct Rank {
    std::deque<int> waiting;
    std::vector<int> running;
  };
  SchedulerConfig cfg_;
  std::vector<Rank> ranks_;
};

}  // namespace epsim::serving
