#include <toml++/toml.h>
#include <catch2/catch.hpp>
#include <cmath>

#include "sim/core/params.hpp"
#include "sim/core/statistics.hpp"
#include "workloads/request_generator.hpp"

using namespace epsim;

TEST_CASE("Poisson arrivals: inter-arrival mean and CV within confidence bounds") {
  workloads::WorkloadConfig cfg;
  cfg.arrivals.rate_rps = 25.0;
  cfg.num_requests = 100000;
  workloads::RequestGenerator gen(cfg, core::RandomStreams(3));
  core::RunningStats gaps;
  core::Time prev = 0;
  int n = 0;
  while (auto r = gen.next()) {
    gaps.add(core::to_seconds(r->arrival_ns - prev));
    prev = r->arrival_ns;
    REQUIRE(r->id == n);
    ++n;
  }
  REQUIRE(n == 100000);
  // Exponential(25/s): mean 0.04 s, sd 0.04 s; the sample mean's sd is 0.04/sqrt(1e5) = 1.26e-4: 5 sigma.
  REQUIRE(std::abs(gaps.mean() - 0.04) < 5 * 0.04 / std::sqrt(1e5));
  REQUIRE(gaps.stddev() / gaps.mean() == Approx(1.0).margin(0.02));
}

TEST_CASE("the duration limit stops arrivals") {
  workloads::WorkloadConfig cfg;
  cfg.arrivals.rate_rps = 10.0;
  cfg.num_requests = 0;
  cfg.duration_s = 100.0;
  workloads::RequestGenerator gen(cfg, core::RandomStreams(1));
  int n = 0;
  core::Time last = 0;
  while (auto r = gen.next()) {
    ++n;
    last = r->arrival_ns;
  }
  REQUIRE(last <= core::from_seconds(100.0));
  // Poisson(1000): sd 31.6; 5 sigma.
  REQUIRE(std::abs(n - 1000) < 160);
}

TEST_CASE("length distributions: fixed, uniform bounds, lognormal mean and CV") {
  core::Rng rng(11);
  workloads::LengthDistribution fixed;
  fixed.value = 1024;
  REQUIRE(fixed.sample(rng) == 1024);

  workloads::LengthDistribution uni;
  uni.kind = workloads::LengthDistribution::Kind::uniform;
  uni.min = 10;
  uni.max = 20;
  core::RunningStats us;
  for (int i = 0; i < 20000; ++i) {
    const auto x = uni.sample(rng);
    REQUIRE(x >= 10);
    REQUIRE(x <= 20);
    us.add(static_cast<double>(x));
  }
  REQUIRE(us.mean() == Approx(15.0).margin(0.1));

  workloads::LengthDistribution ln;
  ln.kind = workloads::LengthDistribution::Kind::lognormal;
  ln.mean = 220.0;
  ln.cv = 0.8;
  ln.min = 1;
  ln.max = 1 << 20;
  core::RunningStats ls;
  for (int i = 0; i < 200000; ++i) {
    ls.add(static_cast<double>(ln.sample(rng)));
  }
  // Rounding to integers moves the mean by < 0.5; the sample mean's sd is 176/sqrt(2e5) = 0.39.
  REQUIRE(ls.mean() == Approx(220.0).margin(2.5));
  REQUIRE(ls.stddev() / ls.mean() == Approx(0.8).margin(0.03));
}

TEST_CASE("arrivals and lengths use separate streams") {
  workloads::WorkloadConfig a;
  a.num_requests = 50;
  a.prompt.kind = workloads::LengthDistribution::Kind::uniform;
  a.prompt.min = 1;
  a.prompt.max = 1000;
  workloads::WorkloadConfig b = a;
  b.output.kind = workloads::LengthDistribution::Kind::uniform;  // draws more from the length stream
  b.output.min = 1;
  b.output.max = 10;
  workloads::RequestGenerator ga(a, core::RandomStreams(9));
  workloads::RequestGenerator gb(b, core::RandomStreams(9));
  for (int i = 0; i < 50; ++i) {
    REQUIRE(ga.next()->arrival_ns == gb.next()->arrival_ns);
  }
}
