// SPDX-License-Identifier: Apache-2.0
#include "sim/expert_price_cache.hpp"

#include <algorithm>
#include <bit>

#include "models/layer_work.hpp"

namespace epsim::serving {

ExpertPriceCache::ExpertPriceCache(const models::ModelSpec& model, const hardware::CostModel& cost, int first_gpu,
                                   int gpus)
    : model_(model),
      cost_(cost),
      first_gpu_(first_gpu),
      // 4,096 entries (128 KB) up to 256 GPUs, 16,384 (512 KB) from 1,024: a pricer of many GPUs sees many
      // more keys per layer (EP1024: 8 % less CPU than at 4,096; 65,536 gained nothing more).
      index_bits_(
          std::clamp(static_cast<int>(std::bit_width(static_cast<unsigned>(std::max(gpus, 1)) - 1U)) + 4, 12, 14)),
      class_(static_cast<std::size_t>(gpus), -1),
      table_(std::size_t{1} << index_bits_) {
  refresh();
}

void ExpertPriceCache::refresh() {
  bool changed = false;
  for (std::size_t g = 0; g < class_.size(); ++g) {
    const int c = cost_.price_class(first_gpu_ + static_cast<int>(g));
    changed = changed || c != class_[g];
    class_[g] = c;
  }
  if (changed) {
    std::fill(table_.begin(), table_.end(), Entry{});
    const int classes = class_.empty() ? 0 : *std::max_element(class_.begin(), class_.end()) + 1;
    small_classes_ = classes <= k_small_classes ? classes : 0;
    small_.assign(static_cast<std::size_t>(small_classes_) * k_small_tokens * k_small_activated, SmallEntry{});
  }
}

double ExpertPriceCache::direct_ns(int local_gpu, std::int64_t padded, std::int64_t tokens,
                                   std::int32_t activated) const {
  if (tokens <= 0) {
    return 0.0;
  }
  return cost_.kernel_ns(first_gpu_ + local_gpu,
                         models::expert_ffn_work(model_, static_cast<double>(padded), static_cast<double>(tokens),
                                                 static_cast<double>(activated)));
}

double ExpertPriceCache::ns(int local_gpu, std::int64_t padded, std::int64_t tokens, std::int32_t activated) {
  const int c = class_[static_cast<std::size_t>(local_gpu)];
  if (c < 0) {
    return direct_ns(local_gpu, padded, tokens, activated);
  }
  if (tokens < k_small_tokens && activated < k_small_activated && c < small_classes_) {
    SmallEntry& e =
        small_[(static_cast<std::size_t>(c) * k_small_tokens + static_cast<std::size_t>(tokens)) * k_small_activated +
               static_cast<std::size_t>(activated)];
    if (e.padded != padded) {  // a miss, or another padding of the same tokens and experts
      e = SmallEntry{padded, direct_ns(local_gpu, padded, tokens, activated)};
      ++misses_;
    }
    return e.ns;
  }
  // Multiplicative hash of the key; the top bits index the table.
  const auto h = (static_cast<std::uint64_t>(padded) * 0x9E3779B97F4A7C15ULL) ^
                 (static_cast<std::uint64_t>(tokens) * 0xC2B2AE3D27D4EB4FULL) ^
                 (static_cast<std::uint64_t>(activated) * 0x165667B19E3779F9ULL) ^
                 (static_cast<std::uint64_t>(c) * 0x27D4EB2F165667C5ULL);
  Entry& e = table_[static_cast<std::size_t>((h * 0x9E3779B97F4A7C15ULL) >> (64 - index_bits_))];
  if (e.price_class != c || e.padded != padded || e.tokens != tokens || e.activated != activated) {
    e = Entry{padded, tokens, activated, c, direct_ns(local_gpu, padded, tokens, activated)};
    ++misses_;
  }
  return e.ns;
}

}  // namespace epsim::serving
