// SPDX-License-Identifier: Apache-2.0
#include "workloads/routing_config.hpp"

#include <fmt/format.h>

#include <array>

#include "core/error.hpp"
#include "workloads/trace_io.hpp"

namespace epsim::workloads {

RoutingConfig parse_routing_section(core::ParamTable& root, const RoutingShape& shape) {
  static constexpr std::array<core::Choice<RoutingSourceKind>, 2> k_sources{
      {{"synthetic", RoutingSourceKind::synthetic}, {"trace", RoutingSourceKind::trace}}};
  auto routing = root.table("routing", "where expert loads come from");
  RoutingConfig c;
  c.source = routing.choice<RoutingSourceKind>("source", RoutingSourceKind::synthetic,
                                               "routing source: synthetic generator or a trace", k_sources);
  c.synthetic = parse_synthetic_router(routing);
  c.trace.sampling = c.synthetic.sampling;  // one key for both sources' large draws
  c.trace.file = routing.string("trace_file", "", "trace: the routing trace to replay (epsim trace gen / convert)");
  c.trace.loop = routing.boolean("trace_loop", true, "trace: start again at the end (false: the run stops there)");
  c.trace.expert_groups = static_cast<int>(shape.expert_groups);
  c.trace.topk_group = static_cast<int>(shape.topk_group);
  if (c.source == RoutingSourceKind::trace) {
    if (c.trace.file.empty()) {
      routing.fail("trace_file", "source = \"trace\" needs a trace_file");
    }
    try {
      const TraceReader reader(c.trace.file);
      const auto& h = reader.header();
      if (h.moe_layers() != shape.moe_layers || h.experts() != shape.experts || h.top_k() != shape.top_k) {
        routing.fail("trace_file",
                     fmt::format("the trace has {} MoE layers x {} experts, top-{}; the model has {} x {}, top-{}",
                                 h.moe_layers(), h.experts(), h.top_k(), shape.moe_layers, shape.experts, shape.top_k));
      }
    } catch (const core::ConfigError&) {
      throw;
    } catch (const core::Error& e) {
      routing.fail("trace_file", e.what());
    }
  }
  routing.finish();
  return c;
}

}  // namespace epsim::workloads
