// SPDX-License-Identifier: Apache-2.0
#pragma once
// Disaggregated serving's hand-off: when a prompt is prefilled in the prefill pool, its KV cache moves
// to a rank of the decode pool as a timed transfer over the network (sharing links with every other
// transfer); the request then leaves the prefill rank and queues for decoding.
#include <functional>
#include <vector>

#include "core/event_queue.hpp"
#include "hardware/transfer_network.hpp"
#include "sim/request_state.hpp"
#include "sim/scheduler.hpp"

namespace epsim::serving {

class KvHandoff {
 public:
  /// `requests`: the simulation's requests (indexed, may grow meanwhile); `kv_bytes_per_token`: moved per
  /// context token (all layers).
  KvHandoff(const core::Engine& engine, hardware::TransferNetwork& transfers, std::vector<RequestState>& requests,
            double kv_bytes_per_token, double state_bytes_per_request = 0.0);

  /// One side of a hand-off: an EP group's index, first GPU and scheduler, the rank, and the GPUs per
  /// rank in its pool (a rank's cache leaves from and lands on its first GPU).
  struct Side {
    int group = 0;
    int gpu_offset = 0;
    Scheduler* scheduler = nullptr;
    int rank = 0;
    int attention_tp = 1;
  };
  /// Moves request `index`'s KV cache from `from` to `to`; when it lands the request is released at
  /// `from`, queued for decoding at `to`, and `landed` runs.
  void start(int index, Side from, Side to, std::function<void()> landed);

  std::int64_t transfers() const { return count_; }
  double bytes() const { return bytes_; }
  /// Mean duration of the hand-offs that landed, ms.
  double mean_ms() const { return count_ > 0 ? ns_ / static_cast<double>(count_) / 1e6 : 0.0; }

 private:
  const core::Engine& engine_;
  hardware::TransferNetwork& transfers_;
  std::vector<RequestState>& requests_;
  double kv_bytes_per_token_;
  double state_bytes_per_request_;
  std::int64_t count_ = 0;
  double bytes_ = 0.0;
  double ns_ = 0.0;
};

}  // namespace epsim::serving
