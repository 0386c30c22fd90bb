// SPDX-License-Identifier: Apache-2.0
#pragma once
// Memoised expert-FFN prices: every GPU of every MoE layer prices its grouped GEMM through the roofline
// (two pow calls), yet in decode a handful of (padded tokens, tokens, activated experts) keys recur. A
// direct-mapped table per price class (hardware/cost_model.hpp) returns the exact kernel_ns computed on
// the key's first miss, so results keep every bit; GPUs without a class (drifting speeds) are priced
// directly. Decode's small keys (fewer than 128 tokens, 8 activated experts) index a small table per class
// by (tokens, activated) directly, with no hash and no branch for an idle GPU, so the lookups of a step
// stay in L1. Sized at construction by the GPU count, and again only when the classes change: nothing
// allocates in the step loop.
#include <cstdint>
#include <vector>

#include "hardware/cost_model.hpp"
#include "models/model_spec.hpp"

namespace epsim::serving {

class ExpertPriceCache {
 public:
  /// Prices GPUs [first_gpu, first_gpu + gpus) of `cost`.
  ExpertPriceCache(const models::ModelSpec& model, const hardware::CostModel& cost, int first_gpu, int gpus);

  /// Re-reads the GPUs' price classes (a cost model may change them between passes); clears the table
  /// when they changed.
  void refresh();
  /// cost.kernel_ns(first_gpu + local_gpu, models::expert_ffn_work(model, padded, tokens, activated)),
  /// before jitter, bit for bit; 0 for no tokens (no kernel is launched).
  double ns(int local_gpu, std::int64_t padded, std::int64_t tokens, std::int32_t activated);
  /// Prices computed (not found in the table) so far.
  std::int64_t misses() const { return misses_; }

 private:
  struct Entry {
    std::int64_t padded = 0;
    std::int64_t tokens = 0;
    std::int32_t activated = 0;
    std::int32_t price_class = -1;  // -1: empty
    double ns = 0.0;
  };
  struct SmallEntry {
    std::int64_t padded = -1;  // -1: empty (a small key's tokens and activated index the entry)
    double ns = 0.0;
  };
  static constexpr std::int64_t k_small_tokens = 128;
  static constexpr std::int32_t k_small_activated = 8;
  static constexpr int k_small_classes = 64;  // more classes (per-GPU speeds) use the hashed table alone

  double direct_ns(int local_gpu, std::int64_t padded, std::int64_t tokens, std::int32_t activated) const;

  const models::ModelSpec& model_;
  const hardware::CostModel& cost_;
  int first_gpu_;
  int index_bits_;          // the table holds 2^index_bits_ entries
  std::vector<int> class_;  // per local GPU
  std::vector<Entry> table_;
  std::vector<SmallEntry> small_;  // [class][tokens][activated] for classes below small_classes_
  int small_classes_ = 0;
  std::int64_t misses_ = 0;
};

}  // namespace epsim::serving
