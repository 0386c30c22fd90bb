// SPDX-License-Identifier: Apache-2.0
#pragma once
// The content key of each full KV block of a request, as a prefix cache keys blocks (vLLM's block hashes,
// SGLang's radix path at page granularity): block j's key mixes block j-1's key with the content pieces
// (segment id, offset in the segment, length) the block covers. Two requests share block j's key exactly
// when their contents agree on every token up to the end of block j. A request's content is its prompt's
// segments (workloads/request.hpp; none: one segment of its own) followed by its answer's segment.
#include <cstdint>

#include "workloads/request.hpp"

namespace epsim::serving {

/// Where hashing a request's blocks stands: the next block's first token, as (segment, offset), and the
/// key of the block before it.
struct BlockCursor {
  std::int64_t blocks = 0;     ///< full blocks hashed so far
  std::size_t segment = 0;     ///< in the content list (prompt segments, then the answer)
  std::int64_t offset = 0;     ///< tokens of that segment already covered
  std::uint64_t previous = 0;  ///< key of block `blocks - 1` (0 before the first)
};

/// A key never 0 (the index's empty slot) from a 64-bit value: SplitMix64's finaliser.
std::uint64_t mix_key(std::uint64_t x);

/// The key of the next full block of `block_tokens` tokens after `c`, advancing `c`; the caller checks
/// that the block lies within the request's prompt and answer.
std::uint64_t next_block_key(const workloads::RequestSpec& spec, std::int64_t block_tokens, BlockCursor& c);

}  // namespace epsim::serving
