// SPDX-License-Identifier: Apache-2.0
#pragma once
// The fit of a GPU's roofline to measured kernels (`epsim calibrate fit`): per kernel family and
// precision (rows of another precision leave a precision's efficiencies as they were), the achievable
// shares of peak compute and bandwidth (memory under the GPU's max_memory_efficiency), the smooth knee's
// exponent, the fixed cost per kernel, the floor of a kernel's body and attention's softmax head dim; per physical GPU
// (rows with gpu_id), a speed factor (geometric mean 1, so efficiency and speed separate). A speed factor s is the one
// a run applies (hardware/variability.hpp): a kernel shows 1 + (s - 1) w(x) of it, w the stress weight at its intensity
// over the ridge point, so a memory-bound kernel shows a quarter of the deviation by default and the fitted s is what
// `[cluster] speed_factors` means in a run. Least squares on log(predicted / measured) with Eigen's
// Levenberg-Marquardt; k-fold held-out errors per family; a parameter the table cannot determine is held at the base
// preset's value with a warning, and a speed factor that trades off against an efficiency exactly refuses the fit.
#include <array>
#include <span>
#include <string>
#include <vector>

#include "calibration/fit_error.hpp"
#include "calibration/measurement_table.hpp"
#include "hardware/gpu_spec.hpp"
#include "hardware/variability.hpp"

namespace epsim::calibration {

struct KernelFitOptions {
  int folds = 5;                    ///< k of the k-fold held-out errors (fewer when a family has fewer rows)
  int min_rows = 5;                 ///< a family with fewer rows keeps the base preset's parameters
  double degenerate_ratio = 1e-10;  ///< smallest / largest eigenvalue of the scaled normal matrix
  double poorly_determined = 0.5;   ///< relative standard error above which a parameter is flagged
  /// How much of a GPU's speed deviation each kernel shows: the run's (default [cluster.variability.stress]).
  hardware::StressConfig stress;
};

/// The parameters of one family at one precision, in the order of FamilyFit::standard_error.
inline constexpr std::array<const char*, 6> k_family_params{"compute",  "memory",   "knee",
                                                            "fixed_us", "floor_us", "softmax_head_dim"};

/// One kernel family at one precision (its [efficiency.<family>.<precision>] table).
struct FamilyFit {
  hardware::OpKind kind = hardware::OpKind::dense_gemm;
  hardware::Precision precision = hardware::Precision::bf16;
  std::size_t rows = 0;
  bool fitted = false;                     ///< false: too few rows, the base preset's values kept
  hardware::Efficiency efficiency;         ///< the result (fitted, or the base's)
  std::array<bool, 6> held{};              ///< parameters held at the base value (undetermined)
  std::array<double, 6> standard_error{};  ///< relative standard error of each fitted parameter
  ErrorSummary before;                     ///< the base preset against the rows
  ErrorSummary in_sample;                  ///< the fit against the rows it was fitted on
  ErrorSummary held_out;                   ///< k-fold: each row predicted by a fit without it
};

struct KernelFit {
  hardware::GpuSpec gpu;              ///< the base with every fitted family's parameters
  std::vector<FamilyFit> families;    ///< (family, precision) pairs the table has rows of, in enum order
  std::vector<int> gpu_ids;           ///< physical GPUs with rows (when at least two)
  std::vector<double> speed_factors;  ///< per gpu_ids entry, geometric mean 1
  std::vector<std::string> warnings;
};

/// Fits `base` to the kernel rows of `rows` (collective rows are ignored). Throws core::Error when the
/// table has no kernel rows, fewer rows than parameters, or speed and efficiency cannot be separated.
KernelFit fit_kernels(const hardware::GpuSpec& base, std::span<const Measurement> rows,
                      const KernelFitOptions& options = {});

}  // namespace epsim::calibration
