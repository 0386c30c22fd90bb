#include "sim/serving/pool_shape.hpp"

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace epsim::serving {

PoolLayout pool_layout(int gpus, int ep_size, int prefill_groups, int prefill_ep_size) {
  const int prefill_ep = prefill_ep_size > 0 ? prefill_ep_size : ep_size;
  if (ep_size < 1 || prefill_groups < 0 || prefill_ep < 1) {
    throw core::Error(
        fmt::format("pool layout: expected EP sizes >= 1 and prefill groups >= 0, got ep_size {}, "
                    "prefill {} x {}",
                    ep_size, prefill_groups, prefill_ep));
  }
  PoolLayout out;
  out.prefill = PoolShape{0, prefill_groups, prefill_ep, 0};
  const int decode_gpus = gpus - out.prefill.gpus();
  if (decode_gpus < ep_size || decode_gpus % ep_size != 0) {
    throw core::Error(
        fmt::format("pool layout: the decode pool's {} GPUs ({} less the prefill pool's {} x {}) must "
                    "be a positive multiple of the EP size {}",
                    decode_gpus, gpus, prefill_groups, prefill_ep, ep_size));
  }
  out.decode = PoolShape{prefill_groups, decode_gpus / ep_size, ep_size, out.prefill.gpus()};
  return out;
}

}  // namespace epsim::serving
