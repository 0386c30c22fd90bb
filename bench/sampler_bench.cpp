// SPDX-License-Identifier: Apache-2.0
// The large multinomial draw of a prefill layer (DeepSeek-V3: 256 experts) by conditional binomials
// (routing.sampling = "exact") and by Poissonisation (routing.sampling = "poisson") on every instruction
// set this CPU runs, in CPU ns per call and per category; and the Poisson kernel alone per variate.
// Skews: uniform (an overloaded EP64 step's mix is close to it) and Zipf 1.0; picks from a 1,024-token to
// a ~88,000-token step (top-8).
#include <fmt/format.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "core/cpu_clock.hpp"
#include "core/isa.hpp"
#include "core/random_streams.hpp"
#include "workloads/multinomial.hpp"
#include "workloads/poisson_draws.hpp"
#include "workloads/poisson_multinomial.hpp"

using namespace epsim;

namespace {

template <class F>
double cpu_ns_per_call(int calls, F&& f) {
  const double t0 = core::thread_cpu_s();
  for (int i = 0; i < calls; ++i) {
    f();
  }
  return (core::thread_cpu_s() - t0) * 1e9 / calls;
}

}  // namespace

int main() {
  const int experts = 256;
  std::vector<int> order(experts);
  std::iota(order.begin(), order.end(), 0);
  std::vector<std::int32_t> out(experts);
  std::int64_t checksum = 0;
  for (const double zipf : {0.0, 1.0}) {
    std::vector<double> p(experts);
    for (int e = 0; e < experts; ++e) {
      p[static_cast<std::size_t>(e)] = 1.0 / std::pow(e + 1.0, zipf);
    }
    for (const std::int64_t picks : {8192LL, 32768LL, 98304LL, 700000LL}) {
      const int calls = picks > 100000 ? 2000 : 8000;
      core::Rng rng(1);
      const double chain_ns = cpu_ns_per_call(calls, [&] {
        workloads::multinomial_capped(rng, picks, picks, p, order, out);
        checksum += out[0];
      });
      std::string line = fmt::format("zipf {:.1f}, {:>7} picks: binomial chain {:>7.0f} ns ({:.1f} ns per category)",
                                     zipf, picks, chain_ns, chain_ns / experts);
      for (const core::Isa isa : core::supported_isas()) {
        workloads::PoissonMultinomial sampler(isa);
        core::Rng r2(1);
        const double ns = cpu_ns_per_call(calls, [&] {
          sampler.draw(r2, picks, p, out);
          checksum += out[0];
        });
        line += fmt::format("; poisson {} {:.0f} ns ({:.2f}x)", core::isa_name(isa), ns, chain_ns / ns);
      }
      fmt::print("{}\n", line);
    }
  }
  // The Poisson kernel alone: 256 means of 128 (an overloaded layer's) and of 4.
  for (const double mean : {4.0, 128.0, 3000.0}) {
    const std::vector<double> means(static_cast<std::size_t>(experts), mean);
    std::vector<std::int64_t> counts(static_cast<std::size_t>(experts));
    std::string line = fmt::format("Poisson kernel, mean {:>6.0f}:", mean);
    for (const core::Isa isa : core::supported_isas()) {
      workloads::PoissonDraws draws;
      core::Rng rng(3);
      const double ns = cpu_ns_per_call(8000, [&] {
        draws.draw(rng, means, counts, isa);
        checksum += counts[0];
      });
      line += fmt::format(" {} {:.1f} ns per variate;", core::isa_name(isa), ns / experts);
    }
    fmt::print("{}\n", line);
  }
  fmt::print("(checksum {})\n", checksum);
}
