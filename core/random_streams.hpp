// SPDX-License-Identifier: Apache-2.0
#pragma once
// Named random streams derived from the run seed, one per purpose (arrivals, lengths, routing,
// variability...), so that drawing more from one purpose never shifts another's sequence. Engines and
// distributions come from Boost.Random, whose output is the same on every standard library.
#include <boost/random/mersenne_twister.hpp>
#include <cstdint>
#include <string_view>

namespace epsim::core {

using Rng = boost::random::mt19937_64;

/// 64-bit FNV-1a of a string: stable across platforms and runs (std::hash is not).
std::uint64_t stable_hash(std::string_view s);
/// SplitMix64 finaliser: decorrelates nearby seeds.
std::uint64_t mix64(std::uint64_t x);

class RandomStreams {
 public:
  explicit RandomStreams(std::uint64_t seed) : seed_(seed) {}
  std::uint64_t seed() const { return seed_; }
  /// The seed of a purpose's stream; `index` separates several streams of one purpose (e.g. per GPU).
  std::uint64_t stream_seed(std::string_view purpose, std::uint64_t index = 0) const;
  /// A fresh engine for a purpose: the same (seed, purpose, index) always yields the same sequence.
  Rng stream(std::string_view purpose, std::uint64_t index = 0) const { return Rng(stream_seed(purpose, index)); }

 private:
  std::uint64_t seed_;
};

}  // namespace epsim::core
