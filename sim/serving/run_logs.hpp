#pragma once
// Optional per-step and per-layer outputs, as observers that build their file's text in memory:
// steps.csv (every step), layers.csv (every layer of every `every`-th step of each group, one row per
// GPU) and a Chrome-trace timeline (viewable in Perfetto: one process per EP group, one thread per GPU,
// a slice per layer phase: local work, barrier wait, dispatch, experts, wait, combine).
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "sim/serving/observer.hpp"

namespace epsim::serving {

class StepLog final : public Observer {
 public:
  StepLog();
  void on_step(const StepRecord& step) override;
  const std::string& csv() const { return csv_; }

 private:
  std::string csv_;
};

/// tokens.csv: every emitted token of every request (request, token index from 1, time).
class TokenLog final : public Observer {
 public:
  TokenLog();
  void on_first_token(const RequestState& r) override;
  void on_token(const RequestState& r, core::Time gap_ns) override;
  const std::string& csv() const { return csv_; }

 private:
  std::string csv_;
};

class LayerLog final : public Observer {
 public:
  explicit LayerLog(std::int64_t every);
  void on_layer(const LayerRecord& layer) override;
  const std::string& csv() const { return csv_; }

 private:
  std::int64_t every_;
  std::string csv_;
};

class TimelineLog final : public Observer {
 public:
  /// Records the first `max_steps` steps of each group.
  explicit TimelineLog(std::int64_t max_steps);
  void on_layer(const LayerRecord& layer) override;
  /// The Chrome-trace JSON document.
  std::string json() const;

 private:
  void slice(const char* name, int pid, int tid, std::int64_t begin_ns, std::int64_t end_ns, int layer);
  std::int64_t max_steps_;
  std::string events_;
  /// Per (group, GPU) track, where its last slice ended: slices never start before it.
  std::map<std::pair<int, int>, std::int64_t> track_end_ns_;
  int max_gpus_ = 0;
  int max_group_ = 0;
};

}  // namespace epsim::serving
