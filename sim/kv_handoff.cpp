// SPDX-License-Identifier: Apache-2.0
#include "sim/kv_handoff.hpp"

namespace epsim::serving {

KvHandoff::KvHandoff(const core::Engine& engine, hardware::TransferNetwork& transfers,
                     std::vector<RequestState>& requests, double kv_bytes_per_token, double state_bytes_per_request)
    : engine_(engine),
      transfers_(transfers),
      requests_(requests),
      kv_bytes_per_token_(kv_bytes_per_token),
      state_bytes_per_request_(state_bytes_per_request) {}

void KvHandoff::start(int index, Side from, Side to, std::function<void()> landed) {
  const RequestState& r = requests_[static_cast<std::size_t>(index)];
  // The prompt and every token generated so far but the last, whose KV is written by the next step, and the
  // request's fixed-size state (sliding windows, linear states).
  const double bytes =
      static_cast<double>(r.spec.prompt_tokens + r.generated - 1) * kv_bytes_per_token_ + state_bytes_per_request_;
  const int src = from.gpu_offset + from.rank * from.attention_tp;
  const int dst = to.gpu_offset + to.rank * to.attention_tp;
  const core::Time started = engine_.now();
  transfers_.start(src, dst, bytes,
                   [this, index, from, to, bytes, started, landed = std::move(landed)](core::Time done) {
                     RequestState& req = requests_[static_cast<std::size_t>(index)];
                     from.scheduler->release(from.rank, req);
                     req.group = to.group;
                     req.rank = to.rank;
                     ++count_;
                     bytes_ += bytes;
                     ns_ += static_cast<double>(done - started);
                     to.scheduler->enqueue_decode(to.rank, index);
                     landed();
                   });
}

}  // namespace epsim::serving
