// SPDX-License-Identifier: Apache-2.0
#pragma once
// The fits' and the checks' reports as Markdown tables (printed by `epsim calibrate fit|check`, pasted
// into docs/calibration.md, and written as comments into calibrated presets).
#include <span>
#include <string>
#include <vector>

#include "calibration/collective_fit.hpp"
#include "calibration/fit_error.hpp"
#include "calibration/kernel_fit.hpp"
#include "calibration/measurement_table.hpp"

namespace epsim::calibration {

/// Per family: rows, the fitted parameters with their relative standard errors ("held" when kept at the
/// base), and the base preset's, the fit's and the held-out errors; then speed factors and warnings.
std::string kernel_fit_report(const KernelFit& fit);
/// Per parameter: before, after, standard error; per group of rows: errors before, fitted, held out.
std::string collective_fit_report(const CollectiveFit& fit);

/// One line per (family, precision, library) of rows whose recorded kernel is of another library than
/// the one `gpu`'s efficiencies for them describe (both known): "- note: 36 flash_attn_2 rows of
/// attention_prefill bf16 priced with the efficiencies of flash_attn_3". Empty when none.
std::string library_notes(const hardware::GpuSpec& gpu, std::span<const Measurement> rows);

/// One group of a check: the rows of one op in one regime.
struct CheckGroup {
  std::string op;
  std::string regime;
  ErrorSummary errors;
};
/// Adds a row's error to its group (created in order of first appearance).
void add_check(std::vector<CheckGroup>& groups, std::string_view op, std::string_view regime, double predicted,
               double measured);
std::string check_report(std::span<const CheckGroup> groups);

}  // namespace epsim::calibration
