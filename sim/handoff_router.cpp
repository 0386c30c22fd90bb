// SPDX-License-Identifier: Apache-2.0
#include "sim/handoff_router.hpp"

namespace epsim::serving {
namespace {

std::int64_t load(const DecodeRank& r) {
  return r.outstanding + r.incoming;
}

// Every rank in turn, in the order given (the simulator interleaves groups, so turns alternate groups):
// blind to load, as SGLang's round-robin decode selection.
class RoundRobin final : public HandoffRouter {
 public:
  std::size_t pick(std::span<const DecodeRank> ranks, std::int64_t /*context_tokens*/) override {
    return next_++ % ranks.size();
  }

 private:
  std::size_t next_ = 0;
};

// Scans from the rank after the last pick, so ties rotate: a lightly loaded pool, where every rank is
// often idle, still spreads its requests instead of sending each to the first rank listed.
template <class Better>
std::size_t rotating_best(std::span<const DecodeRank> ranks, std::size_t& start, Better better) {
  std::size_t best = start % ranks.size();
  for (std::size_t k = 1; k < ranks.size(); ++k) {
    const std::size_t i = (start + k) % ranks.size();
    if (better(ranks[i], ranks[best])) {
      best = i;
    }
  }
  start = best + 1;
  return best;
}

// The fewest requests waiting, running or on their way; ties in turn.
class LeastLoaded final : public HandoffRouter {
 public:
  std::size_t pick(std::span<const DecodeRank> ranks, std::int64_t /*context_tokens*/) override {
    return rotating_best(ranks, next_, [](const DecodeRank& a, const DecodeRank& b) { return load(a) < load(b); });
  }

 private:
  std::size_t next_ = 0;
};

// The most free KV-cache tokens once the hand-offs on their way have taken theirs (Dynamo's KV-aware
// selection): long contexts go where they fit; ties by load, then in turn.
class KvAware final : public HandoffRouter {
 public:
  std::size_t pick(std::span<const DecodeRank> ranks, std::int64_t /*context_tokens*/) override {
    const auto room = [](const DecodeRank& r) { return r.free_kv_tokens - r.incoming_tokens; };
    return rotating_best(ranks, next_, [&](const DecodeRank& a, const DecodeRank& b) {
      return room(a) > room(b) || (room(a) == room(b) && load(a) < load(b));
    });
  }

 private:
  std::size_t next_ = 0;
};

template <class T>
policies::Registry<HandoffRouter>::Factory plain() {
  return [](core::ParamTable& t) -> std::unique_ptr<HandoffRouter> {
    t.finish();
    return std::make_unique<T>();
  };
}

}  // namespace

const policies::Registry<HandoffRouter>& handoff_registry() {
  static const policies::Registry<HandoffRouter> registry = [] {
    policies::Registry<HandoffRouter> r("handoff");
    r.add("least_loaded",
          "decode rank with the fewest requests waiting, running or on their way (hand-offs in flight count); ties in "
          "turn",
          plain<LeastLoaded>());
    r.add("round_robin", "every decode rank in turn, groups interleaved, blind to load", plain<RoundRobin>());
    r.add("kv_aware",
          "decode rank with the most free KV-cache tokens after the hand-offs in flight; ties by load, then in turn",
          plain<KvAware>());
    return r;
  }();
  return registry;
}

}  // namespace epsim::serving
