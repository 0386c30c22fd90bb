// SPDX-License-Identifier: Apache-2.0
#include "sim/block_hash.hpp"

#include <algorithm>

namespace epsim::serving {

namespace {

// Tags keep the ids made here for content without one apart from each other and from workload ids.
constexpr std::uint64_t k_own_prompt_tag = 0x70726f6d70740000ULL;  // "prompt"
constexpr std::uint64_t k_own_answer_tag = 0x616e737765720000ULL;  // "answer"

struct Segment {
  std::uint64_t id;
  std::int64_t tokens;
};

// Segment `i` of the request's content: its prompt's, then its answer.
Segment segment_at(const workloads::RequestSpec& spec, std::size_t i) {
  const std::size_t prompt_segments = spec.content.empty() ? 1 : spec.content.size();
  if (i < prompt_segments) {
    if (spec.content.empty()) {
      return {mix_key(k_own_prompt_tag ^ static_cast<std::uint64_t>(spec.id)), spec.prompt_tokens};
    }
    return {spec.content[i].id, spec.content[i].tokens};
  }
  const std::uint64_t answer = spec.output_content_id != 0
                                   ? spec.output_content_id
                                   : mix_key(k_own_answer_tag ^ static_cast<std::uint64_t>(spec.id));
  return {answer, spec.output_tokens};
}

}  // namespace

std::uint64_t mix_key(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x != 0 ? x : 1;
}

std::uint64_t next_block_key(const workloads::RequestSpec& spec, std::int64_t block_tokens, BlockCursor& c) {
  std::uint64_t key = mix_key(c.previous ^ 0x626c6f636bULL);  // "block"
  std::int64_t left = block_tokens;
  const std::size_t last = spec.content.empty() ? 1 : spec.content.size();  // the answer's index
  while (left > 0) {
    const Segment s = segment_at(spec, c.segment);
    const std::int64_t take = std::min(left, s.tokens - c.offset);
    if (take > 0) {
      key = mix_key(key ^ mix_key(s.id) ^ (static_cast<std::uint64_t>(c.offset) << 20) ^
                    static_cast<std::uint64_t>(take));
      c.offset += take;
      left -= take;
    }
    if (c.offset >= s.tokens) {
      if (c.segment == last) {
        break;  // past the answer: the caller never asks for such a block
      }
      ++c.segment;
      c.offset = 0;
    }
  }
  c.previous = key;
  ++c.blocks;
  return key;
}

}  // namespace epsim::serving
