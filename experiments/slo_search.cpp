#include "experiments/slo_search.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "experiments/build_simulation.hpp"
#include "sim/core/error.hpp"

namespace epsim::experiments {

SloSearchResult search_max_rate(const ExperimentConfig& cfg, const SloSearchOptions& o,
                                const std::function<void(const SloProbe&)>& on_probe) {
  if (cfg.workload.arrivals.kind == workloads::ArrivalConfig::Kind::replay) {
    throw core::Error("slo: replayed arrivals have no rate to search; use poisson, gamma or onoff arrivals");
  }
  SloSearchResult res;
  const auto probe = [&](double rate) {
    if (static_cast<int>(res.probes.size()) >= o.max_probes) {
      throw core::Error(fmt::format("slo: no answer within {} probes (last rate {} req/s)", o.max_probes, rate));
    }
    ExperimentConfig c = cfg;
    c.workload.arrivals.rate_rps = rate;
    serving::Simulator sim(build_simulation(c));
    SloProbe p{rate, sim.run().summary};
    res.probes.push_back(p);
    if (on_probe) {
      on_probe(p);
    }
    return p.summary.slo_attainment >= o.target;
  };
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
  res.bracketed = lo > 0.0;
  while (lo > 0.0 && (hi - lo) / hi > o.tolerance) {
    const double mid = (lo + hi) / 2.0;
    (probe(mid) ? lo : hi) = mid;
  }
  res.max_rate_rps = lo;
  std::sort(res.probes.begin(), res.probes.end(),
            [](const SloProbe& a, const SloProbe& b) { return a.rate_rps < b.rate_rps; });
  return res;
}

std::string slo_curve_csv(const SloSearchResult& r) {
  std::string out =
      "rate_rps,attainment,ttft_attainment,tpot_attainment,goodput_rps,ttft_p90_ms,tpot_p90_ms,e2e_p90_ms,requests,"
      "finished\n";
  for (const SloProbe& p : r.probes) {
    const auto& s = p.summary;
    fmt::format_to(std::back_inserter(out), "{},{},{},{},{},{},{},{},{},{}\n", p.rate_rps, s.slo_attainment,
                   s.slo_ttft_attainment, s.slo_tpot_attainment, s.goodput_rps, s.ttft_ms.p90, s.tpot_ms.p90,
                   s.e2e_ms.p90, s.requests, s.requests_finished);
  }
  return out;
}

}  // namespace epsim::experiments
