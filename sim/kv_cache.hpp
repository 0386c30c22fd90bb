// SPDX-License-Identifier: Apache-2.0
#pragma once
// Paged KV-cache memory of one DP rank (vLLM's block manager, simplified): the capacity is a number of
// fixed-size blocks; a request holds ceil(tokens / block_tokens) blocks for the tokens in its cache, plus
// a fixed number for its fixed-size state (sliding windows, linear-attention states) from its first token.
// Blocks are counted, not placed: fragmentation inside the pool does not exist with paging.
#include <cstdint>

namespace epsim::serving {

class KvCache {
 public:
  KvCache() = default;
  KvCache(std::int64_t blocks, std::int64_t block_tokens)
      : blocks_(blocks), free_(blocks), block_tokens_(block_tokens) {}

  std::int64_t blocks() const { return blocks_; }
  std::int64_t free_blocks() const { return free_; }
  std::int64_t block_tokens() const { return block_tokens_; }
  std::int64_t blocks_for(std::int64_t tokens) const {
    return tokens > 0 ? (tokens + block_tokens_ - 1) / block_tokens_ + state_blocks_ : 0;
  }
  std::int64_t state_blocks() const { return state_blocks_; }
  void set_state_blocks(std::int64_t blocks) { state_blocks_ = blocks; }
  /// Blocks needed to grow a request holding `held` blocks to `tokens` tokens.
  std::int64_t extra_for(std::int64_t held, std::int64_t tokens) const {
    const std::int64_t need = blocks_for(tokens);
    return need > held ? need - held : 0;
  }
  bool can_take(std::int64_t blocks) const { return blocks <= free_; }
  void take(std::int64_t blocks) { free_ -= blocks; }
  void give(std::int64_t blocks) { free_ += blocks; }

 private:
  std::int64_t blocks_ = 0;
  std::int64_t free_ = 0;
  std::int64_t block_tokens_ = 16;
  std::int64_t state_blocks_ = 0;
};

}  // namespace epsim::serving
