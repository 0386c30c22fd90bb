// SPDX-License-Identifier: Apache-2.0
#include "hardware/roofline.hpp"

#include <algorithm>
#include <boost/random/normal_distribution.hpp>
#include <cmath>

#include "core/error.hpp"

namespace epsim::hardware {

double peak_flop_per_ns(const GpuSpec& gpu, hardware::Precision p) {
  double tflops = gpu.bf16_tflops;
  if (p == hardware::Precision::fp4 && gpu.fp4_tflops > 0.0) {
    tflops = gpu.fp4_tflops;
  } else if (p != hardware::Precision::bf16 && gpu.fp8_tflops > 0.0) {  // FP4 without FP4 units runs as FP8
    tflops = gpu.fp8_tflops;
  }
  return tflops * 1e3;  // 1 TFLOP/s = 1e12 / 1e9 = 1e3 FLOP per ns
}

double achievable_flop_per_ns(const GpuSpec& gpu, hardware::OpKind kind, hardware::Precision p) {
  return peak_flop_per_ns(gpu, p) * gpu.eff(kind, p).compute;
}

double achievable_bytes_per_ns(const GpuSpec& gpu, hardware::OpKind kind, hardware::Precision p) {
  return gpu.hbm_gbps * gpu.eff(kind, p).memory;  // 1 GB/s = 1 byte per ns
}

double intensity_over_ridge(const GpuSpec& gpu, const hardware::KernelWork& work) {
  if (work.bytes <= 0.0) {
    return work.flops > 0.0 ? 1e9 : 0.0;
  }
  const double ridge =
      achievable_flop_per_ns(gpu, work.kind, work.precision) / achievable_bytes_per_ns(gpu, work.kind, work.precision);
  return work.flops / work.bytes / ridge;
}

double gemm_wave_factor(const GpuSpec& gpu, double m, double n) {
  if (m <= 0.0 || n <= 0.0 || gpu.sm_count <= 0) {
    return 1.0;
  }
  const double tile_m = static_cast<double>(gpu.gemm_tile_m);
  const double tile_n = static_cast<double>(gpu.gemm_tile_n);
  const double sms = static_cast<double>(gpu.sm_count);
  const double tiles = std::ceil(m / tile_m) * std::ceil(n / tile_n);
  if (tiles <= sms) {
    return 1.0;  // one wave or less: libraries pick smaller tiles or split K to fill the SMs
  }
  return std::ceil(tiles / sms) * sms * tile_m * tile_n / (m * n);
}

double head_dim_factor(double softmax_head_dim, double head_dim) {
  return softmax_head_dim > 0.0 && head_dim > 0.0 ? 1.0 + softmax_head_dim / head_dim : 1.0;
}

double roofline_body_ns(double compute_ns, double memory_ns, double knee) {
  const double hi = std::max(compute_ns, memory_ns);
  if (knee <= 0.0 || hi <= 0.0) {
    return hi;
  }
  // (c^p + m^p)^(1/p) = hi (1 + (lo / hi)^p)^(1/p): no overflow for large p.
  const double lo = std::min(compute_ns, memory_ns);
  return hi * std::pow(1.0 + std::pow(lo / hi, knee), 1.0 / knee);
}

KernelRates kernel_rates(const GpuSpec& gpu, hardware::OpKind kind, hardware::Precision p) {
  const Efficiency& e = gpu.eff(kind, p);
  KernelRates r;
  r.ns_per_flop = 1.0 / (peak_flop_per_ns(gpu, p) * e.compute);
  r.ns_per_byte = 1.0 / (gpu.hbm_gbps * e.memory);
  r.knee = e.knee;
  r.fixed_ns = (gpu.kernel_launch_us + e.fixed_us) * 1e3;
  r.floor_ns = e.floor_us * 1e3;
  r.softmax_head_dim = e.softmax_head_dim;
  return r;
}

KernelCost price_kernel(const GpuSpec& gpu, const KernelRates& r, const hardware::KernelWork& work, double speed) {
  KernelCost c;
  c.compute_ns = work.flops * r.ns_per_flop;
  if (work.gemm_m > 0.0) {
    c.compute_ns *= gemm_wave_factor(gpu, work.gemm_m, work.gemm_n);
  }
  if (r.softmax_head_dim > 0.0) {
    c.compute_ns *= head_dim_factor(r.softmax_head_dim, work.head_dim);
  }
  c.memory_ns = work.bytes * r.ns_per_byte;
  c.bound = c.compute_ns >= c.memory_ns ? Bound::compute : Bound::memory;
  const double body_ns = std::max(roofline_body_ns(c.compute_ns, c.memory_ns, r.knee), work.launches * r.floor_ns);
  c.total_ns = body_ns / speed + work.launches * r.fixed_ns;
  return c;
}

KernelCost roofline_cost(const GpuSpec& gpu, const hardware::KernelWork& work, double speed) {
  return price_kernel(gpu, kernel_rates(gpu, work.kind, work.precision), work, speed);
}

RooflineCostModel::SpecRates RooflineCostModel::rates_of(const GpuSpec& spec) {
  SpecRates out{};
  for (int k = 0; k < k_op_kinds; ++k) {
    for (int p = 0; p < k_precisions; ++p) {
      out[static_cast<std::size_t>(k) * k_precisions + static_cast<std::size_t>(p)] =
          kernel_rates(spec, static_cast<OpKind>(k), static_cast<Precision>(p));
    }
  }
  return out;
}

namespace {

// Intensity over the ridge point = compute time over memory time at the family's efficiencies.
double rates_intensity(const KernelRates& r, const hardware::KernelWork& work) {
  const double memory_ns = work.bytes * r.ns_per_byte;
  return memory_ns > 0.0 ? work.flops * r.ns_per_flop / memory_ns : (work.flops > 0.0 ? 1e9 : 0.0);
}

}  // namespace

RooflineCostModel::RooflineCostModel(GpuSpec gpu, std::vector<double> speed_factors)
    : gpu_(std::move(gpu)), base_speed_(std::move(speed_factors)), speed_(base_speed_) {
  stress_.enabled = false;
  specs_.push_back(gpu_);
  rates_.push_back(rates_of(gpu_));
  spec_of_.assign(base_speed_.size(), 0);
  if (base_speed_.empty()) {
    throw core::Error("RooflineCostModel: no GPUs");
  }
  for (const double s : base_speed_) {
    if (!(s > 0.0)) {
      throw core::Error("RooflineCostModel: speed factors must be > 0");
    }
  }
  classify();
}

void RooflineCostModel::classify() {
  // Same GPU model and bit-identical speed factor: the same prices (stress weights depend only on these
  // and the work). Quadratic in the classes, at construction only.
  price_class_.assign(base_speed_.size(), 0);
  std::vector<std::size_t> first_of_class;
  for (std::size_t g = 0; g < base_speed_.size(); ++g) {
    std::size_t c = 0;
    while (c < first_of_class.size() &&
           (spec_of_[first_of_class[c]] != spec_of_[g] || base_speed_[first_of_class[c]] != base_speed_[g])) {
      ++c;
    }
    if (c == first_of_class.size()) {
      first_of_class.push_back(g);
    }
    price_class_[g] = static_cast<int>(c);
  }
}

RooflineCostModel::RooflineCostModel(GpuSpec gpu, std::vector<double> speed_factors, const VariabilityConfig& dynamics,
                                     const core::RandomStreams& streams)
    : RooflineCostModel(std::move(gpu), std::move(speed_factors)) {
  stress_ = dynamics.stress;
  drift_ = dynamics.drift;
  jitter_sigma_ = std::sqrt(std::log1p(dynamics.jitter.cv * dynamics.jitter.cv));
  drift_state_.assign(base_speed_.size(), 0.0);
  for (std::size_t g = 0; g < base_speed_.size(); ++g) {
    drift_rng_.push_back(streams.stream("drift", g));
    jitter_rng_.push_back(streams.stream("jitter", g));
  }
  if (dynamics.dvfs.enabled) {
    dvfs_.emplace(dynamics.dvfs, num_gpus());
    for (std::size_t g = 0; g < base_speed_.size(); ++g) {
      refresh_speed(g);
    }
  }
}

void RooflineCostModel::refresh_speed(std::size_t g) {
  const double drifted =
      drift_state_.empty() ? base_speed_[g] : std::max(base_speed_[g] * (1.0 + drift_state_[g]), 0.05);
  speed_[g] = dvfs_ ? drifted * dvfs_->factor(static_cast<int>(g)) : drifted;
}

void RooflineCostModel::begin_step(int first_gpu, int gpus, core::Time start) {
  if (dvfs_) {
    dvfs_->begin_step(first_gpu, gpus, start);
    for (int i = 0; i < gpus; ++i) {
      refresh_speed(static_cast<std::size_t>(first_gpu) + static_cast<std::size_t>(i));
    }
  }
}

double RooflineCostModel::power_weight(int gpu, const hardware::KernelWork& work) const {
  return stress_weight(stress_, rates_intensity(rates(gpu, work), work));
}

void RooflineCostModel::end_step(int first_gpu, std::span<const double> busy_ns, core::Time start, core::Time end,
                                 double power_weight) {
  if (dvfs_) {
    dvfs_->end_step(first_gpu, busy_ns.data(), static_cast<int>(busy_ns.size()), start, end, power_weight);
    for (std::size_t i = 0; i < busy_ns.size(); ++i) {
      refresh_speed(static_cast<std::size_t>(first_gpu) + i);
    }
  }
}

void RooflineCostModel::set_gpu_model(int first, int count, const GpuSpec& spec) {
  specs_.push_back(spec);
  rates_.push_back(rates_of(spec));
  for (int g = first; g < first + count; ++g) {
    spec_of_.at(static_cast<std::size_t>(g)) = specs_.size() - 1;
  }
  classify();
}

double RooflineCostModel::speed_for(int gpu, const KernelRates& r, const hardware::KernelWork& work) const {
  const double s = speed_[static_cast<std::size_t>(gpu)];
  if (s == 1.0) {
    return 1.0;
  }
  return 1.0 + (s - 1.0) * stress_weight(stress_, rates_intensity(r, work));
}

double RooflineCostModel::effective_speed(int gpu, const hardware::KernelWork& work) const {
  return speed_for(gpu, rates(gpu, work), work);
}

double RooflineCostModel::kernel_ns(int gpu, const hardware::KernelWork& work) const {
  const KernelRates& r = rates(gpu, work);
  return price_kernel(gpu_of(gpu), r, work, speed_for(gpu, r, work)).total_ns;
}

void RooflineCostModel::advance_to(core::Time now) {
  if (drift_.stddev <= 0.0 || now <= now_) {
    now_ = std::max(now_, now);
    return;
  }
  // Exact Ornstein-Uhlenbeck transition over dt: d' = d e^(-dt/tau) + stddev sqrt(1 - e^(-2 dt/tau)) N(0, 1).
  const double decay = std::exp(-core::to_seconds(now - now_) / drift_.time_constant_s);
  const double noise = drift_.stddev * std::sqrt(1.0 - decay * decay);
  boost::random::normal_distribution<double> n01;
  for (std::size_t g = 0; g < base_speed_.size(); ++g) {
    drift_state_[g] = drift_state_[g] * decay + noise * n01(drift_rng_[g]);
    refresh_speed(g);
  }
  now_ = now;
}

double RooflineCostModel::jitter(int gpu) {
  if (jitter_sigma_ <= 0.0) {
    return 1.0;
  }
  // Lognormal with mean 1: exp(N(-sigma^2 / 2, sigma)).
  boost::random::normal_distribution<double> n(-jitter_sigma_ * jitter_sigma_ / 2.0, jitter_sigma_);
  return std::exp(n(jitter_rng_[static_cast<std::size_t>(gpu)]));
}

}  // namespace epsim::hardware
