#include "experiments/studies/slo_search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "experiments/assembly/build_simulation.hpp"
#include "experiments/assembly/replication.hpp"

namespace epsim::experiments {
namespace {

// Below this many measured requests the attainment at the answer is too noisy to trust (binomial
// 95 % half-width ~3 points at 90 %).
constexpr std::int64_t k_min_trusted_requests = 400;

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

// One replication's search (or grid); appends its probes.
double search_one(const ExperimentConfig& cfg, const SloSearchOptions& o, int replication,
                  std::vector<SloProbe>& probes, bool& bracketed,
                  const std::function<void(const SloProbe&)>& on_probe) {
  int used = 0;
  const auto probe = [&](double rate) {
    if (used++ >= o.max_probes) {
      throw core::Error(fmt::format("slo: no answer within {} probes (last rate {} req/s)", o.max_probes, rate));
    }
    // A passing probe whose queue had not settled is run again on a window twice as long (up to
    // k_max_window_scale): near capacity a queue takes long to reach steady state, and its first
    // minutes look better than what it sustains. A failing probe only gets worse with time.
    SloProbe p;
    for (double scale = 1.0;; scale *= 2.0) {
      const ExperimentConfig c = slo_probe_config(cfg, rate, o, replication, scale);
      serving::Simulator sim(build_simulation(c, profile_pool_windows(c)));
      const serving::SimulationResult res = sim.run();
      p = SloProbe{rate, replication, res.summary, 0.0, 0.0, scale, 0};
      half_attainments(res.requests, c.serving, p);
      if (!o.steady_state || o.duration_s > 0.0 || p.summary.slo_attainment < o.target || settled(p) ||
          scale * 2.0 > k_max_window_scale) {
        break;
      }
    }
    probes.push_back(p);
    if (on_probe) {
      on_probe(p);
    }
    return p.summary.slo_attainment >= o.target;
  };
  if (!o.rates.empty()) {
    std::vector<double> attainment;
    for (const double rate : o.rates) {
      probe(rate);
      attainment.push_back(probes.back().summary.slo_attainment);
    }
    bool censored = false;
    const double best = max_rate_from_curve(o.rates, attainment, o.target, censored);
    bracketed = bracketed && best > 0.0 && !censored;
    return best;
  }
  double lo = 0.0;
  double hi = 0.0;
  const double start = cfg.workload.arrivals.rate_rps;
  if (probe(start)) {
    lo = start;
    for (hi = start * 2.0; probe(hi); hi *= 2.0) {
      lo = hi;
    }
  } else {
    hi = start;
    for (lo = start / 2.0; !probe(lo); lo /= 2.0) {
      hi = lo;
      if (lo < start * 1e-6) {
        lo = 0.0;
        break;
      }
    }
  }
  bracketed = bracketed && lo > 0.0;
  while (lo > 0.0 && (hi - lo) / hi > o.tolerance) {
    const double mid = (lo + hi) / 2.0;
    (probe(mid) ? lo : hi) = mid;
  }
  return lo;
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
  const double duration_s = o.duration_s > 0.0 ? o.duration_s : window_scale * requests / rate / measured_share;
  c.workload.num_requests = 0;
  c.workload.duration_s = duration_s;
  c.serving.window.warmup_s = o.warmup_fraction * duration_s;
  c.serving.window.cooldown_s = o.cooldown_fraction * duration_s;
  // Every measured request's verdict is known by then: it met its targets or it never can.
  const double longest_output = static_cast<double>(std::max<std::int64_t>(1, c.workload.output.largest()));
  const double verdict_s =
      duration_s + c.serving.slo.ttft_ms / 1e3 + c.serving.slo.tpot_ms / 1e3 * (longest_output - 1.0);
  c.serving.max_sim_time_s = std::min(c.serving.max_sim_time_s, verdict_s + 1e-3);
  return c;
}

SloSearchResult search_max_rate(const ExperimentConfig& cfg, const SloSearchOptions& o,
                                const std::function<void(const SloProbe&)>& on_probe) {
  check_options(cfg, o);
  SloSearchResult res;
  res.bracketed = true;
  for (int r = 0; r < o.replications; ++r) {
    res.max_rate_by_replication.push_back(search_one(cfg, o, r, res.probes, res.bracketed, on_probe));
  }
  res.max_rate = core::summarize_sample(res.max_rate_by_replication, core::MetricKind::non_negative);
  res.max_rate_rps = res.max_rate.mean;
  std::sort(res.probes.begin(), res.probes.end(), [](const SloProbe& a, const SloProbe& b) {
    return a.rate_rps != b.rate_rps ? a.rate_rps < b.rate_rps : a.replication < b.replication;
  });
  if (!o.steady_state) {
    res.warnings.push_back(fmt::format(
        "steady state is off: each probe serves the config's {} requests, so the answer measures how a burst "
        "drains, not a rate the system sustains",
        cfg.workload.num_requests));
  }
  // The probes at the answer: too few measured requests make the attainment there a coin toss, and a
  // window the system can hold at once cannot show overload.
  const std::int64_t concurrency = slo_concurrency(cfg);
  // Per replication, the probe the answer stands on: the highest passing rate at or below it (on a
  // grid the answer is interpolated between that probe and the next).
  std::vector<double> answer_probe(static_cast<std::size_t>(o.replications), 0.0);
  for (const SloProbe& p : res.probes) {
    const auto r = static_cast<std::size_t>(p.replication);
    if (p.summary.slo_attainment >= o.target && p.rate_rps <= res.max_rate_by_replication[r]) {
      answer_probe[r] = std::max(answer_probe[r], p.rate_rps);
    }
  }
  for (const SloProbe& p : res.probes) {
    const bool at_answer = p.rate_rps == answer_probe[static_cast<std::size_t>(p.replication)];
    if (at_answer && o.steady_state && !settled(p)) {
      res.warnings.push_back(fmt::format(
          "replication {}: at the answer ({:.4g} req/s) the queue had not settled even on a window {:g}x the "
          "automatic one (attainment {:.1f} % in the first half, {:.1f} % in the second; {:+} requests in the "
          "system over the window): the answer may be optimistic; lengthen the duration",
          p.replication, p.rate_rps, p.window_scale, 100.0 * p.first_half_attainment, 100.0 * p.second_half_attainment,
          p.backlog_growth));
    }
    if (at_answer && p.summary.requests < concurrency) {
      res.warnings.push_back(fmt::format(
          "replication {}: the answer's window measured {} requests, fewer than the {} the system holds at once "
          "({} ranks x {} running): overload cannot show; lengthen the duration",
          p.replication, p.summary.requests, concurrency, total_ranks(cfg),
          cfg.serving.scheduler.max_running_requests));
    }
    if (at_answer && p.summary.requests < k_min_trusted_requests) {
      // Wilson's score interval: unlike the normal approximation it has a width at 0 % and 100 %.
      const double a = p.summary.slo_attainment;
      const double n = std::max<double>(1.0, static_cast<double>(p.summary.requests));
      constexpr double z = 1.96;
      const double half = z / (1.0 + z * z / n) * std::sqrt(a * (1.0 - a) / n + z * z / (4.0 * n * n));
      res.warnings.push_back(fmt::format(
          "replication {}: the answer rests on {} measured requests (attainment {:.1f} %, 95 % interval about +- "
          "{:.1f} points); raise the duration or the measured requests",
          p.replication, p.summary.requests, 100.0 * a, 100.0 * half));
    }
  }
  return res;
}

std::string slo_curve_csv(const SloSearchResult& r) {
  std::string out =
      "rate_rps,replication,attainment,ttft_attainment,tpot_attainment,goodput_rps,ttft_p90_ms,tpot_p90_ms,"
      "e2e_p90_ms,requests,finished,measured_s,window_scale,first_half_attainment,second_half_attainment,"
      "backlog_growth\n";
  for (const SloProbe& p : r.probes) {
    const auto& s = p.summary;
    fmt::format_to(std::back_inserter(out), "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", p.rate_rps,
                   p.replication, s.slo_attainment, s.slo_ttft_attainment, s.slo_tpot_attainment, s.goodput_rps,
                   s.ttft_ms.p90, s.tpot_ms.p90, s.e2e_ms.p90, s.requests, s.requests_finished, s.measured_s,
                   p.window_scale, p.first_half_attainment, p.second_half_attainment, p.backlog_growth);
  }
  return out;
}

}  // namespace epsim::experiments
