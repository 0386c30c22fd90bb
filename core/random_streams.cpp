// SPDX-License-Identifier: Apache-2.0
#include "core/random_streams.hpp"

namespace epsim::core {

std::uint64_t stable_hash(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30U)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27U)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31U);
}

std::uint64_t RandomStreams::stream_seed(std::string_view purpose, std::uint64_t index) const {
  return mix64(mix64(seed_ ^ stable_hash(purpose)) + index);
}

}  // namespace epsim::core
