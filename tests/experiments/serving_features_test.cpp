// SPDX-License-Identifier: Apache-2.0
// examples/deepseek-v3-chat.toml (issue 38's "done means"): DeepSeek-V3 with prefix caching, MTP and
// multi-turn sessions runs from the example, and each feature shows in the result as the run's own
// requests and steps say: closed-loop turns, hits recounted from the requests, the acceptance rate
// within a binomial bound of the stated 0.875.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <string>

#include "experiments/assembly/build_simulation.hpp"
#include "experiments/assembly/experiment_config.hpp"
#include "experiments/assembly/load_window.hpp"
#include "sim/simulator.hpp"

using namespace epsim;

namespace {

// Counts the verify steps and the drafts they accepted, as the observers see them.
struct Verifies final : serving::Observer {
  void on_step(const serving::StepRecord& s) override { draft_steps += s.draft_ns > 0.0 ? 1 : 0; }
  std::int64_t draft_steps = 0;
};

}  // namespace

TEST_CASE("the DeepSeek-V3 chat example serves sessions with prefix caching and MTP", "[slow]") {
  const std::string path = std::string(EPSIM_SOURCE_DIR) + "/examples/deepseek-v3-chat.toml";
  const experiments::ExperimentConfig cfg = experiments::load_config(path, {"workload.num_requests=300"});
  serving::Simulator sim(experiments::build_simulation(cfg, experiments::profile_pool_windows(cfg)));
  Verifies verifies;
  sim.add_observer(&verifies);
  const serving::SimulationResult res = sim.run();
  REQUIRE(res.summary.requests_finished == 300);
  REQUIRE(verifies.draft_steps > 0);
  // Closed loop: turn t of a session arrives after turn t-1 finished; its prompt repeats turn t-1's
  // prompt and answer, so it begins with turn t-1's segments.
  std::map<std::pair<std::int64_t, int>, const serving::RequestState*> turns;
  for (const serving::RequestState& r : res.requests) {
    REQUIRE(r.spec.session >= 0);
    turns[{r.spec.session, r.spec.turn}] = &r;
  }
  int later_turns = 0;
  for (const auto& [key, r] : turns) {
    if (key.second == 0) {
      continue;
    }
    const serving::RequestState& prev = *turns.at({key.first, key.second - 1});
    REQUIRE(r->spec.arrival_ns >= prev.finish_ns);
    REQUIRE(r->spec.content.size() > prev.spec.content.size());
    for (std::size_t i = 0; i < prev.spec.content.size(); ++i) {
      REQUIRE(r->spec.content[i] == prev.spec.content[i]);
    }
    REQUIRE(r->spec.content[prev.spec.content.size()].id == prev.spec.output_content_id);
    ++later_turns;
  }
  REQUIRE(later_turns > 0);
  // Hits, recounted from the requests (every one is measured: no warm-up, no cool-down).
  std::int64_t cached = 0;
  std::int64_t prompt = 0;
  for (const serving::RequestState& r : res.requests) {
    REQUIRE(r.cached_tokens >= 0);
    REQUIRE(r.cached_tokens < r.spec.prompt_tokens);  // the last prompt token is always computed
    cached += r.cached_tokens;
    prompt += r.spec.prompt_tokens;
  }
  REQUIRE(res.prefix_cache.cached_tokens == cached);
  REQUIRE(res.prefix_cache.prompt_tokens == prompt);
  // The 2,048-token system prompt alone is shared by every request after each rank's first.
  REQUIRE(res.prefix_cache.hit_rate_tokens() > 0.5);
  // MTP: one draft per verify, accepted with 0.875: the mean of n Bernoulli draws within 5 sigma.
  const double n = res.figure("speculative.verifies");
  const double p = 0.875;
  REQUIRE(n > 1000);
  REQUIRE(std::abs(res.figure("speculative.mean_accepted_tokens") - p) < 5.0 * std::sqrt(p * (1 - p) / n));
}
