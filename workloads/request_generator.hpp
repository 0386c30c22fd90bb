#pragma once
// Produces requests one at a time (never the whole list): Poisson arrivals at a rate, lengths from two
// distributions, each from its own random stream so changing one never shifts the other.
#include <optional>

#include "sim/core/random_streams.hpp"
#include "workloads/length_distribution.hpp"
#include "workloads/request.hpp"

namespace epsim::workloads {

struct WorkloadConfig {
  double rate_rps = 4.0;          ///< Poisson arrival rate, requests per second
  std::int64_t num_requests = 0;  ///< stop after this many requests (0 = no count limit)
  double duration_s = 0.0;        ///< stop generating arrivals after this time (0 = no time limit)
  LengthDistribution prompt;
  LengthDistribution output;
};

WorkloadConfig parse_workload(core::ParamTable& t);

class RequestGenerator {
 public:
  RequestGenerator(const WorkloadConfig& cfg, const core::RandomStreams& streams);
  /// The next request, or nullopt when the count or duration limit is reached.
  std::optional<RequestSpec> next();

 private:
  WorkloadConfig cfg_;
  core::Rng arrival_rng_;
  core::Rng length_rng_;
  core::Time clock_ns_ = 0;
  std::int64_t issued_ = 0;
};

}  // namespace epsim::workloads
