// SPDX-License-Identifier: Apache-2.0
#include "experiments/cli/config_keys.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "experiments/assembly/config_sections.hpp"
#include "experiments/assembly/measured_cost.hpp"
#include "experiments/cli/command_line.hpp"
#include "hardware/hardware_config.hpp"
#include "models/model_spec.hpp"
#include "policies/placement_policy.hpp"
#include "policies/policy_config.hpp"
#include "policies/registry.hpp"
#include "policies/routing_policy.hpp"
#include "policies/trigger_factory.hpp"
#include "sim/pool_config.hpp"
#include "sim/serving_config.hpp"
#include "workloads/request_generator.hpp"
#include "workloads/routing_config.hpp"

namespace epsim::experiments {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// Inserts every entry's options of `registry` as `prefix` + KEY, described "(LABEL NAME) ...", after
// the last doc of the key naming the policy (`anchor`) or of its option table, replacing what the
// default policy recorded there. Triggers' options share their table with the keys of every trigger
// (`own_table` false), so only the default trigger's own docs are replaced.
template <class Registry>
void add_registry_options(std::vector<core::ParamDoc>& docs, const Registry& registry, std::string_view label,
                          const std::string& anchor, const std::string& prefix, bool own_table) {
  std::vector<core::ParamDoc> options;
  for (const auto& entry : registry.entries()) {
    for (core::ParamDoc d : registry.docs(entry)) {
      d.key = prefix + d.key;
      d.description = fmt::format("({} {}) {}", label, entry.name, d.description);
      options.push_back(std::move(d));
    }
  }
  // The default policy's options, recorded unqualified by the live reader, come back qualified.
  const auto recorded_by_default = [&](const core::ParamDoc& d) {
    return own_table ? starts_with(d.key, prefix)
                     : std::any_of(options.begin(), options.end(), [&](const core::ParamDoc& o) {
                         return o.key == d.key && o.description.ends_with(") " + d.description);
                       });
  };
  std::erase_if(docs, recorded_by_default);
  auto last = std::find_if(docs.rbegin(), docs.rend(),
                           [&](const core::ParamDoc& d) { return d.key == anchor || starts_with(d.key, prefix); });
  docs.insert(last.base(), options.begin(), options.end());
}

// A markdown cell: pipes escaped, so a description cannot split the row.
std::string cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') {
      out += '\\';
    }
    out += c;
  }
  return out;
}

// A type for a markdown cell: a choice's names as code, `a` \| `b`.
std::string markdown_type(const std::string& type) {
  constexpr std::string_view k_choice = "one of: ";
  if (!starts_with(type, k_choice)) {
    return cell(type);
  }
  std::string out;
  std::string_view names = std::string_view(type).substr(k_choice.size());
  while (!names.empty()) {
    const std::size_t comma = names.find(", ");
    out += fmt::format("{}`{}`", out.empty() ? "" : " \\| ", names.substr(0, comma));
    names = comma == std::string_view::npos ? std::string_view() : names.substr(comma + 2);
  }
  return out;
}

}  // namespace

std::vector<core::ParamDoc> document_config() {
  core::ParamTable root{std::string()};
  parse_run_section(root);
  models::parse_model_section(root);
  hardware::parse_hardware_sections(root);
  // The serving and routing readers check their keys against the cluster and the model; documentation
  // mode has neither, so they get a small consistent shape (any valid one records the same keys).
  const serving::ServingSections sections = serving::parse_serving_sections(root, {8, 8, 8});
  auto workload = root.table("workload", "request arrivals and lengths");
  workloads::parse_workload(workload);
  workloads::parse_routing_section(root, {1, 8, 2, 1, 1});
  auto policy = root.table("policy", "placement, routing and rebalancing policies (epsim list policies)");
  const policies::PolicyConfig policy_config = policies::parse_policy_section(policy);
  const hardware::EpCommConfig comm;
  const std::optional<hardware::EpCommConfig> no_prefill_comm;
  serving::parse_pools(root, sections, {8, 8, 8, &comm, &no_prefill_comm, &policy_config});
  parse_outputs(root);
  parse_measured_cost_section(root);

  std::vector<core::ParamDoc> docs = root.docs();
  add_registry_options(docs, policies::placement_registry(), "placement", "policy.placement",
                       "policy.placement_options.", true);
  add_registry_options(docs, policies::routing_registry(), "routing", "policy.routing", "policy.routing_options.",
                       true);
  add_registry_options(docs, policies::trigger_registry(), "trigger", "policy.rebalance.trigger", "policy.rebalance.",
                       false);
  return docs;
}

std::vector<std::string> config_sections(const std::vector<core::ParamDoc>& docs) {
  std::vector<std::string> out;
  for (const core::ParamDoc& d : docs) {
    for (std::size_t dot = d.key.find('.'); dot != std::string::npos; dot = d.key.find('.', dot + 1)) {
      std::string section = d.key.substr(0, dot);
      if (std::find(out.begin(), out.end(), section) == out.end()) {
        out.push_back(std::move(section));
      }
    }
  }
  return out;
}

std::vector<core::ParamDoc> section_keys(const std::vector<core::ParamDoc>& docs, const std::string& section,
                                         const std::vector<std::string>& except) {
  const auto inside = [&](const core::ParamDoc& d, const std::string& s) {
    return s.empty() || starts_with(d.key, s + ".");
  };
  const auto check = [&](const std::string& s) {
    if (std::none_of(docs.begin(), docs.end(), [&](const core::ParamDoc& d) { return inside(d, s); })) {
      throw UsageError(fmt::format("list keys: unknown section \"{}\"; valid sections are: {}", s,
                                   fmt::join(config_sections(docs), ", ")));
    }
  };
  check(section);
  std::for_each(except.begin(), except.end(), check);
  std::vector<core::ParamDoc> out;
  std::copy_if(docs.begin(), docs.end(), std::back_inserter(out), [&](const core::ParamDoc& d) {
    return inside(d, section) &&
           std::none_of(except.begin(), except.end(), [&](const std::string& s) { return inside(d, s); });
  });
  return out;
}

std::string key_line(const core::ParamDoc& d) {
  return fmt::format("{} ({}{}{}; {}): {}", d.key, d.type, d.bounds.empty() ? "" : " ", d.bounds,
                     d.default_value.empty() ? "required" : "default " + d.default_value, d.description);
}

void print_keys_markdown(const std::vector<core::ParamDoc>& docs, const std::string& section, std::ostream& out) {
  const std::size_t strip = section.empty() ? 0 : section.size() + 1;
  out << "| key | type | range | default | meaning |\n| --- | --- | --- | --- | --- |\n";
  for (const core::ParamDoc& d : docs) {
    out << fmt::format("| `{}` | {} | {} | {} | {} |\n", d.key.substr(strip), markdown_type(d.type), cell(d.bounds),
                       d.default_value.empty() ? "required" : cell(d.default_value), cell(d.description));
  }
}

}  // namespace epsim::experiments
