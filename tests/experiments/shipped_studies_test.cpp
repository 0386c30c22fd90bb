// SPDX-License-Identifier: Apache-2.0
// Every shipped study file plans, and every one of its points builds its load window (the warm-up run of
// GEM, ViBE, EPLB and DIRECTOR windows) both at its offered rate and as the first probe of its max-rate
// search: the code paths a sweep takes, without the runs. vibe-large.toml once failed 30 of its 160 runs
// after an hour, its probes' warm-ups serving fewer steps than the window (issue 41).
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "experiments/assembly/load_window.hpp"
#include "experiments/cli/study_preview.hpp"
#include "experiments/studies/slo_search.hpp"
#include "experiments/studies/study_plan.hpp"
#include "experiments/studies/study_spec.hpp"

namespace fs = std::filesystem;
using namespace epsim;

namespace {

// Under the sanitizers (~7x slower) only each study's first point builds its windows: the same code
// paths, within the test timeout; the release build checks every point.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool k_sanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool k_sanitized = true;
#else
constexpr bool k_sanitized = false;
#endif
#else
constexpr bool k_sanitized = false;
#endif

// The study files shipped (a reproduction's config files without a [study] table are runs, not studies).
std::vector<fs::path> shipped_studies() {
  std::vector<fs::path> files;
  for (const char* dir : {"/experiments/reproductions", "/examples/studies"}) {
    for (const fs::directory_entry& e : fs::directory_iterator(std::string(EPSIM_SOURCE_DIR) + dir)) {
      if (e.path().extension() == ".toml" && experiments::is_study_file(e.path().string())) {
        files.push_back(e.path());
      }
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST_CASE("every shipped study's points build their load windows at their rate and as max-rate probes", "[slow]") {
  const std::vector<fs::path> files = shipped_studies();
  // The five papers' reproductions at three sizes, and the example studies.
  REQUIRE(files.size() >= 15);
  int windows = 0;
  for (const fs::path& file : files) {
    INFO(file.string());
    const experiments::StudySpec spec = experiments::load_study(file.string());
    const experiments::StudyPlan plan = experiments::plan_study(spec);
    REQUIRE(!plan.points.empty());
    const std::size_t stride = k_sanitized ? plan.points.size() : 1;
    for (std::size_t p = 0; p < plan.points.size(); p += stride) {
      INFO("point " << p);
      const experiments::ExperimentConfig cfg =
          experiments::run_config(spec, plan, plan.run(static_cast<std::int64_t>(p) * plan.replications));
      const experiments::PoolWindows at_rate = experiments::profile_pool_windows(cfg);
      for (const auto& w : at_rate.of_pool) {
        windows += w.has_value() ? 1 : 0;
      }
      if (spec.max_rate) {
        // The search's first probes: the offered rate, then twice it (it doubles until a rate fails), each
        // over the steady-state window of its measured requests (a shorter one at a higher rate).
        for (const double scale : {1.0, 2.0}) {
          INFO("probe at " << scale << " x the offered rate");
          const experiments::ExperimentConfig probe =
              experiments::slo_probe_config(cfg, scale * cfg.workload.arrivals.rate_rps, *spec.max_rate, 0, 1.0);
          CHECK_NOTHROW(experiments::profile_pool_windows(probe));
        }
      }
    }
  }
  CHECK(windows > 0);  // the check has teeth: some points profile a window
}
