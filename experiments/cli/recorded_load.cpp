// SPDX-License-Identifier: Apache-2.0
#include "experiments/cli/recorded_load.hpp"

#include <fmt/format.h>

#include <optional>

#include "core/error.hpp"
#include "engines/coactivation.hpp"
#include "engines/import_trtllm_stats.hpp"

namespace epsim::experiments {
namespace {

class WindowSink : public engines::StepSink {
 public:
  WindowSink(LoadFile& f, const RecordingWindow& w, std::string where) : f_(f), w_(w), where_(std::move(where)) {}

  void begin(const trace::Header& h) override {
    layers_ = h.moe_layers();
    experts_ = h.experts();
    f_.weight.assign(layers_, std::vector<double>(experts_, 0.0));
    if (w_.coactivation && h.has_token_experts()) {
      tally_.emplace(h);
    }
    if (w_.transitions && h.has_token_experts()) {
      transitions_.emplace(h);
    }
  }
  void step(const trace::Step& s) override {
    const std::int64_t i = seen_++;
    if (i < w_.from_step || (w_.steps > 0 && i >= w_.from_step + w_.steps)) {
      return;
    }
    ++kept_;
    if (w_.keep_steps) {
      const auto bytes = static_cast<std::int64_t>((f_.window.size() + 1) * layers_ * experts_ * sizeof(double));
      if (bytes > w_.max_bytes) {
        throw core::Error(
            fmt::format("{}: a window of {} steps of {} layers x {} experts takes more than {} MiB; "
                        "choose --window-steps N (and --from-step S)",
                        where_, f_.window.size() + 1, layers_, experts_, w_.max_bytes >> 20));
      }
      f_.window.emplace_back(layers_, std::vector<double>(experts_, 0.0));
    }
    for (std::size_t l = 0; l < layers_; ++l) {
      const auto& c = s.layers(static_cast<int>(l)).expert_tokens();
      for (std::size_t e = 0; e < experts_; ++e) {
        f_.weight[l][e] += c[static_cast<int>(e)];
        if (w_.keep_steps) {
          f_.window.back()[l][e] = c[static_cast<int>(e)];
        }
      }
    }
    if (tally_) {
      tally_->add(s);
    }
    if (transitions_) {
      transitions_->add(s);
    }
  }

  std::int64_t seen() const { return seen_; }
  std::int64_t kept() const { return kept_; }
  std::optional<engines::CoactivationTally>& tally() { return tally_; }
  std::optional<engines::TransitionTally>& transitions() { return transitions_; }

 private:
  LoadFile& f_;
  const RecordingWindow& w_;
  std::string where_;
  std::size_t layers_ = 0;
  std::size_t experts_ = 0;
  std::int64_t seen_ = 0;
  std::int64_t kept_ = 0;
  std::optional<engines::CoactivationTally> tally_;
  std::optional<engines::TransitionTally> transitions_;
};

}  // namespace

LoadFile load_recording(const std::filesystem::path& path, const engines::RoutingImporter& importer,
                        const engines::RoutingImportOptions& options, const RecordingWindow& window) {
  LoadFile f;
  WindowSink sink(f, window, path.string());
  importer.run(path, options, sink);
  if (sink.kept() == 0) {
    throw core::Error(fmt::format("{}: the window (from step {}, {} steps) holds none of the recording's {} steps",
                                  path.string(), window.from_step,
                                  window.steps > 0 ? std::to_string(window.steps) : std::string("all"), sink.seen()));
  }
  if (window.coactivation) {
    if (const auto& tally = sink.tally(); tally.has_value()) {
      f.coactivation = tally->counts();
    } else if (importer.name == "trtllm-expert-stats") {
      // The co-occurrence files cover every recorded iteration, not the window.
      f.coactivation = engines::trtllm_coactivation(path, options);
    }
    if (f.coactivation.empty()) {
      throw core::Error(path.string() +
                        ": no per-token expert ids (nor co-occurrence files) to count co-selections "
                        "from; give --coactivation CSV");
    }
  }
  if (window.transitions) {
    if (const auto& tally = sink.transitions(); tally.has_value()) {
      f.transitions = tally->counts();
    } else {
      throw core::Error(path.string() +
                        ": no per-token expert ids to count cross-layer transitions from (MoETuner's input); "
                        "record the routing per token (vLLM's routed experts, an epsim trace with token ids), or place "
                        "without the mapping: --option cross_layer=false");
    }
  }
  return f;
}

}  // namespace epsim::experiments
