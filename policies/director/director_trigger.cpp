// SPDX-License-Identifier: Apache-2.0
#include "policies/director/director_trigger.hpp"

#include <array>
#include <numeric>

#include "core/error.hpp"
#include "core/grid_view.hpp"
#include "policies/director/director_reconfigure.hpp"

namespace epsim::policies {

namespace {
// [layer][expert] -> GPU of a placement with one copy of every expert; empty when some expert has
// replicas (the one-copy model of Eq. 1-5 cannot price it).
std::vector<int> single_copy_gpu_of(const Placement& pl) {
  std::vector<int> out;
  for (const LayerPlacement& lp : pl.layers) {
    for (int e = 0; e < lp.num_experts; ++e) {
      const auto slots = lp.replicas(e);
      if (slots.size() != 1) {
        return {};
      }
      out.push_back(lp.gpu_of_slot(slots[0]));
    }
  }
  return out;
}
}  // namespace

DirectorTrigger::DirectorTrigger(PlacementInput shape, DirectorOptions opt, DirectorTriggerOptions trig,
                                 std::vector<double> popularity)
    : shape_(std::move(shape)), policy_(opt), trig_(trig), popularity_(std::move(popularity)) {
  const auto L = static_cast<std::size_t>(shape_.num_layers);
  const auto E = static_cast<std::size_t>(shape_.num_experts);
  if (!shape_.has_cost_curves()) {
    throw core::Error("director rebalancing needs the cost curves of the EP group's GPUs");
  }
  if (trig_.interval_steps < 1 || trig_.horizon_steps < 1 || !(trig_.accuracy >= 0.0 && trig_.accuracy <= 1.0) ||
      !(trig_.min_gain >= 0.0 && trig_.min_gain < 1.0)) {
    throw core::Error(
        "director rebalancing: interval and horizon must be >= 1 step, the accuracy in [0, 1], the minimum gain in "
        "[0, 1)");
  }
  if (popularity_.size() != L * E) {
    popularity_.assign(L * E, 1.0);  // no history: wrong guesses are uniform
  }
  const auto normalised = core::grid(popularity_, L, E);
  for (std::size_t l = 0; l < L; ++l) {
    const std::span<double> row = normalised.row(l);
    const double sum = std::accumulate(row.begin(), row.end(), 0.0);
    for (double& p : row) {
      p = sum > 0.0 ? p / sum : 1.0 / static_cast<double>(E);
    }
  }
  observed_.assign(2 * L * E, 0.0);
  shape_.clear_load_window();
}

// Whether the step that is ending now (its view's arrivals not yet counted) is the last before a
// re-optimisation (a migration under way may still defer it).
bool DirectorTrigger::due(std::int64_t arrivals) const {
  if (trig_.when == DirectorTriggerOptions::When::interval) {
    return (seen_ + 1) % trig_.interval_steps == 0;
  }
  return new_work_ || arrivals > 0;
}

std::optional<PredictionRequest> DirectorTrigger::wants_prediction(const RebalanceView& view) const {
  if (trig_.mode == DirectorTriggerOptions::Mode::proactive && due(view.arrivals) && !view.migrating) {
    return PredictionRequest{trig_.horizon_steps, trig_.queued_only};
  }
  return std::nullopt;
}

void DirectorTrigger::predicted_workload(const RebalanceView& view, PlacementInput& in) const {
  const auto L = static_cast<std::size_t>(shape_.num_layers);
  const auto E = static_cast<std::size_t>(shape_.num_experts);
  const auto G = static_cast<std::size_t>(shape_.num_gpus);
  std::vector<double> origin_load(2 * L * G * E, 0.0);
  std::vector<double> pass_weight(2, 0.0);
  const auto w = core::grid(origin_load, 2, L, G, E);  // W[pass kind][layer][origin][expert]
  const auto popularity = core::grid(popularity_, L, E);
  const auto predicted = core::grid(view.predicted_load, 2, L, G, E);
  const double p = trig_.accuracy;
  for (std::size_t q = 0; q < 2; ++q) {
    pass_weight[q] = view.predicted_passes[q];
    if (pass_weight[q] <= 0.0) {
      continue;
    }
    const double per_pass = 1.0 / pass_weight[q];
    for (std::size_t l = 0; l < L; ++l) {
      for (std::size_t o = 0; o < G; ++o) {
        const std::span<const double> truth = predicted.row(q, l, o);
        const double tokens = std::accumulate(truth.begin(), truth.end(), 0.0);
        for (std::size_t e = 0; e < E; ++e) {
          w(q, l, o, e) = per_pass * (p * truth[e] + (1.0 - p) * tokens * popularity(l, e));
        }
      }
    }
  }
  in.set_origin_load(std::move(origin_load), std::move(pass_weight));
}

void DirectorTrigger::observed_workload(PlacementInput& in) const {
  const auto L = static_cast<std::size_t>(shape_.num_layers);
  const auto E = static_cast<std::size_t>(shape_.num_experts);
  const auto G = static_cast<std::size_t>(shape_.num_gpus);
  std::vector<double> origin_load(2 * L * G * E, 0.0);
  std::vector<double> pass_weight(2, 0.0);
  const auto w = core::grid(origin_load, 2, L, G, E);
  const auto seen = core::grid(observed_, 2, L, E);
  for (std::size_t q = 0; q < 2; ++q) {
    pass_weight[q] = static_cast<double>(observed_steps_[q]);
    if (observed_steps_[q] == 0) {
      continue;
    }
    const double share = 1.0 / static_cast<double>(G) / static_cast<double>(observed_steps_[q]);
    for (std::size_t l = 0; l < L; ++l) {
      for (std::size_t o = 0; o < G; ++o) {
        for (std::size_t e = 0; e < E; ++e) {
          w(q, l, o, e) = seen(q, l, e) * share;
        }
      }
    }
  }
  in.set_origin_load(std::move(origin_load), std::move(pass_weight));
}

std::optional<Placement> DirectorTrigger::reoptimise(const PlacementInput& in, const Placement& current) {
  ++solves_;
  DirectorProblem problem = director_problem(in, policy_.options());
  const std::vector<int> current_gpu_of = single_copy_gpu_of(current);
  if (current_gpu_of.size() == static_cast<std::size_t>(problem.layers) * static_cast<std::size_t>(problem.experts)) {
    problem.current = current_gpu_of;
    problem.move_ns = trig_.migration_weight * move_ns_per_expert(problem, in.expert_bytes);
  }
  std::vector<int> proposed = policy_.solve(problem, in.seed);
  gap_sum_ += policy_.last_report().gap;
  if (current_gpu_of.size() == proposed.size()) {
    const DirectorRoundingOptions& rounding = policy_.options().rounding;
    ReconfigureResult r =
        reconfigure(problem, current_gpu_of, proposed, trig_.min_gain, rounding.polish ? rounding.polish_passes : 0);
    layers_kept_ += r.layers_kept;
    layers_polished_ += r.layers_polished;
    if (r.experts_moved == 0) {
      return std::nullopt;
    }
    proposed = std::move(r.gpu_of);
  }
  Placement next = placement_from_gpu_of(problem, proposed);
  bool same = true;
  for (std::size_t l = 0; l < next.layers.size() && same; ++l) {
    same = next.layers[l].phy2log == current.layers[l].phy2log;
  }
  return same ? std::nullopt : std::optional<Placement>(std::move(next));
}

std::optional<PredictionRequest> DirectorTrigger::wants_idle_start() const {
  if (trig_.mode == DirectorTriggerOptions::Mode::proactive && trig_.idle_start) {
    return PredictionRequest{trig_.horizon_steps, trig_.queued_only};
  }
  return std::nullopt;
}

std::optional<Placement> DirectorTrigger::on_idle_start(const RebalanceView& view) {
  if (!wants_idle_start() || view.migrating || view.arrivals <= 0) {
    return std::nullopt;
  }
  // The new work is placed for now: the next step boundary need not re-optimise for it again, and the
  // interval counts from here.
  new_work_ = false;
  seen_ = 0;
  return plan_predicted(view);
}

std::optional<Placement> DirectorTrigger::plan_predicted(const RebalanceView& view) {
  const auto cells = static_cast<std::size_t>(shape_.num_layers) * static_cast<std::size_t>(shape_.num_gpus) *
                     static_cast<std::size_t>(shape_.num_experts);
  if (view.predicted_load.size() != 2 * cells) {
    return std::nullopt;  // nothing to predict from (a replayed trace)
  }
  PlacementInput in = shape_;
  predicted_workload(view, in);
  return plan(in, *view.current);
}

std::optional<Placement> DirectorTrigger::plan(const PlacementInput& in, const Placement& current) {
  double work = 0.0;  // token-expert pairs ahead, over every pass
  const OriginLoad& origin = in.origin_load();
  const std::size_t cells = origin.values().size() / 2;
  const auto w = core::grid(origin.values(), 2, cells);
  for (std::size_t q = 0; q < 2; ++q) {
    const std::span<const double> pass = w.row(q);
    work += origin.pass_weight()[q] * std::accumulate(pass.begin(), pass.end(), 0.0);
  }
  if (work <= 0.0) {
    // No work ahead: with predict = "queued", a batch that found the group idle started at once and
    // left nothing queued (idle_start off), so the trigger waits for the next arrivals.
    return std::nullopt;
  }
  return reoptimise(in, current);
}

std::optional<Placement> DirectorTrigger::on_step(const RebalanceView& view) {
  const auto L = static_cast<std::size_t>(shape_.num_layers);
  const auto E = static_cast<std::size_t>(shape_.num_experts);
  // The reactive baseline's passes: a step with more prompt than decode tokens counts as a prefill pass.
  const std::size_t kind = view.prefill_tokens > 0 && view.prefill_tokens >= view.decode_tokens ? 0 : 1;
  const auto observed = core::grid(observed_, 2, L * E);  // [pass kind][layer x expert]
  for (std::size_t i = 0; i < L * E; ++i) {
    observed(kind, i) += view.expert_tokens[i];
  }
  ++observed_steps_[kind];
  const bool due_now = due(view.arrivals);
  new_work_ = new_work_ || view.arrivals > 0;
  ++seen_;
  if (!due_now || view.migrating) {
    return std::nullopt;  // arrivals mode: the new work waits for the migration to end
  }
  // W per pass kind (prefill, decode), one pass's tokens each, and how many passes of each kind.
  if (trig_.mode == DirectorTriggerOptions::Mode::proactive) {
    if (view.predicted_load.empty()) {
      new_work_ = false;  // nothing to predict from (a replayed trace): wait for the next arrivals
      seen_ = 0;
      return std::nullopt;
    }
    std::fill(observed_.begin(), observed_.end(), 0.0);
    observed_steps_ = {};
    seen_ = 0;
    new_work_ = false;
    return plan_predicted(view);
  }
  PlacementInput in = shape_;
  observed_workload(in);
  std::fill(observed_.begin(), observed_.end(), 0.0);
  observed_steps_ = {};
  seen_ = 0;
  new_work_ = false;
  return plan(in, *view.current);
}

namespace {

class DirectorFactory final : public TriggerFactory {
 public:
  DirectorFactory(const DirectorOptions& opt, DirectorTriggerOptions trig) : opt_(opt), trig_(trig) {}
  PolicyNeeds needs() const override {
    return {
        .load_window = true, .cost_curves = true, .predictions = trig_.mode == DirectorTriggerOptions::Mode::proactive};
  }
  MigrationMode default_migration() const override { return MigrationMode::compute_phases; }
  int max_ep_size() const override { return k_director_max_ep_size; }
  std::unique_ptr<RebalanceTrigger> make(const TriggerContext& ctx, int /*group*/) const override {
    DirectorTriggerOptions trig = trig_;
    trig.accuracy = trig_.accuracy_override.value_or(predictor_accuracy(trig_.predictor, ctx.model_name));
    return std::make_unique<DirectorTrigger>(
        ctx.group, opt_, trig, ctx.group.has_load_window() ? ctx.group.load_window().total() : std::vector<double>());
  }

 private:
  DirectorOptions opt_;
  DirectorTriggerOptions trig_;
};

constexpr std::array<core::Choice<DirectorTriggerOptions::Mode>, 2> k_modes{
    {{"proactive", DirectorTriggerOptions::Mode::proactive}, {"reactive", DirectorTriggerOptions::Mode::reactive}}};
constexpr std::array<core::Choice<DirectorTriggerOptions::When>, 2> k_when{
    {{"interval", DirectorTriggerOptions::When::interval}, {"arrivals", DirectorTriggerOptions::When::arrivals}}};
constexpr std::array<core::Choice<bool>, 2> k_scope{{{"outstanding", false}, {"queued", true}}};

DirectorTriggerOptions parse_trigger_options(core::ParamTable& t) {
  DirectorTriggerOptions d;
  d.mode = t.choice<DirectorTriggerOptions::Mode>(
      "mode", DirectorTriggerOptions::Mode::proactive,
      "proactive = W predicted for the queued requests (DIRECTOR); reactive = W of the previous batch (the paper's "
      "online baseline)",
      k_modes);
  d.when = t.choice<DirectorTriggerOptions::When>(
      "when", DirectorTriggerOptions::When::interval,
      "re-optimise every interval_steps steps (interval) or once new requests are queued (arrivals: before each "
      "batch of queued work)",
      k_when);
  d.interval_steps =
      t.integer("interval_steps", 50, "steps between re-optimisations (a batch of queued work)", {1, 1 << 24});
  d.queued_only = t.choice<bool>("predict", false,
                                 "whose work the predictor forecasts: every outstanding request (queued and running) "
                                 "or the queued ones the next admissions take (the next batch under static batching)",
                                 k_scope);
  d.min_gain = t.real("min_gain", 0.02,
                      "a layer migrates only when the new placement saves at least this share of its modelled "
                      "latency (Eq. 1-4 under the new W)",
                      {0.0, 0.99});
  d.migration_weight =
      t.real("migration_weight", 1.0,
             "the optimiser charges each expert it moves this x its weights' transfer time over the group's mean "
             "link, spread over the group's GPUs (0 = the paper's objective: moves are free)",
             {0.0, 1e6});
  d.idle_start = t.boolean("idle_start", true,
                           "proactive: place for new work that finds the group idle before its first step (false: "
                           "it starts on the placement it finds)");
  d.horizon_steps = t.integer("horizon_steps", 50, "steps of the queued requests' work W predicts", {1, 1 << 24});
  d.predictor = t.choice<PredictorKind>("predictor", PredictorKind::quantized,
                                        "routing predictor, oracle (p = 1) or the paper's cascade / quantized (Table "
                                        "II: p of this model if listed, else the median of its four)",
                                        k_predictor_kinds);
  d.accuracy_override =
      t.optional_real("accuracy", "the predictor's", "top-k accuracy p overriding the predictor's", {0.0, 1.0});
  return d;
}

}  // namespace

Registry<TriggerFactory>::Entry director_trigger_entry() {
  return {"director",
          "DIRECTOR's online re-optimisation before each batch of queued work: proactive from the predicted routing "
          "of the queued requests, or reactive from the last interval; migrates in compute phases by default",
          [](core::ParamTable& t) -> std::unique_ptr<TriggerFactory> {
            const DirectorTriggerOptions trig = parse_trigger_options(t);
            DirectorOptions opt = parse_director_options(t, DirectorLpOptions::Mode::direct);
            t.finish();
            return std::make_unique<DirectorFactory>(opt, trig);
          }};
}

}  // namespace epsim::policies
