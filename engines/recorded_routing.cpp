// SPDX-License-Identifier: Apache-2.0
#include "engines/recorded_routing.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>

#include "core/error.hpp"
#include "workloads/trace_io.hpp"

namespace epsim::engines {

struct TraceFileSink::Impl {
  std::filesystem::path path;
  std::unique_ptr<workloads::TraceWriter> writer;
};

TraceFileSink::TraceFileSink(std::filesystem::path path) : impl_(std::make_unique<Impl>()) {
  impl_->path = std::move(path);
}
TraceFileSink::~TraceFileSink() = default;

void TraceFileSink::begin(const trace::Header& header) {
  impl_->writer = std::make_unique<workloads::TraceWriter>(impl_->path, header);
}
void TraceFileSink::step(const trace::Step& step) {
  impl_->writer->write(step);
}
void TraceFileSink::close() {
  if (!impl_->writer || impl_->writer->steps() == 0) {
    throw core::Error(impl_->path.string() + ": the recording holds no steps; nothing written");
  }
  impl_->writer->close();
}

int required_top_k(const RoutingImportOptions& o, const std::string& format) {
  if (o.model) {
    return static_cast<int>(o.model->top_k);
  }
  if (o.top_k <= 0) {
    throw std::invalid_argument(format + " records counts only: give --model NAME or --top-k K");
  }
  return o.top_k;
}

trace::Header recording_header(const RoutingImportOptions& o, std::int64_t layers, std::int64_t experts, int top_k,
                               const std::string& source, const std::string& where) {
  if (o.model) {
    const models::ModelSpec& m = *o.model;
    if (layers != m.num_moe_layers()) {
      throw core::Error(fmt::format("{}: {} MoE layers, the model {} has {} (of {} hidden layers)", where, layers,
                                    m.name, m.num_moe_layers(), m.num_layers));
    }
    if (experts != m.routed_experts) {
      throw core::Error(
          fmt::format("{}: {} experts per layer, the model {} has {}", where, experts, m.name, m.routed_experts));
    }
    if (top_k != m.top_k) {
      throw core::Error(
          fmt::format("{}: {} experts per token, the model {} has top_k = {}", where, top_k, m.name, m.top_k));
    }
  }
  if (top_k < 1 || top_k > experts) {
    throw core::Error(fmt::format("{}: top_k = {} with {} experts", where, top_k, experts));
  }
  trace::Header h;
  h.set_version(1);
  h.set_model(o.model ? (o.model_name.empty() ? o.model->name : o.model_name) : o.model_name);
  h.set_moe_layers(static_cast<std::uint32_t>(layers));
  h.set_experts(static_cast<std::uint32_t>(experts));
  h.set_top_k(static_cast<std::uint32_t>(top_k));
  h.set_source(source);
  return h;
}

trace::Step counts_step(const LoadMatrix& load, std::int64_t index, int top_k, const std::string& where) {
  trace::Step s;
  s.set_index(static_cast<std::uint64_t>(index));
  s.set_phase(trace::PHASE_UNSPECIFIED);
  double first_sum = -1.0;
  for (std::size_t l = 0; l < load.size(); ++l) {
    trace::LayerLoad* layer = s.add_layers();
    layer->mutable_expert_tokens()->Reserve(static_cast<int>(load[l].size()));
    double sum = 0.0;
    for (std::size_t e = 0; e < load[l].size(); ++e) {
      const double x = load[l][e];
      if (!(x >= 0.0) || x != std::floor(x) || x > 4.0e9) {
        throw core::Error(fmt::format("{}, layer {}, expert {}: expected a whole token count, got {}", where, l, e, x));
      }
      layer->add_expert_tokens(static_cast<std::uint32_t>(x));
      sum += x;
    }
    if (first_sum < 0.0) {
      first_sum = sum;
      if (std::fmod(sum, top_k) != 0.0) {
        throw core::Error(
            fmt::format("{}, layer {}: the counts sum to {}, not a multiple of top_k = {}", where, l, sum, top_k));
      }
    } else if (sum != first_sum) {
      throw core::Error(
          fmt::format("{}, layer {}: the counts sum to {}, layer 0's to {}: every layer routes the "
                      "same tokens",
                      where, l, sum, first_sum));
    }
  }
  const auto tokens = static_cast<std::uint32_t>(first_sum / top_k);
  s.set_tokens(tokens);
  for (int l = 0; l < s.layers_size(); ++l) {
    const auto& c = s.layers(l).expert_tokens();
    const auto most = std::max_element(c.begin(), c.end());
    if (most != c.end() && *most > tokens) {
      throw core::Error(
          fmt::format("{}, layer {}: expert {} has {} tokens, more than the {} tokens the layer routes "
                      "(counts sum / top_k = {})",
                      where, l, most - c.begin(), *most, tokens, top_k));
    }
  }
  return s;
}

std::string token_problem(std::span<const std::int64_t> ids, const trace::Header& h,
                          const std::optional<models::ModelSpec>& model) {
  if (ids.size() != h.top_k()) {
    return fmt::format("{} expert ids, expected top_k = {}", ids.size(), h.top_k());
  }
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= h.experts()) {
      return fmt::format("expert id {} out of range [0, {})", ids[i], h.experts());
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (ids[j] == ids[i]) {
        return fmt::format("expert {} chosen twice", ids[i]);
      }
    }
  }
  if (model && model->group_limited()) {
    // A bit per group (models have at most 64; more are counted the slow way).
    const std::int64_t per_group = model->routed_experts / model->expert_groups;
    std::int64_t groups = 0;
    if (model->expert_groups <= 64) {
      std::uint64_t seen = 0;
      for (const std::int64_t id : ids) {
        seen |= std::uint64_t{1} << (id / per_group);
      }
      groups = std::popcount(seen);
    } else {
      std::vector<std::int64_t> g;
      for (const std::int64_t id : ids) {
        if (std::find(g.begin(), g.end(), id / per_group) == g.end()) {
          g.push_back(id / per_group);
        }
      }
      groups = static_cast<std::int64_t>(g.size());
    }
    if (groups > model->topk_group) {
      return fmt::format("experts from {} groups, the model routes to at most topk_group = {} of its {} groups", groups,
                         model->topk_group, model->expert_groups);
    }
  }
  return "";
}

}  // namespace epsim::engines
