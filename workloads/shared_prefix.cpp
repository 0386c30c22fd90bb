// SPDX-License-Identifier: Apache-2.0
#include "workloads/shared_prefix.hpp"

#include <boost/random/uniform_01.hpp>
#include <cmath>

#include "workloads/content_id.hpp"

namespace epsim::workloads {

namespace {

std::vector<double> zipf_weights(std::int64_t prompts, double s) {
  std::vector<double> w(static_cast<std::size_t>(prompts));
  for (std::size_t k = 0; k < w.size(); ++k) {
    w[k] = std::pow(static_cast<double>(k + 1), -s);
  }
  return w;
}

}  // namespace

SharedPrefixConfig parse_shared_prefix(core::ParamTable& t) {
  SharedPrefixConfig c;
  c.prompts = t.integer("prompts", 0, "distinct shared system prompts (0 = none)", {0, k_max_shared_prompts});
  auto tokens = t.table("tokens", "each shared prompt's length, drawn once per prompt");
  c.tokens = parse_length_distribution(tokens, 2048);
  c.zipf_s = t.real("zipf_s", 1.0, "Zipf exponent of the prompts' popularity (0 = uniform)", {0.0, 10.0});
  c.fraction = t.real("fraction", 1.0, "fraction of requests (of sessions, with sessions) that carry one",
                      core::k_unit_interval);
  t.finish();
  return c;
}

SharedPrefixes::SharedPrefixes(const SharedPrefixConfig& cfg, const core::RandomStreams& streams)
    : fraction_(cfg.fraction), popularity_(zipf_weights(std::max<std::int64_t>(cfg.prompts, 1), cfg.zipf_s)) {
  core::Rng rng = streams.stream("shared_prefix_lengths");
  lengths_.reserve(static_cast<std::size_t>(cfg.prompts));
  for (std::int64_t k = 0; k < cfg.prompts; ++k) {
    lengths_.push_back(cfg.tokens.sample(rng));
  }
}

std::optional<std::int64_t> SharedPrefixes::pick(core::Rng& rng) {
  if (boost::random::uniform_01<double>()(rng) >= fraction_) {
    return std::nullopt;
  }
  return popularity_(rng);
}

ContentSegment SharedPrefixes::segment(std::int64_t k) const {
  return {content_id(ContentPurpose::system_prompt, static_cast<std::uint64_t>(k)), length(k)};
}

}  // namespace epsim::workloads
