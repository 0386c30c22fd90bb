// SPDX-License-Identifier: Apache-2.0
#include "workloads/request_generator.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "workloads/workload_bounds.hpp"

namespace epsim::workloads {

namespace {

// What the arrivals will be: a count that fits in memory, and at least one request inside simulated time
// (a run that generates none measured nothing but exited 0).
void check_request_count(core::ParamTable& t, const WorkloadConfig& c) {
  const double rate = c.arrivals.rate_rps;
  if (c.duration_s > 0.0 && c.num_requests == 0) {
    const double expected = rate * c.duration_s;
    if (expected > static_cast<double>(k_max_requests)) {
      t.fail("duration_s", fmt::format("rate_rps x duration_s = {:g} requests, more than the {} a run may generate",
                                       expected, k_max_requests));
    }
    if (expected < 1.0) {
      t.fail("duration_s",
             fmt::format("rate_rps x duration_s = {:g}: fewer than one request is expected to arrive", expected));
    }
  }
  if (c.num_requests > 0 && c.duration_s == 0.0 && static_cast<double>(c.num_requests) / rate > core::k_max_time_s) {
    t.fail("num_requests",
           fmt::format("{} requests at {:g} req/s arrive over ~{:g} s, past the {:g} s of simulated "
                       "time a run may last",
                       c.num_requests, rate, static_cast<double>(c.num_requests) / rate, core::k_max_time_s));
  }
}

}  // namespace

WorkloadConfig parse_workload(core::ParamTable& t) {
  WorkloadConfig c;
  c.arrivals = parse_arrivals(t);
  // A replayed file is replayed whole unless num_requests says otherwise (stopping at a default count
  // would silently drop the rest of it).
  const bool replay = c.arrivals.kind == ArrivalConfig::Kind::replay;
  c.num_requests =
      t.optional_integer("num_requests", "200; every row of a replayed file",
                         "requests to generate (0 = limited by duration_s); at most 1e7, and rate_rps x duration_s too",
                         {0, k_max_requests})
          .value_or(replay ? 0 : 200);
  c.duration_s = t.real("duration_s", 0.0, "generate arrivals for this many seconds (0 = limited by num_requests)",
                        core::k_time_s);
  if (!t.documenting() && c.num_requests == 0 && c.duration_s == 0.0 &&
      c.arrivals.kind != ArrivalConfig::Kind::replay) {
    t.fail("num_requests", "set num_requests or duration_s (both are 0: the workload would never end)");
  }
  if (!t.documenting() && !replay) {
    check_request_count(t, c);
  }
  auto prompt = t.table("prompt_tokens", "prompt length distribution");
  c.prompt = parse_length_distribution(prompt, 1024);
  auto output = t.table("output_tokens", "output length distribution");
  c.output = parse_length_distribution(output, 128);
  t.finish();
  return c;
}

RequestGenerator::RequestGenerator(const WorkloadConfig& cfg, const core::RandomStreams& streams)
    : cfg_(cfg), arrivals_(cfg.arrivals, streams.stream("arrivals")), length_rng_(streams.stream("lengths")) {
  if (cfg_.arrivals.kind == ArrivalConfig::Kind::replay) {
    replay_ = std::make_unique<RequestTrace>(cfg_.arrivals.replay_file, cfg_.arrivals.replay);
  }
}

RequestGenerator::~RequestGenerator() = default;

std::optional<RequestSpec> RequestGenerator::next_replayed() {
  std::optional<RequestSpec> r = replay_->next();
  if (r && r->prompt_tokens == 0) {  // an arrival-only CSV row: lengths from the distributions
    r->prompt_tokens = cfg_.prompt.sample(length_rng_);
    r->output_tokens = cfg_.output.sample(length_rng_);
  }
  return r;
}

std::optional<RequestSpec> RequestGenerator::next() {
  if (cfg_.num_requests > 0 && issued_ >= cfg_.num_requests) {
    return std::nullopt;
  }
  std::optional<RequestSpec> r;
  if (replay_) {
    r = next_replayed();
  } else {
    r.emplace();
    r->arrival_ns = arrivals_.next();
    r->prompt_tokens = cfg_.prompt.sample(length_rng_);
    r->output_tokens = cfg_.output.sample(length_rng_);
  }
  if (!r || (cfg_.duration_s > 0.0 && r->arrival_ns > core::from_seconds(cfg_.duration_s))) {
    return std::nullopt;
  }
  r->id = issued_++;
  return r;
}

std::optional<RequestSpec> RequestGenerator::follow_up(const RequestSpec& done, core::Time /*finish_ns*/) {
  if (done.session < 0) {
    return std::nullopt;
  }
  return std::nullopt;  // no workload makes sessions yet
}

}  // namespace epsim::workloads
