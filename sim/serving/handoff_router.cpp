#include "sim/serving/handoff_router.hpp"

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

// The fewest requests waiting, running or on their way; ties to the first listed.
class LeastLoaded final : public HandoffRouter {
 public:
  std::size_t pick(std::span<const DecodeRank> ranks, std::int64_t /*context_tokens*/) override {
    std::size_t best = 0;
    for (std::size_t i = 1; i < ranks.size(); ++i) {
      if (load(ranks[i]) < load(ranks[best])) {
        best = i;
      }
    }
    return best;
  }
};

// The most free KV-cache tokens once the hand-offs on their way have taken theirs (Dynamo's KV-aware
// selection): long contexts go where they fit; ties by load, then to the first listed.
class KvAware final : public HandoffRouter {
 public:
  std::size_t pick(std::span<const DecodeRank> ranks, std::int64_t /*context_tokens*/) override {
    const auto room = [](const DecodeRank& r) { return r.free_kv_tokens - r.incoming_tokens; };
    std::size_t best = 0;
    for (std::size_t i = 1; i < ranks.size(); ++i) {
      const std::int64_t a = room(ranks[i]);
      const std::int64_t b = room(ranks[best]);
      if (a > b || (a == b && load(ranks[i]) < load(ranks[best]))) {
        best = i;
      }
    }
    return best;
  }
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
          "decode rank with the fewest requests waiting, running or on their way (hand-offs in flight count)",
          plain<LeastLoaded>());
    r.add("round_robin", "every decode rank in turn, groups interleaved, blind to load", plain<RoundRobin>());
    r.add("kv_aware", "decode rank with the most free KV-cache tokens after the hand-offs in flight; ties by load",
          plain<KvAware>());
    return r;
  }();
  return registry;
}

}  // namespace epsim::serving
