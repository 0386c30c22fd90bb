// SPDX-License-Identifier: Apache-2.0
// The max-rate search's confirmation and brackets: the real search driven by probers whose attainment
// is a known function of the rate and the window (a queueing cliff that short windows do not see), so
// every probe and the answer are checked by hand; and the brackets, their combination with the
// replications' spread and censoring in a study's max_rate.csv and table.
#include <boost/random/uniform_real_distribution.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

#include "core/random_streams.hpp"
#include "experiments/studies/slo_search.hpp"
#include "experiments/studies/study_plan.hpp"
#include "experiments/studies/study_report.hpp"
#include "experiments/studies/study_runner.hpp"
#include "experiments/studies/study_spec.hpp"
#include "tests/support/csv.hpp"

using namespace epsim;
using namespace epsim::experiments;
using Catch::Contains;

namespace {

// A settled probe (both halves alike, no backlog growth) with this attainment on 1000 requests.
SloProbe settled_probe(double attainment) {
  SloProbe p;
  p.summary.slo_attainment = attainment;
  p.summary.requests = 1000;
  p.first_half_attainment = attainment;
  p.second_half_attainment = attainment;
  return p;
}

// The system holds up to `short_rps` on windows below 3x the automatic one and up to `long_rps` on
// longer ones: a cliff whose queue needs a long window to show.
SloProber cliff(double short_rps, double long_rps) {
  return [=](double rate, int, double scale) {
    return settled_probe(rate <= (scale < k_slo_confirm_multiple ? short_rps : long_rps) ? 0.95 : 0.5);
  };
}

std::vector<double> rates_of(const std::vector<SloProbe>& probes, bool confirmation) {
  std::vector<double> out;
  for (const SloProbe& p : probes) {
    if (p.confirmation == confirmation) {
      out.push_back(p.rate_rps);
    }
  }
  return out;
}

std::string line_starting(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) == 0) {
      return line;
    }
  }
  return "";
}

}  // namespace

TEST_CASE("a rate the short probes pass but a long window refutes is stepped down from") {
  SloSearchOptions o;
  o.target = 0.9;
  o.tolerance = 0.02;
  std::vector<SloProbe> probes;
  const SloReplication r = search_replication(o, 10.0, 0, cliff(100.0, 85.0), probes);
  // Short search from 10: doubling passes 10, 20, 40, 80 and fails 160; bisection: 120 fails, 100
  // passes, 110, 105, 102.5, 101.25 fail; (101.25 - 100) / 101.25 = 1.2 % <= 2 %: short answer 100.
  REQUIRE(rates_of(probes, false) == std::vector<double>{10, 20, 40, 80, 160, 120, 100, 110, 105, 102.5, 101.25});
  // Confirmation: 100 fails on the long window; 80 (the next rate the short probes passed) holds. The
  // search goes on between 80 and 100 with long probes only: 90 fails, 85 holds, 87.5 and 86.25 fail;
  // (86.25 - 85) / 86.25 = 1.4 %.
  REQUIRE(rates_of(probes, true) == std::vector<double>{100, 80, 90, 85, 87.5, 86.25});
  REQUIRE(r.max_rate_rps == 85.0);  // without the confirmation the answer was 100, which does not hold
  REQUIRE(r.bracket_high_rps == 86.25);
  REQUIRE(!r.censored());
  REQUIRE(r.failed_confirmations == 1);
  REQUIRE(r.confirmation.has_value());
  REQUIRE(r.confirmation->rate_rps == 85.0);
  REQUIRE(r.confirmation->window_scale == k_slo_confirm_multiple);
  REQUIRE(r.confirmation->summary.slo_attainment == 0.95);
}

TEST_CASE("a rate that holds on the long window is confirmed with one probe") {
  SloSearchOptions o;
  o.tolerance = 0.02;
  std::vector<SloProbe> probes;
  const SloReplication r = search_replication(o, 10.0, 0, cliff(100.0, 100.0), probes);
  REQUIRE(rates_of(probes, true) == std::vector<double>{100});
  REQUIRE(r.max_rate_rps == 100.0);
  REQUIRE(r.bracket_high_rps == 101.25);
  REQUIRE(r.failed_confirmations == 0);
  // Burst mode has no longer window: no confirmation, the short answer stands.
  o.steady_state = false;
  probes.clear();
  const SloReplication burst = search_replication(o, 10.0, 0, cliff(100.0, 50.0), probes);
  REQUIRE(rates_of(probes, true).empty());
  REQUIRE(burst.max_rate_rps == 100.0);
  REQUIRE(!burst.confirmation.has_value());
}

TEST_CASE("a confirmation window is 3x the settled window of the probe it confirms") {
  // Below 60 req/s a window under 4x the automatic one has not settled (its second half is worse).
  const SloProber prober = [](double rate, int, double scale) {
    SloProbe p = settled_probe(rate <= 60.0 ? 0.95 : 0.5);
    if (rate <= 60.0 && scale < 4.0) {
      p.second_half_attainment = 0.5;
    }
    return p;
  };
  SloSearchOptions o;
  o.rates = {60.0, 120.0};
  std::vector<SloProbe> probes;
  const SloReplication r = search_replication(o, 10.0, 0, prober, probes);
  // 60: windows 1, 2, 4 (settled); 120 fails at once; confirmation of 60 on 3 x 4 = 12.
  REQUIRE(probes.size() == 3);
  REQUIRE(probes[0].window_scale == 4.0);
  REQUIRE(r.confirmation.has_value());
  REQUIRE(r.confirmation->window_scale == 12.0);
  REQUIRE(r.max_rate_rps == 60.0);
  REQUIRE(r.bracket_high_rps == 120.0);
}

TEST_CASE("a rate grid's answer is its highest rate that holds on a long window, or a lower bound") {
  SloSearchOptions o;
  o.rates = {10, 20, 30, 40, 50};
  std::vector<SloProbe> probes;
  // Short windows hold up to 40, long ones up to 20: 40 and 30 are refuted, 20 holds; bracket [20, 30].
  const SloReplication r = search_replication(o, 1.0, 0, cliff(40.0, 20.0), probes);
  REQUIRE(rates_of(probes, false) == std::vector<double>{10, 20, 30, 40, 50});
  REQUIRE(rates_of(probes, true) == std::vector<double>{40, 30, 20});
  REQUIRE(r.max_rate_rps == 20.0);
  REQUIRE(r.bracket_high_rps == 30.0);
  REQUIRE(r.failed_confirmations == 2);
  // Every rate holds: the grid's highest, confirmed, is a lower bound (censored).
  probes.clear();
  const SloReplication all = search_replication(o, 1.0, 0, cliff(100.0, 100.0), probes);
  REQUIRE(all.max_rate_rps == 50.0);
  REQUIRE(all.censored());
  // The lowest rate fails: 0, bracket [0, 10], nothing to confirm.
  probes.clear();
  const SloReplication none = search_replication(o, 1.0, 0, cliff(5.0, 5.0), probes);
  REQUIRE(none.max_rate_rps == 0.0);
  REQUIRE(none.bracket_high_rps == 10.0);
  REQUIRE(!none.confirmation.has_value());
}

TEST_CASE("a later replication starts from an earlier one's bracket: its two ends, then doubling steps") {
  SloSearchOptions o;
  o.tolerance = 0.1;
  const SloPrior prior{26.0, 28.0};
  std::vector<SloProbe> probes;
  // The cliff inside the prior's bracket, which is already within the tolerance: its two ends and one
  // long probe, against the cold search's 10, 20, 40, 30, 25, 27.5 (six short probes) from 10.
  const SloReplication in = search_replication(o, 10.0, 1, cliff(27.0, 27.0), probes, {}, prior);
  REQUIRE(rates_of(probes, false) == std::vector<double>{26, 28});
  REQUIRE(rates_of(probes, true) == std::vector<double>{26});
  REQUIRE(in.max_rate_rps == 26.0);
  REQUIRE(in.bracket_high_rps == 28.0);
  probes.clear();
  REQUIRE(search_replication(o, 10.0, 1, cliff(27.0, 27.0), probes).max_rate_rps == 25.0);
  REQUIRE(rates_of(probes, false) == std::vector<double>{10, 20, 40, 30, 25, 27.5});

  // Above the bracket: steps of 2, 4, 8 from 26: 28 and 32 pass, 40 fails; bisection at 2 %: 36 fails,
  // 34 and 35 pass, 35.5 fails ((35.5 - 35) / 35.5 = 1.4 %).
  o.tolerance = 0.02;
  probes.clear();
  const SloReplication above = search_replication(o, 10.0, 1, cliff(35.0, 35.0), probes, {}, prior);
  REQUIRE(rates_of(probes, false) == std::vector<double>{26, 28, 32, 40, 36, 34, 35, 35.5});
  REQUIRE(above.max_rate_rps == 35.0);
  REQUIRE(above.bracket_high_rps == 35.5);
  // Below it: 26 fails, then 26 - 2 = 24 fails, 24 - 4 = 20 passes; bisection: 22, 21, 20.5, 20.25 fail.
  probes.clear();
  const SloReplication below = search_replication(o, 10.0, 1, cliff(20.0, 20.0), probes, {}, prior);
  REQUIRE(rates_of(probes, false) == std::vector<double>{26, 24, 20, 22, 21, 20.5, 20.25});
  REQUIRE(below.max_rate_rps == 20.0);
  REQUIRE(below.bracket_high_rps == 20.25);
  // A queueing cliff the short probes miss: 26 passes short, 28 fails; 26 fails its long probe and no
  // lower rate passed a short one, so the long probes step down by the prior's width: 24 holds, and
  // (26 - 24) / 26 = 7.7 % is within a 10 % tolerance.
  o.tolerance = 0.1;
  probes.clear();
  const SloReplication cliff_below = search_replication(o, 10.0, 1, cliff(27.0, 25.0), probes, {}, prior);
  REQUIRE(rates_of(probes, false) == std::vector<double>{26, 28});
  REQUIRE(rates_of(probes, true) == std::vector<double>{26, 24});
  REQUIRE(cliff_below.max_rate_rps == 24.0);
  REQUIRE(cliff_below.bracket_high_rps == 26.0);
  REQUIRE(cliff_below.failed_confirmations == 1);
  o.tolerance = 0.02;
  // Far below: the steps never shrink below halving (26, 24, 20, 12, 6 fail, then the cold search's halves).
  probes.clear();
  const SloReplication far = search_replication(o, 10.0, 1, cliff(2.0, 2.0), probes, {}, prior);
  const std::vector<double> short_rates = rates_of(probes, false);
  REQUIRE(std::vector<double>(short_rates.begin(), short_rates.begin() + 7) ==
          std::vector<double>{26, 24, 20, 12, 6, 3, 1.5});
  REQUIRE(far.max_rate_rps <= 2.0);
  REQUIRE((far.bracket_high_rps - far.max_rate_rps) / far.bracket_high_rps <= 0.02);
}

TEST_CASE("warm and cold searches both bracket the cliff within the tolerance, on random cliffs and priors") {
  // A brute-force check of the invariants over cliffs on both sides of the prior, near and far, with a
  // queueing cliff that short windows see late (short_rps above long_rps) half of the time.
  core::Rng rng = core::RandomStreams(7).stream("slo-prior-test", 0);
  boost::random::uniform_real_distribution<double> log_rate(std::log(0.5), std::log(500.0));
  boost::random::uniform_real_distribution<double> unit(0.0, 1.0);
  SloSearchOptions o;
  o.tolerance = 0.05;
  for (int i = 0; i < 300; ++i) {
    const double long_rps = std::exp(log_rate(rng));
    const double short_rps = unit(rng) < 0.5 ? long_rps : long_rps * (1.0 + 0.5 * unit(rng));
    const double low = std::exp(log_rate(rng));
    const std::optional<SloPrior> prior =
        i % 3 == 0 ? std::nullopt : std::optional<SloPrior>(SloPrior{low, low * (1.0 + 0.2 * unit(rng) + 1e-3)});
    std::vector<SloProbe> probes;
    const SloReplication r = search_replication(o, 20.0, 1, cliff(short_rps, long_rps), probes, {}, prior);
    CAPTURE(i, long_rps, short_rps, low);
    REQUIRE(r.max_rate_rps > 0.0);
    REQUIRE(r.max_rate_rps <= long_rps);     // it held on the long window
    REQUIRE(r.bracket_high_rps > long_rps);  // it failed (on some window) above the cliff
    REQUIRE((r.bracket_high_rps - r.max_rate_rps) / r.bracket_high_rps <= o.tolerance);
    REQUIRE(r.confirmation.has_value());
  }
}

TEST_CASE("the prior a replication gives: its bracket, none when censored or when no rate held") {
  SloReplication r;
  r.max_rate_rps = 15.0;
  r.bracket_high_rps = 16.0;
  const std::optional<SloPrior> p = slo_prior(r);
  REQUIRE(p.has_value());
  REQUIRE(p->low_rps == 15.0);
  REQUIRE(p->high_rps == 16.0);
  r.bracket_high_rps = std::numeric_limits<double>::quiet_NaN();  // censored
  REQUIRE(!slo_prior(r).has_value());
  r.max_rate_rps = 0.0;  // nothing held
  r.bracket_high_rps = 1.0;
  REQUIRE(!slo_prior(r).has_value());
}

TEST_CASE("brackets combined with the replications' spread, and their text") {
  // Three replications ending in [15, 16): the interval keeps the resolution the spread hides.
  const RateInterval same = combine_brackets({15, 15, 15}, {16, 16, 16});
  REQUIRE(same.low == 15.0);
  REQUIRE(same.high == 16.0);
  REQUIRE(format_rate_interval(15.0, same) == "15 [15, 16]");
  // Lows {10, 11, 12}, highs {11, 12, 13}: s = 1, half-width t(0.975, 2) / sqrt(3) = 4.302653 / 1.732051 =
  // 2.484138: [11 - 2.484138, 12 + 2.484138].
  const RateInterval spread = combine_brackets({10, 11, 12}, {11, 12, 13});
  REQUIRE(spread.low == Approx(8.515862).margin(1e-6));
  REQUIRE(spread.high == Approx(14.484138).margin(1e-6));
  // One replication: its own bracket.
  const RateInterval one = combine_brackets({7.5}, {8.0});
  REQUIRE(one.low == 7.5);
  REQUIRE(one.high == 8.0);
  // A censored replication leaves the interval open above, and the text says ">=".
  const RateInterval open = combine_brackets({36, 36}, {std::nan(""), 40});
  REQUIRE(open.censored == 1);
  REQUIRE(std::isnan(open.high));
  REQUIRE(format_rate_interval(36.0, open) == ">= 36 [36, -]");
  // The bracket of a curve: the rate before the first miss, and that miss (NaN skipped).
  REQUIRE(curve_bracket({1, 2, 4, 8}, {1.0, std::nan(""), 0.95, 0.7}, 0.9) == std::pair(4.0, 8.0));
  REQUIRE(curve_bracket({1, 2}, {0.5, 1.0}, 0.9) == std::pair(0.0, 1.0));
  REQUIRE(std::isnan(curve_bracket({1, 2}, {1.0, 1.0}, 0.9).second));
}

TEST_CASE("max_rate.csv and the study table give each group's bracket, interval and censoring") {
  const StudySpec s = load_study_text(R"(
[study]
base = "small.toml"
replications = 3
rate_axis = "workload.rate_rps"
[[axis]]
key = "policy.placement"
values = ["linear", "gem"]
[[axis]]
key = "workload.rate_rps"
values = [1, 2, 4]
)",
                                      "study.toml", EPSIM_TEST_DATA_DIR);
  const StudyPlan plan = plan_study(s);
  // Point p, replication r is record p * 3 + r; points: linear at 1, 2, 4, then gem at 1, 2, 4.
  const std::vector<std::vector<double>> linear{{1.0, 0.95, 0.7}, {1.0, 0.8, 0.5}, {0.95, 0.92, 0.85}};
  StudyRecords records(18);
  for (std::size_t rate = 0; rate < 3; ++rate) {
    for (std::size_t r = 0; r < 3; ++r) {
      records[rate * 3 + r].metrics = {{"slo.attainment", linear[r][rate]}};
      records[9 + rate * 3 + r].metrics = {{"slo.attainment", rate < 2 ? 1.0 : 0.95}};  // never below 0.9
    }
  }
  const std::string csv = max_rate_csv(s, plan, records);
  REQUIRE_THAT(csv, Contains("censored,bracket_low_rps,bracket_high_rps,interval_low_rps,interval_high_rps\n"));
  // linear: brackets [2, 4], [1, 2], [2, 4]. Lows {2, 1, 2}: mean 5/3, s = sqrt(1/3), half-width
  // 4.302653 * 0.5773503 / 1.732051 = 1.434218; highs {4, 2, 4}: mean 10/3, half-width 2.868435.
  const auto cells = test::csv_cells(line_starting(csv, "0,linear,"));
  REQUIRE(cells.size() == 13);
  REQUIRE(cells[8] == "0");
  REQUIRE(std::stod(cells[9]) == Approx(5.0 / 3.0));
  REQUIRE(std::stod(cells[10]) == Approx(10.0 / 3.0));
  REQUIRE(std::stod(cells[11]) == Approx(5.0 / 3.0 - 1.434218).margin(1e-6));
  REQUIRE(std::stod(cells[12]) == Approx(10.0 / 3.0 + 2.868435).margin(1e-6));
  // gem never misses: censored in all 3, the bracket and interval have no high end (empty cells).
  REQUIRE(line_starting(csv, "1,gem,") == "1,gem,0.9,3,4,0,4,4,3,4,,4,");
  const std::string table = study_table(s, plan, records);
  REQUIRE_THAT(table, Contains(">= 4 [4, -]"));
  REQUIRE_THAT(table, Contains("(3 replications met the target at every rate)"));
}

TEST_CASE("a study's max-rate search: the bracket in the table, and the same few-requests warning as slo") {
  const std::string text = R"(
[study]
base = "small.toml"
replications = 3
report = ["max_rate_rps", "max_rate_rps_per_gpu"]
[study.max_rate]
measured_requests = 300
[[axis]]
key = "policy.placement"
values = ["linear", "gem"]
)";
  const StudySpec s = load_study_text(text, "study.toml", EPSIM_TEST_DATA_DIR);
  const StudyPlan plan = plan_study(s);
  REQUIRE(plan.warnings.size() == 1);
  REQUIRE_THAT(plan.warnings[0], Contains("study.max_rate.measured_requests = 300"));
  REQUIRE_THAT(plan.warnings[0], Contains("fewer than the 400"));
  StudyRecords records(6);
  for (std::size_t r = 0; r < 3; ++r) {
    // linear: every search ends in [15, 16); gem: never failed (censored at 36).
    records[r].metrics = {{"max_rate_rps", 15.0}, {"max_rate_censored", 0.0}, {"max_rate_bracket_high_rps", 16.0}};
    records[3 + r].metrics = {{"max_rate_rps", 36.0}, {"max_rate_censored", 1.0}};
  }
  const std::string table = study_table(s, plan, records);
  // small.toml has 4 GPUs: 15 / 4 = 3.75, 16 / 4 = 4.
  REQUIRE_THAT(line_starting(table, "0 "), Contains("15 [15, 16]") && Contains("3.75 [3.75, 4]"));
  REQUIRE_THAT(line_starting(table, "1 "), Contains(">= 36 [36, -]") && Contains(">= 9 [9, -]"));
  // 400 measured requests or a fixed duration: no warning.
  REQUIRE(plan_study(load_study_text(text.substr(0, text.find("measured_requests")) + "measured_requests = 400\n" +
                                         text.substr(text.find("[[axis]]")),
                                     "study.toml", EPSIM_TEST_DATA_DIR))
              .warnings.empty());
}

TEST_CASE("a study's later replications start from their point's replication 0, read from its record") {
  const std::string text = R"(
[study]
base = "small.toml"
replications = 3
[study.max_rate]
[[axis]]
key = "policy.placement"
values = ["linear", "gem"]
)";
  const StudySpec s = load_study_text(text, "study.toml", EPSIM_TEST_DATA_DIR);
  const StudyPlan plan = plan_study(s);
  REQUIRE(max_rate_waves(s, plan));
  const std::vector<std::string> keys{"k0", "k1", "k2", "k3", "k4", "k5"};
  std::map<std::string, RunRecord> done;
  done["k0"].metrics = {{"max_rate_rps", 15.0}, {"max_rate_censored", 0.0}, {"max_rate_bracket_high_rps", 16.0}};
  done["k3"].metrics = {{"max_rate_rps", 36.0}, {"max_rate_censored", 1.0}};  // censored: no bracket
  REQUIRE(!max_rate_prior(s, plan, 0, keys, done).has_value());               // replication 0 itself
  for (const std::int64_t run : {1, 2}) {
    const std::optional<SloPrior> p = max_rate_prior(s, plan, run, keys, done);
    REQUIRE(p.has_value());
    REQUIRE(p->low_rps == 15.0);
    REQUIRE(p->high_rps == 16.0);
  }
  REQUIRE(!max_rate_prior(s, plan, 4, keys, done).has_value());
  done["k0"].error = "point 0 replication 0: failed";
  REQUIRE(!max_rate_prior(s, plan, 1, keys, done).has_value());
  done.erase("k0");
  REQUIRE(!max_rate_prior(s, plan, 1, keys, done).has_value());
  // No waves with one replication, or a fixed grid of rates (no bracket search to start).
  const auto replace = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    return t.replace(t.find(from), from.size(), to);
  };
  const StudySpec one =
      load_study_text(replace("replications = 3", "replications = 1"), "study.toml", EPSIM_TEST_DATA_DIR);
  REQUIRE(!max_rate_waves(one, plan_study(one)));
  const StudySpec grid = load_study_text(replace("[study.max_rate]\n", "[study.max_rate]\nrates = [1.0, 2.0]\n"),
                                         "study.toml", EPSIM_TEST_DATA_DIR);
  REQUIRE(!max_rate_waves(grid, plan_study(grid)));
}
