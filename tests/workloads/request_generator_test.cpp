// SPDX-License-Identifier: Apache-2.0
#include <toml++/toml.h>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/params.hpp"
#include "core/statistics.hpp"
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

TEST_CASE("Gamma arrivals have the configured mean and CV") {
  workloads::ArrivalConfig c;
  c.kind = workloads::ArrivalConfig::Kind::gamma;
  c.rate_rps = 10.0;
  c.cv = 2.0;
  workloads::ArrivalProcess a(c, core::Rng(12));
  core::RunningStats gaps;
  core::Time prev = 0;
  for (int i = 0; i < 200000; ++i) {
    const core::Time t = a.next();
    gaps.add(core::to_seconds(t - prev));
    prev = t;
  }
  // Mean 0.1 s with sd 0.2 s per gap: the sample mean's sd is 0.2 / sqrt(2e5) = 4.5e-4.
  REQUIRE(gaps.mean() == Approx(0.1).margin(5 * 4.5e-4));
  REQUIRE(gaps.stddev() / gaps.mean() == Approx(2.0).margin(0.06));
}

TEST_CASE("on/off bursts keep the configured mean rate and are burstier than Poisson") {
  workloads::ArrivalConfig c;
  c.kind = workloads::ArrivalConfig::Kind::onoff;
  c.rate_rps = 20.0;
  c.on_s = 2.0;
  c.off_s = 6.0;
  c.off_rate_fraction = 0.1;
  // ON rate: 20 * 8 / (2 + 0.6) = 61.54/s; OFF rate 6.15/s.
  REQUIRE(c.on_rate_rps() == Approx(20.0 * 8.0 / 2.6));
  workloads::ArrivalProcess a(c, core::Rng(13));
  core::RunningStats gaps;
  core::Time prev = 0;
  core::Time t = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    t = a.next();
    gaps.add(core::to_seconds(t - prev));
    prev = t;
  }
  // Over ~10,000 s (~1,250 ON/OFF cycles) the count is within a few % of rate x time.
  REQUIRE(static_cast<double>(n) / core::to_seconds(t) == Approx(20.0).epsilon(0.04));
  REQUIRE(gaps.stddev() / gaps.mean() > 1.3);
}

TEST_CASE("batch arrivals bring batch_size requests at one instant, a batch every batch_size / rate") {
  workloads::ArrivalConfig c;
  c.kind = workloads::ArrivalConfig::Kind::batches;
  c.rate_rps = 16.0;
  c.batch_size = 4;
  workloads::ArrivalProcess a(c, core::Rng(14));
  // 4 / 16 rps = 0.25 s between batches; the first at t = 0.
  for (int batch = 0; batch < 5; ++batch) {
    for (int i = 0; i < 4; ++i) {
      REQUIRE(a.next() == static_cast<core::Time>(batch) * 250000000);
    }
  }
}

TEST_CASE("replayed arrivals come from the CSV, malformed rows name the line") {
  const auto path = std::filesystem::temp_directory_path() / "epsim_replay_test.csv";
  std::ofstream(path) << "arrival_s,prompt_tokens,output_tokens\n0.5,100,10\n# comment\n1.25,200,20\n";
  workloads::WorkloadConfig cfg;
  cfg.arrivals.kind = workloads::ArrivalConfig::Kind::replay;
  cfg.arrivals.replay_file = path.string();
  workloads::RequestGenerator gen(cfg, core::RandomStreams(1));
  const auto a = gen.next();
  REQUIRE(a->arrival_ns == 500000000);
  REQUIRE(a->prompt_tokens == 100);
  const auto b = gen.next();
  REQUIRE(b->arrival_ns == 1250000000);
  REQUIRE(b->output_tokens == 20);
  REQUIRE(b->id == 1);
  REQUIRE_FALSE(gen.next());
  std::ofstream(path) << "0.5,100,10\n0.2,5,5\n";
  workloads::RequestGenerator bad(cfg, core::RandomStreams(1));
  REQUIRE(bad.next());
  REQUIRE_THROWS_WITH(bad.next(),
                      Catch::Contains("epsim_replay_test.csv: line 2: arrival times must be non-decreasing"));
  // Out-of-range values are refused before they overflow the nanosecond clock or stall a run: a time
  // past 1e9 s (int64 ns end at ~9.2e9 s), a negative or infinite time, a prompt of 2^63 - 1 tokens.
  for (const auto& [row, what] :
       {std::pair{"1e10,100,10\n", "arrival time 1e+10 s is outside [0, 1e+09] s"},
        std::pair{"-1,100,10\n", "arrival time -1 s is outside [0, 1e+09] s"},
        std::pair{"inf,100,10\n", "arrival time inf s is outside [0, 1e+09] s"},
        std::pair{"0.5,9223372036854775807,10\n", "prompt_tokens and output_tokens must be in [1, 4194304]"}}) {
    std::ofstream(path) << row;
    workloads::RequestGenerator g(cfg, core::RandomStreams(1));
    INFO(row);
    REQUIRE_THROWS_WITH(g.next(), Catch::Contains(std::string("epsim_replay_test.csv: line 1: ") + what));
  }
  // Token counts must be whole integers: neither a prefix ("100abc") nor a fraction is read as 100.
  for (const char* row : {"0.5,100abc,10\n", "0.5,100.5,10\n", "0.5,100,10x\n", "0.5s,100,10\n"}) {
    std::ofstream(path) << row;
    workloads::RequestGenerator g(cfg, core::RandomStreams(1));
    REQUIRE_THROWS_WITH(g.next(), Catch::Contains("epsim_replay_test.csv: line 1: not a number in"));
  }
  // A file without a row (empty, or only comments and a header) is an error, not a run of no requests;
  // the header may follow comments.
  for (const char* text : {"", "# nothing yet\n", "# exported by a tool\n\narrival_s,prompt_tokens,output_tokens\n"}) {
    std::ofstream(path) << text;
    workloads::RequestGenerator g(cfg, core::RandomStreams(1));
    INFO(text);
    REQUIRE_THROWS_WITH(g.next(), Catch::EndsWith("epsim_replay_test.csv: no arrival rows (expected lines arrival_s or "
                                                  "arrival_s,prompt_tokens,output_tokens)"));
  }
  std::ofstream(path) << "# exported by a tool\narrival_s,prompt_tokens,output_tokens\n0.5,100,10\n";
  workloads::RequestGenerator after_comment(cfg, core::RandomStreams(1));
  REQUIRE(after_comment.next()->prompt_tokens == 100);
  REQUIRE_FALSE(after_comment.next());
  std::filesystem::remove(path);
}

TEST_CASE("a replayed file is replayed whole unless num_requests says otherwise") {
  // 250 rows: more than the 200 requests a generated workload defaults to.
  const auto path = std::filesystem::temp_directory_path() / "epsim_replay_whole.csv";
  {
    std::ofstream out(path);
    for (int i = 0; i < 250; ++i) {
      out << 0.01 * i << ",10,2\n";
    }
  }
  const auto count = [&](const std::string& extra) {
    const toml::table t =
        toml::parse("arrival = \"replay\"\nreplay_file = \"" + path.generic_string() + "\"\n" + extra);
    core::ParamTable p({core::ParamLayer{&t, "test"}}, "workload");
    const workloads::WorkloadConfig cfg = workloads::parse_workload(p);
    workloads::RequestGenerator gen(cfg, core::RandomStreams(1));
    int n = 0;
    while (gen.next()) {
      ++n;
    }
    return n;
  };
  REQUIRE(count("") == 250);
  REQUIRE(count("num_requests = 100\n") == 100);
  // Generated workloads keep their default of 200.
  const toml::table g = toml::parse("rate_rps = 5.0\n");
  core::ParamTable pg({core::ParamLayer{&g, "test"}}, "workload");
  REQUIRE(workloads::parse_workload(pg).num_requests == 200);
  std::filesystem::remove(path);
}

TEST_CASE("the shipped ShareGPT-like tables have the published means (about 220 in, 200 out)") {
  for (const auto& [table, mean] : {std::pair{"sharegpt-prompt", 220.0}, std::pair{"sharegpt-output", 200.0}}) {
    const toml::table t = toml::parse(std::string("distribution = \"empirical\"\ntable = \"") + table + "\"\n");
    core::ParamTable p({core::ParamLayer{&t, "test"}}, "len");
    const auto d = workloads::parse_length_distribution(p, 1);
    REQUIRE(d.values.size() == 256);
    REQUIRE(d.expected() == Approx(mean).margin(0.5));
    core::Rng rng(7);
    core::RunningStats s;
    for (int i = 0; i < 100000; ++i) {
      s.add(static_cast<double>(d.sample(rng)));
    }
    REQUIRE(s.mean() == Approx(mean).epsilon(0.02));
  }
}
