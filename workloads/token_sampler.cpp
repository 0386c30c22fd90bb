// SPDX-License-Identifier: Apache-2.0
#include "workloads/token_sampler.hpp"

#include <boost/random/uniform_01.hpp>

#include <algorithm>

#include "core/error.hpp"

namespace epsim::workloads {

TokenSampler::TokenSampler(int experts, int top_k, int groups, int topk_group)
    : top_k_(top_k), groups_(groups), topk_group_(topk_group), group_size_(groups > 0 ? experts / groups : 0) {
  if (groups < 1 || experts % groups != 0 || topk_group < 1 || topk_group > groups ||
      topk_group * group_size_ < top_k) {
    throw core::Error("TokenSampler: groups must divide the experts and topk_group groups must hold top_k experts");
  }
  cdf_.assign(static_cast<std::size_t>(experts), 0.0);
  group_mass_.assign(static_cast<std::size_t>(groups), 0.0);
  picked_groups_.reserve(static_cast<std::size_t>(groups));
  picked_mass_.reserve(static_cast<std::size_t>(groups));
  taken_.assign(static_cast<std::size_t>(experts), 0);
  group_taken_.assign(static_cast<std::size_t>(groups), 0);
}

void TokenSampler::set_weights(std::span<const double> weights) {
  for (int g = 0; g < groups_; ++g) {
    double acc = 0.0;
    for (int e = g * group_size_; e < (g + 1) * group_size_; ++e) {
      acc += std::max(0.0, weights[static_cast<std::size_t>(e)]);
      cdf_[static_cast<std::size_t>(e)] = acc;
    }
    group_mass_[static_cast<std::size_t>(g)] = acc;
  }
}

void TokenSampler::draw(core::Rng& rng, std::span<std::int32_t> out) {
  boost::random::uniform_01<double> u01;
  // Groups: topk_group distinct ones, by remaining mass (a group without mass is still eligible when
  // nothing else is: a token always finds top_k experts).
  picked_groups_.clear();
  picked_mass_.clear();
  if (topk_group_ == groups_) {
    for (int g = 0; g < groups_; ++g) {
      picked_groups_.push_back(g);
    }
  } else {
    for (int i = 0; i < topk_group_; ++i) {
      double left = 0.0;
      for (int g = 0; g < groups_; ++g) {
        if (group_taken_[static_cast<std::size_t>(g)] == 0) {
          left += group_mass_[static_cast<std::size_t>(g)];
        }
      }
      double x = u01(rng) * left;
      int chosen = -1;
      for (int g = 0; g < groups_; ++g) {
        if (group_taken_[static_cast<std::size_t>(g)] != 0) {
          continue;
        }
        chosen = g;  // the last eligible one catches rounding and massless leftovers
        x -= group_mass_[static_cast<std::size_t>(g)];
        if (x < 0.0 && group_mass_[static_cast<std::size_t>(g)] > 0.0) {
          break;
        }
      }
      picked_groups_.push_back(chosen);
      group_taken_[static_cast<std::size_t>(chosen)] = 1;
    }
    for (const int g : picked_groups_) {
      group_taken_[static_cast<std::size_t>(g)] = 0;
    }
  }
  double total = 0.0;
  for (const int g : picked_groups_) {
    picked_mass_.push_back(group_mass_[static_cast<std::size_t>(g)]);
    total += picked_mass_.back();
  }
  // Experts: proportional to weight within the picked groups, repeats rejected; past a bounded number of
  // rejections (the mass left is tiny) the lowest free expert of the picked groups is taken, in order.
  int drawn = 0;
  int attempts = 0;
  while (drawn < top_k_) {
    int e = -1;
    if (total > 0.0 && attempts < 64 * top_k_) {
      ++attempts;
      double x = u01(rng) * total;
      std::size_t i = 0;
      while (i + 1 < picked_groups_.size() && x >= picked_mass_[i]) {
        x -= picked_mass_[i];
        ++i;
      }
      const int g = picked_groups_[i];
      // upper_bound by counting: the group's prefix is non-decreasing, so the entries <= x are exactly
      // those before the first > x; a branch-free count beats a binary search's mispredicted branches.
      const double* cdf = cdf_.data() + static_cast<std::ptrdiff_t>(g) * group_size_;
      int below = 0;
      for (int c = 0; c < group_size_; ++c) {
        below += cdf[c] <= x ? 1 : 0;
      }
      e = g * group_size_ + std::min(below, group_size_ - 1);
    } else {
      for (const int g : picked_groups_) {
        for (int c = g * group_size_; c < (g + 1) * group_size_ && e < 0; ++c) {
          e = taken_[static_cast<std::size_t>(c)] ? -1 : c;
        }
        if (e >= 0) {
          break;
        }
      }
    }
    if (taken_[static_cast<std::size_t>(e)]) {
      continue;
    }
    taken_[static_cast<std::size_t>(e)] = 1;
    out[static_cast<std::size_t>(drawn++)] = e;
  }
  for (int i = 0; i < top_k_; ++i) {
    taken_[static_cast<std::size_t>(out[static_cast<std::size_t>(i)])] = 0;
  }
}

}  // namespace epsim::workloads
