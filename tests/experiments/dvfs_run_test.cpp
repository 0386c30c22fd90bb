// SPDX-License-Identifier: Apache-2.0
// The power limiter in a whole run (hardware/dvfs.hpp): every step's clocks are what an independent
// numerical integration of the limiter's equation over the run's own steps gives, and the summary's
// dvfs.* figures are those clocks over the measured steps.
#include <fmt/format.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/metric_kind.hpp"
#include "experiments/assembly/build_simulation.hpp"
#include "experiments/assembly/experiment_config.hpp"
#include "experiments/assembly/load_window.hpp"
#include "experiments/assembly/results_writer.hpp"
#include "sim/simulator.hpp"

using namespace epsim;

namespace {

struct StepSeen {
  core::Time start_ns = 0, end_ns = 0;
  std::vector<double> busy_ns;
  double clock_mean = 0.0, clock_min = 0.0;
};

struct Steps final : serving::Observer {
  void on_step(const serving::StepRecord& s) override {
    seen.push_back({s.start_ns, s.end_ns, {s.gpu_busy_ns.begin(), s.gpu_busy_ns.end()}, s.clock_mean, s.clock_min});
  }
  std::vector<StepSeen> seen;
};

// du/dt = b (1 - u) / rise - (1 - b) u / fall by classical Runge-Kutta in `n` steps.
double integrate(double u, double b, double span_ms, double rise_ms, double fall_ms, int n) {
  const auto f = [&](double x) { return b * (1.0 - x) / rise_ms - (1.0 - b) * x / fall_ms; };
  const double h = span_ms / n;
  for (int i = 0; i < n; ++i) {
    const double k1 = f(u), k2 = f(u + h / 2 * k1), k3 = f(u + h / 2 * k2), k4 = f(u + h * k3);
    u += h / 6 * (k1 + 2 * k2 + 2 * k3 + k4);
  }
  return u;
}

}  // namespace

TEST_CASE("a power-limited run clocks every step from the limiter's equation over its own steps") {
  const std::string path = std::string(EPSIM_SOURCE_DIR) + "/examples/demo.toml";
  // Every kernel at full power (stress weighting off), so a step's power duty input is its busy share.
  const experiments::ExperimentConfig cfg =
      experiments::load_config(path, {"workload.num_requests=120", "cluster.variability.dvfs.enabled=true",
                                      "cluster.variability.stress.enabled=false"});
  serving::Simulator sim(experiments::build_simulation(cfg, experiments::profile_pool_windows(cfg)));
  Steps steps;
  sim.add_observer(&steps);
  const serving::SimulationResult res = sim.run();
  REQUIRE(res.summary.requests_finished == 120);
  REQUIRE(steps.seen.size() > 100);
  const double rise = 31.0, fall = 210.0, alpha = 2.8, h = std::pow(0.84, alpha);
  std::vector<double> u(8, 0.0);
  core::Time at = 0;
  double lowest = 1.0, clock_ns = 0.0, step_ns = 0.0;
  int throttled = 0;
  for (const StepSeen& s : steps.seen) {
    REQUIRE(s.busy_ns.size() == 8);
    double sum = 0.0, least = 1.0;
    for (double& x : u) {
      x = integrate(x, 0.0, static_cast<double>(s.start_ns - at) / 1e6, rise, fall, 64);
      const double c = x <= h ? 1.0 : std::pow(h / x, 1.0 / alpha);
      sum += c;
      least = std::min(least, c);
    }
    REQUIRE(s.clock_mean == Approx(sum / 8).epsilon(1e-6));
    REQUIRE(s.clock_min == Approx(least).epsilon(1e-6));
    throttled += least < 1.0 ? 1 : 0;
    lowest = std::min(lowest, least);
    clock_ns += s.clock_mean * static_cast<double>(s.end_ns - s.start_ns);
    step_ns += static_cast<double>(s.end_ns - s.start_ns);
    const double span = static_cast<double>(s.end_ns - s.start_ns);
    for (std::size_t g = 0; g < 8; ++g) {
      u[g] = integrate(u[g], s.busy_ns[g] / span, span / 1e6, rise, fall, 64);
    }
    at = s.end_ns;
  }
  // The run meets the cap (prefill at full power) and stays above the continuous clock.
  CHECK(throttled > 0);
  CHECK(lowest >= 0.84);
  // No warm-up or cool-down in the demo: every step is measured. The figure weights by priced durations,
  // the recount by whole-ns spans.
  CHECK(res.figure("dvfs.clock_min") == Approx(lowest).epsilon(1e-6));
  CHECK(res.figure("dvfs.clock_mean") == Approx(clock_ns / step_ns).epsilon(1e-6));
  // The terminal summary says them too.
  const std::string said = fmt::format("power-limited clocks (of cold): mean {:.3f}, lowest {:.3f}",
                                       res.figure("dvfs.clock_mean"), res.figure("dvfs.clock_min"));
  CHECK(experiments::human_summary(cfg, res).find(said) != std::string::npos);
  for (const char* name : {"dvfs.clock_mean", "dvfs.clock_min"}) {
    CHECK(core::classify_metric(name) == core::MetricKind::proportion);  // clocks over the cold clock
  }
}

TEST_CASE("a run without the limiter reports no dvfs figures") {
  const std::string path = std::string(EPSIM_SOURCE_DIR) + "/examples/demo.toml";
  const experiments::ExperimentConfig cfg = experiments::load_config(path, {"workload.num_requests=20"});
  serving::Simulator sim(experiments::build_simulation(cfg, experiments::profile_pool_windows(cfg)));
  const serving::SimulationResult res = sim.run();
  CHECK_THROWS(res.figure("dvfs.clock_mean"));
  CHECK(experiments::human_summary(cfg, res).find("power-limited") == std::string::npos);
}
