// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the engines' routing importers share: their options, where the steps go (a StepSink: a trace file,
// or the load window `epsim place` keeps), the conversion of one recorded load matrix into a trace step,
// and the checks of a recording against the model it claims to come from.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engines/load_history.hpp"
#include "models/model_spec.hpp"
#include "workloads/routing_trace.pb.h"

namespace epsim::engines {

struct RoutingImportOptions {
  std::optional<models::ModelSpec> model;  ///< checks layers, experts, top-k and group-limited routing
  std::string model_name;                  ///< the trace header's model (the preset's name)
  int top_k = 0;                           ///< count-only recordings without a model: experts per token
  /// Per-token recordings: tokens per trace step, requests packed in order (0 = one request per step).
  std::int64_t tokens_per_step = 0;
};

/// Receives an importer's steps, one at a time, each already valid against the header.
class StepSink {
 public:
  virtual ~StepSink() = default;
  /// Called once, before the first step.
  virtual void begin(const trace::Header& header) = 0;
  virtual void step(const trace::Step& step) = 0;
};

/// Steps into an epsim trace file (written atomically: nothing appears at `path` unless close() runs).
class TraceFileSink : public StepSink {
 public:
  explicit TraceFileSink(std::filesystem::path path);
  ~TraceFileSink() override;
  void begin(const trace::Header& header) override;
  void step(const trace::Step& step) override;
  /// Finishes the file; throws core::Error when no step arrived.
  void close();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct ImportSummary {
  std::int64_t steps = 0;
  std::int64_t tokens = 0;         ///< tokens in the steps written
  std::int64_t cached_tokens = 0;  ///< per-token recordings: prefix-cached positions left out (-1 ids)
  std::int64_t moe_layers = 0;
  std::int64_t experts = 0;
  std::int64_t top_k = 0;
};

/// The experts per token the options give (the model's, else top_k); throws std::invalid_argument naming
/// `format` when neither is set.
int required_top_k(const RoutingImportOptions& o, const std::string& format);
/// A trace header for a recording of `layers` x `experts`, checked against the model of `o` (error names
/// `where`).
trace::Header recording_header(const RoutingImportOptions& o, std::int64_t layers, std::int64_t experts, int top_k,
                               const std::string& source, const std::string& where);
/// One recorded [layer][expert] load matrix as a trace step: every load a whole number, every layer summing
/// to the same tokens x top_k. Errors name `where` (the file and the entry).
trace::Step counts_step(const LoadMatrix& load, std::int64_t index, int top_k, const std::string& where);
/// Checks a token's top-k ids (distinct, in range; at most topk_group expert groups when the model limits
/// routing to groups); returns "" or what is wrong.
std::string token_problem(std::span<const std::int64_t> ids, const trace::Header& h,
                          const std::optional<models::ModelSpec>& model);

}  // namespace epsim::engines
