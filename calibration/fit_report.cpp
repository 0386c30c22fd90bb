// SPDX-License-Identifier: Apache-2.0
#include "calibration/fit_report.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace epsim::calibration {
namespace {

std::string pct(double fraction) {
  return fmt::format("{:+.1f} %", 100.0 * fraction);
}

std::string mape(const ErrorSummary& e) {
  return e.rows == 0 ? "-" : fmt::format("{:.1f} %", 100.0 * e.mape);
}

std::string errors(const ErrorSummary& e) {
  return e.rows == 0 ? "- | - | -" : fmt::format("{} | {} | {}", mape(e), pct(e.max_error), pct(e.bias));
}

std::string param(double value, double se, bool held, bool fitted) {
  if (!fitted || held) {
    return fmt::format("{:.4g} (held)", value);
  }
  return fmt::format("{:.4g} ±{:.0f} %", value, 100.0 * se);
}

std::string warnings_list(const std::vector<std::string>& warnings) {
  std::string out;
  for (const std::string& w : warnings) {
    out += "- warning: " + w + "\n";
  }
  return out;
}

}  // namespace

std::string kernel_fit_report(const KernelFit& fit) {
  std::string out =
      "| family | precision | library | rows | compute | memory | knee | fixed_us | floor_us | softmax_head_dim | "
      "base MAPE | fit MAPE | held-out MAPE | held-out max | held-out bias |\n"
      "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const FamilyFit& f : fit.families) {
    const hardware::Efficiency& e = f.efficiency;
    const std::array<double, 6> values{e.compute, e.memory, e.knee, e.fixed_us, e.floor_us, e.softmax_head_dim};
    std::string params;
    for (std::size_t k = 0; k < values.size(); ++k) {
      params += " | " + param(values[k], f.standard_error[k], f.held[k], f.fitted);
    }
    out += fmt::format("| {} | {} | {} | {}{} | {} | {} | {} |\n", hardware::op_kind_name(f.kind),
                       hardware::precision_name(f.precision), hardware::library_info(e.library).name, f.rows, params,
                       mape(f.before), mape(f.in_sample), errors(f.held_out));
  }
  if (!fit.speed_factors.empty()) {
    out +=
        "\nper-GPU speed factors (geometric mean 1, fitted as a run applies them, stress-weighted; use as "
        "[cluster] speed_factors):";
    for (std::size_t g = 0; g < fit.speed_factors.size(); ++g) {
      out += fmt::format(" gpu_id {}: {:.4f}", fit.gpu_ids[g], fit.speed_factors[g]);
    }
    out += "\n";
  }
  return out + warnings_list(fit.warnings);
}

std::string collective_fit_report(const CollectiveFit& fit) {
  std::string out = "| parameter | base | fitted |\n|---|---:|---:|\n";
  for (const CollectiveParam& p : fit.params) {
    out += fmt::format("| {} | {:.4g} | {} |\n", p.name, p.before, param(p.after, p.standard_error, p.held, true));
  }
  out +=
      "\n| collectives | rows | base MAPE | fit MAPE | held-out MAPE | held-out max | held-out bias |\n"
      "|---|---:|---:|---:|---:|---:|---:|\n";
  for (const CollectiveFitGroup& g : fit.groups) {
    out += fmt::format("| {} | {} | {} | {} | {} |\n", g.name, g.in_sample.rows, mape(g.before), mape(g.in_sample),
                       errors(g.held_out));
  }
  return out + warnings_list(fit.warnings);
}

std::string library_notes(const hardware::GpuSpec& gpu, std::span<const Measurement> rows) {
  struct Mismatch {
    hardware::OpKind kind;
    hardware::Precision precision;
    hardware::KernelLibrary rows_library;
    std::size_t rows = 0;
  };
  std::vector<Mismatch> found;
  for (const Measurement& m : rows) {
    hardware::OpKind kind{};
    if (!kernel_kind(m.op, kind)) {
      continue;
    }
    const hardware::KernelLibrary described = gpu.eff(kind, m.dtype).library;
    const hardware::KernelLibrary ran = hardware::library_of_kernel(m.kernel);
    if (described == hardware::KernelLibrary::any || ran == hardware::KernelLibrary::any || ran == described) {
      continue;
    }
    auto it = std::find_if(found.begin(), found.end(), [&](const Mismatch& x) {
      return x.kind == kind && x.precision == m.dtype && x.rows_library == ran;
    });
    if (it == found.end()) {
      found.push_back({kind, m.dtype, ran, 0});
      it = found.end() - 1;
    }
    ++it->rows;
  }
  std::string out;
  for (const Mismatch& x : found) {
    out += fmt::format("- note: {} {} rows of {} {} priced with the efficiencies of {}\n", x.rows,
                       hardware::library_info(x.rows_library).name, hardware::op_kind_name(x.kind),
                       hardware::precision_name(x.precision),
                       hardware::library_info(gpu.eff(x.kind, x.precision).library).name);
  }
  return out;
}

void add_check(std::vector<CheckGroup>& groups, std::string_view op, std::string_view regime, double predicted,
               double measured) {
  for (CheckGroup& g : groups) {
    if (g.op == op && g.regime == regime) {
      add_error(g.errors, predicted, measured);
      return;
    }
  }
  groups.push_back({std::string(op), std::string(regime), {}});
  add_error(groups.back().errors, predicted, measured);
}

std::string check_report(std::span<const CheckGroup> groups) {
  std::string out = "| op | regime | rows | MAPE | max error | bias |\n|---|---|---:|---:|---:|---:|\n";
  for (const CheckGroup& g : groups) {
    out += fmt::format("| {} | {} | {} | {} |\n", g.op, g.regime, g.errors.rows, errors(g.errors));
  }
  return out;
}

}  // namespace epsim::calibration
