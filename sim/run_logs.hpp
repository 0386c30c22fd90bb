// SPDX-License-Identifier: Apache-2.0
#pragma once
// Optional per-step and per-layer outputs, as observers that build their file's text as the run goes
// (steps, tokens and layers past 8 MiB in an anonymous temporary file, core::SpillText):
// steps.csv (every step), layers.csv (every layer of every `every`-th step of each group, one row per
// GPU), events.csv (migrations, rebalances, preemptions), gpu_layers.csv (the per-GPU x per-MoE-layer
// straggler matrix over all steps) and a Chrome-trace timeline (viewable in Perfetto: one process per EP
// group, one thread per GPU with a slice per layer phase, a steps track, counters and instant events).
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/spill_text.hpp"
#include "sim/observer.hpp"

namespace epsim::serving {

class StepLog final : public Observer {
 public:
  StepLog();
  void on_step(const StepRecord& step) override;
  const core::SpillText& text() const { return text_; }
  std::string csv() const { return text_.str(); }

 private:
  core::SpillText text_;  // past 8 MiB on disk: memory flat in run length
};

/// tokens.csv: every emitted token of every request (request, token index from 1, time).
class TokenLog final : public Observer {
 public:
  TokenLog();
  void on_first_token(const RequestState& r) override;
  void on_token(const RequestState& r, core::Time gap_ns) override;
  const core::SpillText& text() const { return text_; }
  std::string csv() const { return text_.str(); }

 private:
  core::SpillText text_;  // past 8 MiB on disk: memory flat in run length
};

class LayerLog final : public Observer {
 public:
  explicit LayerLog(std::int64_t every);
  void on_layer(const LayerRecord& layer) override;
  const core::SpillText& text() const { return text_; }
  std::string csv() const { return text_.str(); }

 private:
  std::int64_t every_;
  core::SpillText text_;  // past 8 MiB on disk: memory flat in run length
};

/// events.csv: `time_ns,group,kind,detail`, one row per weight migration (at its start; detail: bytes
/// and end), per rebalance decided (kind: the trigger's policies::RebalanceKind) and per preemption,
/// ordered by time, then group, then the order they happened in.
class EventLog final : public Observer {
 public:
  void on_migration(int group, core::Time start_ns, core::Time end_ns, double bytes) override;
  void on_rebalance(int group, core::Time time_ns, policies::RebalanceKind kind) override;
  void on_preemption(const RequestState& r, core::Time now_ns) override;
  std::string csv() const;

 private:
  struct Row {
    core::Time time_ns = 0;
    int group = 0;
    std::string text;  // the whole line
  };
  std::vector<Row> rows_;
};

/// gpu_layers.csv: per (group, MoE layer, GPU), over every step: the mean local work and expert time,
/// the mean wait for the layer's slowest GPU in the expert phase (its expert time less this GPU's), and
/// the share of steps this GPU was that slowest one (ties: the lowest GPU index).
class GpuLayerLog final : public Observer {
 public:
  /// The accumulators of EP groups of `group_gpus[g]` GPUs each (pools may differ), with `moe_layers`
  /// MoE layers each.
  GpuLayerLog(std::vector<int> group_gpus, int moe_layers);
  void on_layer(const LayerRecord& layer) override;
  std::string csv() const;

 private:
  struct Cell {
    std::int64_t steps = 0;
    std::int64_t slowest = 0;
    double local_ns = 0.0;
    double expert_ns = 0.0;
    double wait_ns = 0.0;
  };
  std::vector<int> group_gpus_;
  std::vector<std::size_t> group_first_cell_;  // where each group's [moe_layer][gpu] block starts
  int moe_layers_;
  std::vector<Cell> cells_;  // [group][moe_layer][gpu]
};

class TimelineLog final : public Observer {
 public:
  /// Records the first `max_steps` steps of each group (0: every step) in at most `max_bytes` of JSON:
  /// past that it keeps every stride-th step of each group, doubling the stride as often as needed.
  TimelineLog(std::int64_t max_steps, std::int64_t max_bytes);
  void on_layer(const LayerRecord& layer) override;
  void on_step(const StepRecord& step) override;
  void on_migration(int group, core::Time start_ns, core::Time end_ns, double bytes) override;
  void on_arrival(const RequestState& r) override;
  void on_preemption(const RequestState& r, core::Time now_ns) override;
  void on_rebalance(int group, core::Time time_ns, policies::RebalanceKind kind) override;
  /// Aggregate one-direction link bandwidth of one EP group per level (GB/s = bytes per ns).
  struct LinkCapacity {
    double intra_gbps = 0.0;
    double inter_gbps = 0.0;
  };
  /// Each EP group's capacity (pools may differ): with it the trace also carries each level's
  /// utilisation, the step's all-to-all bytes over duration x capacity (none for a group not listed).
  void set_link_capacity(std::vector<LinkCapacity> per_group) { capacity_ = std::move(per_group); }
  /// The Chrome-trace JSON document.
  std::string json() const;
  /// Steps that went in, and of those (every `stride()`-th of each group) the ones kept.
  std::int64_t steps_recorded() const { return steps_recorded_; }
  std::int64_t steps_kept() const { return static_cast<std::int64_t>(chunks_.size()); }
  std::int64_t stride() const { return stride_; }
  /// Empty, or (when the size cap dropped steps) the sentence saying so.
  std::string sampling_note() const;

  // Tracks of each group's process besides its GPUs' (thread ids 0 .. GPUs - 1).
  static constexpr int k_steps_tid = 1000000;
  static constexpr int k_events_tid = 1000001;
  static constexpr int k_migrations_tid = 1000002;

 private:
  /// One recorded step of one group: its events, and those of its group since the previous step.
  struct Chunk {
    int group = 0;
    std::int64_t step = 0;
    std::string text;
  };
  bool recorded(std::int64_t step) const { return (max_steps_ == 0 || step < max_steps_) && step % stride_ == 0; }
  std::string& open(int group);
  void slice(std::string& out, const char* name, int pid, int tid, std::int64_t begin_ns, std::int64_t end_ns,
             int layer);
  void shrink();
  std::size_t other_bytes() const;  // of the file besides the kept chunks (an upper bound)

  std::int64_t max_steps_;
  std::int64_t max_bytes_;
  std::vector<LinkCapacity> capacity_;  // per group
  std::int64_t stride_ = 1;
  std::int64_t steps_recorded_ = 0;
  std::size_t bytes_ = 0;                // of the kept chunks
  std::vector<Chunk> chunks_;            // kept steps, in the order they ended
  std::vector<std::string> open_;        // per group: the step in flight and the events since the last step
  std::vector<std::int64_t> next_step_;  // per group: the step its open events go with
  std::vector<int> gpus_;                // per group: its GPUs (0 until it recorded a layer)
  /// Per (group, track), where its last slice ended: slices never start before it.
  std::map<std::pair<int, int>, std::int64_t> track_end_ns_;
  int max_gpus_ = 0;
  int max_group_ = 0;
};

}  // namespace epsim::serving
