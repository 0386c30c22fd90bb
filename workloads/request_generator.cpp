#include "workloads/request_generator.hpp"

#include <boost/random/exponential_distribution.hpp>

namespace epsim::workloads {

WorkloadConfig parse_workload(core::ParamTable& t) {
  WorkloadConfig c;
  c.rate_rps = t.real("rate_rps", c.rate_rps, "Poisson arrival rate, requests per second", core::k_positive);
  c.num_requests = t.integer("num_requests", 200, "requests to generate (0 = limited by duration_s)", {0, 1LL << 40});
  c.duration_s = t.real("duration_s", 0.0, "generate arrivals for this many seconds (0 = limited by num_requests)",
                        core::k_non_negative);
  if (!t.documenting() && c.num_requests == 0 && c.duration_s == 0.0) {
    t.fail("num_requests", "set num_requests or duration_s (both are 0: the workload would never end)");
  }
  auto prompt = t.table("prompt_tokens", "prompt length distribution");
  c.prompt = parse_length_distribution(prompt, 1024);
  auto output = t.table("output_tokens", "output length distribution");
  c.output = parse_length_distribution(output, 128);
  t.finish();
  return c;
}

RequestGenerator::RequestGenerator(const WorkloadConfig& cfg, const core::RandomStreams& streams)
    : cfg_(cfg), arrival_rng_(streams.stream("arrivals")), length_rng_(streams.stream("lengths")) {}

std::optional<RequestSpec> RequestGenerator::next() {
  if (cfg_.num_requests > 0 && issued_ >= cfg_.num_requests) {
    return std::nullopt;
  }
  const double gap_s = boost::random::exponential_distribution<double>(cfg_.rate_rps)(arrival_rng_);
  const core::Time at = clock_ns_ + core::from_seconds(gap_s);
  if (cfg_.duration_s > 0.0 && at > core::from_seconds(cfg_.duration_s)) {
    return std::nullopt;
  }
  clock_ns_ = at;
  RequestSpec r;
  r.id = issued_++;
  r.arrival_ns = at;
  r.prompt_tokens = cfg_.prompt.sample(length_rng_);
  r.output_tokens = cfg_.output.sample(length_rng_);
  return r;
}

}  // namespace epsim::workloads
