// SPDX-License-Identifier: Apache-2.0
#include "experiments/studies/slo_search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>

#include "core/error.hpp"
#include "experiments/assembly/build_simulation.hpp"
#include "experiments/assembly/replication.hpp"

namespace epsim::experiments {
namespace {

// What too few measured requests at the answer mean for its attainment.
std::string few_requests_warning(const serving::RunSummary& s) {
  // Wilson's score interval: unlike the normal approximation it has a width at 0 % and 100 %.
  const double a = s.slo_attainment;
  const double n = std::max<double>(1.0, static_cast<double>(s.requests));
  constexpr double z = 1.96;
  const double half = z / (1.0 + z * z / n) * std::sqrt(a * (1.0 - a) / n + z * z / (4.0 * n * n));
  return fmt::format(
      "the answer rests on {} measured requests (attainment {:.1f} %, 95 % interval about +- {:.1f} points), "
      "fewer than the {} that make it trustworthy; raise the duration or the measured requests",
      s.requests, 100.0 * a, 100.0 * half, k_min_trusted_slo_requests);
}

// An overloaded probe shows as overload only once its arrivals outnumber what the system can hold at
// once (every DP rank's running seats): a shorter burst is absorbed whatever its rate. The automatic
// window therefore measures at least this many times that many requests.
constexpr std::int64_t k_concurrency_multiple = 2;

// The measured requests of each half of the window that met both targets (the rule of summarize_run).
void half_attainments(const std::vector<serving::RequestState>& requests, const serving::ServingConfig& serving,
                      SloProbe& p) {
  const serving::MeasuredWindow w = serving::measured_window(requests, serving.window);
  core::Time last = w.begin_ns;
  for (const serving::RequestState& r : requests) {
    last = w.contains(r.spec.arrival_ns) ? std::max(last, r.spec.arrival_ns) : last;
  }
  const core::Time mid = w.begin_ns + (last - w.begin_ns) / 2;
  std::array<double, 2> met{};
  std::array<double, 2> n{};
  for (const serving::RequestState& r : requests) {
    if (!w.contains(r.spec.arrival_ns)) {
      continue;
    }
    const std::size_t half = r.spec.arrival_ns <= mid ? 0 : 1;
    n[half] += 1.0;
    met[half] += r.finished() && r.ttft_ms() <= serving.slo.ttft_ms && r.tpot_ms() <= serving.slo.tpot_ms ? 1.0 : 0.0;
  }
  p.first_half_attainment = n[0] > 0.0 ? met[0] / n[0] : 0.0;
  p.second_half_attainment = n[1] > 0.0 ? met[1] / n[1] : 0.0;
  // Requests in the system (arrived, not finished) when the window opens and when it closes.
  std::int64_t at_begin = 0;
  std::int64_t at_end = 0;
  for (const serving::RequestState& r : requests) {
    const auto inside = [&](core::Time t) { return r.spec.arrival_ns <= t && (r.finish_ns < 0 || r.finish_ns > t); };
    at_begin += inside(w.begin_ns) ? 1 : 0;
    at_end += inside(last) ? 1 : 0;
  }
  p.backlog_growth = at_end - at_begin;
}

// Longest window a probe grows to, as a multiple of the automatic one.
constexpr double k_max_window_scale = 8.0;

// Steady within the window: the second half is not clearly worse than the first (two standard errors
// of the difference of two binomial shares), and the requests in the system did not grow by more than
// a stable queue's fluctuation (three times sqrt(arrivals), the Poisson scale) over the window.
bool settled(const SloProbe& p) {
  const auto n = static_cast<double>(std::max<std::int64_t>(2, p.summary.requests));
  const double a = p.summary.slo_attainment;
  const double se = std::sqrt(std::max(a * (1.0 - a), 0.01) * 2.0 / (n / 2.0));
  return p.second_half_attainment >= p.first_half_attainment - 2.0 * se &&
         static_cast<double>(p.backlog_growth) <= 3.0 * std::sqrt(n);
}

void check_options(const ExperimentConfig& cfg, const SloSearchOptions& o) {
  if (cfg.workload.arrivals.kind == workloads::ArrivalConfig::Kind::replay) {
    throw core::Error("slo: replayed arrivals have no rate to search; use poisson, gamma, onoff or batches arrivals");
  }
  if (!(o.target > 0.0 && o.target <= 1.0) || !(o.tolerance > 0.0 && o.tolerance < 1.0) || o.max_probes < 2 ||
      o.replications < 1 || o.duration_s < 0.0 || o.measured_requests < 1 || o.warmup_fraction < 0.0 ||
      o.cooldown_fraction < 0.0 || o.warmup_fraction + o.cooldown_fraction >= 0.9) {
    throw core::Error(
        "slo: target must be in (0, 1], tolerance in (0, 1), max probes >= 2, replications >= 1, duration >= 0, "
        "measured requests >= 1, warm-up and cool-down fractions >= 0 with a sum below 0.9");
  }
  for (std::size_t i = 0; i < o.rates.size(); ++i) {
    if (!(o.rates[i] > 0.0) || (i > 0 && o.rates[i] <= o.rates[i - 1])) {
      throw core::Error("slo: the rates to probe must be positive and ascending");
    }
  }
}

// The rates a search steps through away from a probe. Cold (from the config's rate): doubling up and
// halving down. Warm (from an earlier replication's bracket, of width w): w, 2w, 4w ... away, never
// less than halving down (the cold search's own step), as across seeds the answer moves by about w.
class RateSteps {
 public:
  explicit RateSteps(std::optional<double> width) : warm_(width.has_value()), step_(width.value_or(0.0)) {}
  double up(double from) { return warm_ ? from + next() : from * 2.0; }
  double down(double from) { return warm_ ? std::max(from - next(), from / 2.0) : from / 2.0; }

 private:
  double next() {
    const double now = step_;
    step_ *= 2.0;
    return now;
  }
  bool warm_;
  double step_;
};

// The search's state for one replication: the probes it ran and what they say.
class ReplicationSearch {
 public:
  ReplicationSearch(const SloSearchOptions& o, int replication, const SloProber& prober, std::vector<SloProbe>& probes,
                    const std::function<void(const SloProbe&)>& on_probe)
      : o_(o),
        replication_(replication),
        prober_(prober),
        on_probe_(on_probe),
        probes_(probes),
        first_(probes.size()) {}

  // Probes `rate` on a window `scale` x the automatic one. A passing probe whose queue had not settled
  // is run again on a window twice as long (up to `max_scale`): near capacity a queue takes long to
  // reach steady state, and its first minutes look better than what it sustains. A failing probe only
  // gets worse with time. Returns whether it met the target.
  bool probe(double rate, double scale, double max_scale, bool confirmation) {
    SloProbe p;
    for (;; scale *= 2.0) {
      if (used_++ >= o_.max_probes) {
        throw core::Error(fmt::format("slo: no answer within {} probes (last rate {} req/s)", o_.max_probes, rate));
      }
      p = prober_(rate, replication_, scale);
      p.rate_rps = rate;
      p.replication = replication_;
      p.window_scale = scale;
      p.confirmation = confirmation;
      if (!o_.steady_state || o_.duration_s > 0.0 || p.summary.slo_attainment < o_.target || settled(p) ||
          scale * 2.0 > max_scale) {
        break;
      }
    }
    probes_.push_back(p);
    if (on_probe_) {
      on_probe_(p);
    }
    return p.summary.slo_attainment >= o_.target;
  }
  bool short_probe(double rate) { return probe(rate, 1.0, k_max_window_scale, false); }
  // A long probe: k_slo_confirm_multiple x the window of the search's probe at that rate (x the
  // automatic one when there was none), and never shorter than an earlier long probe: the window that
  // refuted a rate is the one the rates below it must hold on.
  bool long_probe(double rate) {
    double scale = 1.0;
    double longest = 0.0;
    for (std::size_t i = first_; i < probes_.size(); ++i) {
      const SloProbe& p = probes_[i];
      scale = p.rate_rps == rate && !p.confirmation ? p.window_scale : scale;
      longest = p.confirmation ? std::max(longest, p.window_scale) : longest;
    }
    const double min_scale = std::max(k_slo_confirm_multiple * scale, longest);
    return probe(rate, min_scale, std::max(min_scale, k_slo_confirm_multiple * k_max_window_scale), true);
  }
  // The rates this replication's short probes passed, at or below `rate`, highest first.
  std::vector<double> passed_at_or_below(double rate) const {
    std::vector<double> out;
    for (std::size_t i = first_; i < probes_.size(); ++i) {
      const SloProbe& p = probes_[i];
      if (!p.confirmation && p.rate_rps <= rate && p.summary.slo_attainment >= o_.target) {
        out.push_back(p.rate_rps);
      }
    }
    std::sort(out.begin(), out.end(), std::greater<>());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }
  // The replication's result once `answer` is known: the lowest failing rate above it, and the long
  // probe that held at it.
  SloReplication result(double answer, int failed_confirmations) const {
    SloReplication r;
    r.max_rate_rps = answer;
    r.failed_confirmations = failed_confirmations;
    for (std::size_t i = first_; i < probes_.size(); ++i) {
      const SloProbe& p = probes_[i];
      if (p.summary.slo_attainment < o_.target && p.rate_rps > answer &&
          !(p.rate_rps >= r.bracket_high_rps)) {  // NaN-safe minimum
        r.bracket_high_rps = p.rate_rps;
      }
      if (p.confirmation && p.rate_rps == answer && p.summary.slo_attainment >= o_.target) {
        r.confirmation = p;
      }
    }
    return r;
  }

 private:
  const SloSearchOptions& o_;
  int replication_;
  const SloProber& prober_;
  const std::function<void(const SloProbe&)>& on_probe_;
  std::vector<SloProbe>& probes_;
  std::size_t first_;
  int used_ = 0;
};

}  // namespace

std::optional<SloPrior> slo_prior(const SloReplication& r) {
  if (!(r.max_rate_rps > 0.0) || !(r.bracket_high_rps > r.max_rate_rps) || !std::isfinite(r.bracket_high_rps)) {
    return std::nullopt;
  }
  return SloPrior{r.max_rate_rps, r.bracket_high_rps};
}

SloReplication search_replication(const SloSearchOptions& o, double start_rps, int replication, const SloProber& prober,
                                  std::vector<SloProbe>& probes, const std::function<void(const SloProbe&)>& on_probe,
                                  const std::optional<SloPrior>& prior) {
  ReplicationSearch s(o, replication, prober, probes, on_probe);
  const bool warm = o.rates.empty() && prior && prior->low_rps > 0.0 && prior->high_rps > prior->low_rps;
  const double first = warm ? prior->low_rps : start_rps;
  const std::optional<double> width = warm ? std::optional<double>(prior->high_rps - prior->low_rps) : std::nullopt;
  // The short search: a grid, or bracketing then bisection. `lo` passed, `hi` failed (0 / NaN: none).
  double lo = 0.0;
  double hi = std::numeric_limits<double>::quiet_NaN();
  if (!o.rates.empty()) {
    std::vector<double> attainment;
    for (const double rate : o.rates) {
      s.short_probe(rate);
      attainment.push_back(probes.back().summary.slo_attainment);
    }
    std::tie(lo, hi) = curve_bracket(o.rates, attainment, o.target);
  } else {
    // Bracketing: up while probes pass, or down while they fail, from the config's rate or from the
    // prior's low end [L, H) (then H is the first step up and L - (H - L) the first down).
    RateSteps steps(width);
    if (s.short_probe(first)) {
      lo = first;
      for (hi = steps.up(lo); s.short_probe(hi); hi = steps.up(lo)) {
        lo = hi;
      }
    } else {
      hi = first;
      for (lo = steps.down(hi); !s.short_probe(lo); lo = steps.down(hi)) {
        hi = lo;
        if (lo < first * 1e-6) {
          lo = 0.0;
          break;
        }
      }
    }
    while (lo > 0.0 && (hi - lo) / hi > o.tolerance) {
      const double mid = (lo + hi) / 2.0;
      (s.short_probe(mid) ? lo : hi) = mid;
    }
  }
  if (!o.steady_state || lo == 0.0) {
    return s.result(lo, 0);  // a burst has no longer window to confirm on
  }
  // Confirmation: the rate found must hold on a long window too. Each one that does not becomes the
  // bracket's high end, and the next lower rate the short probes passed is tried, then halving.
  int failed = 0;
  double confirmed = 0.0;
  for (const double rate : s.passed_at_or_below(lo)) {
    if (s.long_probe(rate)) {
      confirmed = rate;
      break;
    }
    hi = rate;
    ++failed;
  }
  if (confirmed == 0.0 && o.rates.empty()) {
    // Down with long probes to a millionth of the start, by the bracketing's steps afresh: a warm search
    // has few passed rates to fall back on (a while loop: no floating-point loop counter).
    RateSteps back(width);
    double rate = back.down(hi);
    while (rate >= first * 1e-6) {
      if (s.long_probe(rate)) {
        confirmed = rate;
        break;
      }
      hi = rate;
      rate = back.down(rate);
    }
  }
  // The short probes proved optimistic: the search goes on between the two with long probes only.
  while (failed > 0 && o.rates.empty() && confirmed > 0.0 && (hi - confirmed) / hi > o.tolerance) {
    const double mid = (confirmed + hi) / 2.0;
    (s.long_probe(mid) ? confirmed : hi) = mid;
  }
  return s.result(confirmed, failed);
}

namespace {

// One replication's search with the simulator as its prober.
SloReplication search_one(const ExperimentConfig& cfg, const SloSearchOptions& o, int replication,
                          std::vector<SloProbe>& probes, const std::function<void(const SloProbe&)>& on_probe,
                          const std::optional<SloPrior>& prior) {
  const SloProber simulate = [&](double rate, int r, double scale) {
    const ExperimentConfig c = slo_probe_config(cfg, rate, o, r, scale);
    serving::Simulator sim(build_simulation(c, profile_pool_windows(c)));
    const serving::SimulationResult res = sim.run();
    SloProbe p{rate, r, res.summary, 0.0, 0.0, scale, 0, false};
    half_attainments(res.requests, c.serving, p);
    return p;
  };
  return search_replication(o, cfg.workload.arrivals.rate_rps, replication, simulate, probes, on_probe, prior);
}

}  // namespace

double max_rate_from_curve(const std::vector<double>& rates, const std::vector<double>& attainment, double target,
                           bool& censored) {
  censored = false;
  for (std::size_t i = 0; i < rates.size(); ++i) {
    if (std::isnan(attainment[i]) || attainment[i] >= target) {
      continue;
    }
    if (i == 0) {
      return 0.0;
    }
    const double a0 = attainment[i - 1];
    const double a1 = attainment[i];
    return rates[i - 1] + (a0 - target) / (a0 - a1) * (rates[i] - rates[i - 1]);
  }
  censored = !rates.empty();
  return rates.empty() ? std::numeric_limits<double>::quiet_NaN() : rates.back();
}

std::pair<double, double> curve_bracket(const std::vector<double>& rates, const std::vector<double>& attainment,
                                        double target) {
  double held = 0.0;
  for (std::size_t i = 0; i < rates.size(); ++i) {
    if (std::isnan(attainment[i])) {
      continue;
    }
    if (attainment[i] < target) {
      return {held, rates[i]};
    }
    held = rates[i];
  }
  return {held, std::numeric_limits<double>::quiet_NaN()};
}

RateInterval combine_brackets(const std::vector<double>& lows, const std::vector<double>& highs) {
  RateInterval out;
  std::vector<double> known_highs;
  for (const double h : highs) {
    out.censored += std::isnan(h) ? 1 : 0;
    if (!std::isnan(h)) {
      known_highs.push_back(h);
    }
  }
  if (lows.empty()) {
    out.low = std::numeric_limits<double>::quiet_NaN();
    return out;
  }
  const core::SampleSummary l = core::summarize_sample(lows);
  out.low = std::max(0.0, lows.size() >= 2 ? std::min(l.ci_low, l.mean) : lows.front());
  if (out.censored == 0 && !known_highs.empty()) {
    const core::SampleSummary h = core::summarize_sample(known_highs);
    out.high = known_highs.size() >= 2 ? std::max(h.ci_high, h.mean) : known_highs.front();
  }
  return out;
}

std::string format_rate_interval(double mean, const RateInterval& i) {
  if (std::isnan(mean)) {
    return "-";
  }
  if (i.censored > 0) {
    return fmt::format(">= {:.4g} [{:.4g}, -]", mean, i.low);
  }
  return fmt::format("{:.4g} [{:.4g}, {:.4g}]", mean, i.low, i.high);
}

// DP ranks over every pool.
std::int64_t total_ranks(const ExperimentConfig& cfg) {
  std::int64_t ranks = 0;
  for (const serving::PoolSpec& pool : cfg.pools) {
    ranks += pool.gpus() / pool.attention_tp;
  }
  return ranks;
}

std::int64_t slo_concurrency(const ExperimentConfig& cfg) {
  return total_ranks(cfg) * cfg.serving.scheduler.max_running_requests;
}

ExperimentConfig slo_probe_config(const ExperimentConfig& cfg, double rate, const SloSearchOptions& o, int replication,
                                  double window_scale) {
  ExperimentConfig c =
      with_replication(cfg, replication, VariedFamilies{.workload = true, .cluster = false, .policy = false});
  c.workload.arrivals.rate_rps = rate;
  if (!o.steady_state) {
    return c;
  }
  const double measured_share = 1.0 - o.warmup_fraction - o.cooldown_fraction;
  const double requests =
      static_cast<double>(std::max(o.measured_requests, k_concurrency_multiple * slo_concurrency(cfg)));
  const double duration_s = window_scale * (o.duration_s > 0.0 ? o.duration_s : requests / rate / measured_share);
  c.workload.num_requests = 0;
  c.workload.duration_s = duration_s;
  c.serving.window.warmup_s = o.warmup_fraction * duration_s;
  c.serving.window.cooldown_s = o.cooldown_fraction * duration_s;
  // Every measured request's verdict is known by then: it met its targets or it never can. The probe's
  // window is the search's, so is its end: the config's `max_sim_time_s` (an hour by default) bounds the
  // config's own run, and would cut a slow probe's window short and fail it whatever its rate (the
  // events, not the simulated seconds, cost CPU).
  const double longest_output = static_cast<double>(std::max<std::int64_t>(1, c.workload.output.largest()));
  const double verdict_s =
      duration_s + c.serving.slo.ttft_ms / 1e3 + c.serving.slo.tpot_ms / 1e3 * (longest_output - 1.0);
  c.serving.max_sim_time_s = verdict_s + 1e-3;
  return c;
}

SloSearchResult search_max_rate(const ExperimentConfig& cfg, const SloSearchOptions& o,
                                const std::function<void(const SloProbe&)>& on_probe,
                                const std::optional<SloPrior>& prior) {
  check_options(cfg, o);
  SloSearchResult res;
  res.bracketed = true;
  std::vector<double> highs;
  highs.reserve(static_cast<std::size_t>(o.replications));
  for (int r = 0; r < o.replications; ++r) {
    // Later replications start from replication 0's bracket: only their seeds differ.
    std::optional<SloPrior> from = prior;
    if (r > 0) {
      if (const std::optional<SloPrior> first = slo_prior(res.replications.front()); first) {
        from = first;
      }
    }
    SloReplication one = search_one(cfg, o, r, res.probes, on_probe, from);
    res.bracketed = res.bracketed && one.max_rate_rps > 0.0 && !one.censored();
    res.max_rate_by_replication.push_back(one.max_rate_rps);
    highs.push_back(one.bracket_high_rps);
    res.replications.push_back(std::move(one));
  }
  res.max_rate = core::summarize_sample(res.max_rate_by_replication, core::MetricKind::non_negative);
  res.max_rate_rps = res.max_rate.mean;
  res.interval = combine_brackets(res.max_rate_by_replication, highs);
  std::sort(res.probes.begin(), res.probes.end(), [](const SloProbe& a, const SloProbe& b) {
    return std::tuple(a.rate_rps, a.replication, a.confirmation, a.window_scale) <
           std::tuple(b.rate_rps, b.replication, b.confirmation, b.window_scale);
  });
  if (!o.steady_state) {
    res.warnings.push_back(fmt::format(
        "steady state is off: each probe serves the config's {} requests, so the answer measures how a burst "
        "drains, not a rate the system sustains",
        cfg.workload.num_requests));
  }
  // The probe the answer stands on (its confirmation; in burst mode the highest passing probe at it):
  // too few measured requests make the attainment there a coin toss, and a window the system can hold
  // at once cannot show overload.
  const std::int64_t concurrency = slo_concurrency(cfg);
  for (std::size_t r = 0; r < res.replications.size(); ++r) {
    const SloReplication& rep = res.replications[r];
    if (rep.failed_confirmations > 0) {
      res.warnings.push_back(fmt::format(
          "replication {}: {} rate(s) the search's probes passed missed the target on a window {:g}x as long "
          "(a queueing cliff); the answer {:.4g} req/s is the highest rate that held on the long window",
          r, rep.failed_confirmations, k_slo_confirm_multiple, rep.max_rate_rps));
    }
    const SloProbe* at = rep.confirmation ? &*rep.confirmation : nullptr;
    for (const SloProbe& p : res.probes) {
      at = at == nullptr && p.replication == static_cast<int>(r) && p.rate_rps == rep.max_rate_rps &&
                   p.summary.slo_attainment >= o.target
               ? &p
               : at;
    }
    if (at == nullptr) {
      continue;
    }
    const SloProbe& p = *at;
    if (o.steady_state && !settled(p)) {
      res.warnings.push_back(fmt::format(
          "replication {}: at the answer ({:.4g} req/s) the queue had not settled even on a window {:g}x the "
          "automatic one (attainment {:.1f} % in the first half, {:.1f} % in the second; {:+} requests in the "
          "system over the window): the answer may be optimistic; lengthen the duration",
          p.replication, p.rate_rps, p.window_scale, 100.0 * p.first_half_attainment, 100.0 * p.second_half_attainment,
          p.backlog_growth));
    }
    if (p.summary.requests < concurrency) {
      res.warnings.push_back(fmt::format(
          "replication {}: the answer's window measured {} requests, fewer than the {} the system holds at once "
          "({} ranks x {} running): overload cannot show; lengthen the duration",
          p.replication, p.summary.requests, concurrency, total_ranks(cfg),
          cfg.serving.scheduler.max_running_requests));
    }
    if (p.summary.requests < k_min_trusted_slo_requests) {
      res.warnings.push_back(fmt::format("replication {}: {}", p.replication, few_requests_warning(p.summary)));
    }
  }
  return res;
}

std::string slo_curve_csv(const SloSearchResult& r) {
  std::string out =
      "rate_rps,replication,attainment,ttft_attainment,tpot_attainment,goodput_rps,ttft_p90_ms,tpot_p90_ms,"
      "e2e_p90_ms,requests,finished,measured_s,window_scale,first_half_attainment,second_half_attainment,"
      "backlog_growth,confirmation\n";
  for (const SloProbe& p : r.probes) {
    const auto& s = p.summary;
    fmt::format_to(std::back_inserter(out), "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", p.rate_rps,
                   p.replication, s.slo_attainment, s.slo_ttft_attainment, s.slo_tpot_attainment, s.goodput_rps,
                   s.ttft_ms.p90, s.tpot_ms.p90, s.e2e_ms.p90, s.requests, s.requests_finished, s.measured_s,
                   p.window_scale, p.first_half_attainment, p.second_half_attainment, p.backlog_growth,
                   p.confirmation ? 1 : 0);
  }
  return out;
}

namespace {

// NaN has no JSON form: null stands for it.
nlohmann::ordered_json number_or_null(double x) {
  return std::isnan(x) ? nlohmann::ordered_json() : nlohmann::ordered_json(x);
}

}  // namespace

std::string slo_result_json(const SloSearchResult& r, const SloSearchOptions& o) {
  nlohmann::ordered_json j;
  j["target"] = o.target;
  j["steady_state"] = o.steady_state;
  j["confirm_multiple"] = k_slo_confirm_multiple;
  j["max_rate_rps"] = number_or_null(r.max_rate_rps);
  j["interval_low_rps"] = number_or_null(r.interval.low);
  j["interval_high_rps"] = number_or_null(r.interval.high);
  j["censored"] = r.interval.censored;
  j["bracketed"] = r.bracketed;
  j["replications"] = nlohmann::ordered_json::array();
  for (const SloReplication& rep : r.replications) {
    nlohmann::ordered_json e;
    e["max_rate_rps"] = rep.max_rate_rps;
    e["bracket_low_rps"] = rep.max_rate_rps;
    e["bracket_high_rps"] = number_or_null(rep.bracket_high_rps);
    e["censored"] = rep.censored();
    e["failed_confirmations"] = rep.failed_confirmations;
    if (rep.confirmation) {
      const SloProbe& c = *rep.confirmation;
      e["confirmation"] = {{"rate_rps", c.rate_rps},
                           {"window_scale", c.window_scale},
                           {"requests", c.summary.requests},
                           {"attainment", number_or_null(c.summary.slo_attainment)},
                           {"ttft_p90_ms", number_or_null(c.summary.ttft_ms.p90)},
                           {"tpot_p90_ms", number_or_null(c.summary.tpot_ms.p90)}};
    } else {
      e["confirmation"] = nullptr;
    }
    j["replications"].push_back(std::move(e));
  }
  j["warnings"] = r.warnings;
  return j.dump(2) + "\n";
}

std::string slo_window_warning(const SloSearchOptions& o, const std::string& key) {
  if (!o.steady_state || o.duration_s > 0.0 || o.measured_requests >= k_min_trusted_slo_requests) {
    return "";
  }
  return fmt::format(
      "{}.measured_requests = {}: each probe measures fewer than the {} requests that make the attainment at the "
      "answer trustworthy (95 % interval wider than about +-3 points at 90 %); raise it",
      key, o.measured_requests, k_min_trusted_slo_requests);
}

}  // namespace epsim::experiments
