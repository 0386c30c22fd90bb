// SPDX-License-Identifier: Apache-2.0
#include "workloads/content_id.hpp"

#include "core/random_streams.hpp"

namespace epsim::workloads {

std::uint64_t content_id(ContentPurpose purpose, std::uint64_t value) {
  constexpr std::uint64_t low56 = (std::uint64_t{1} << 56U) - 1U;
  return core::mix64((static_cast<std::uint64_t>(purpose) << 56U) | (value & low56));
}

std::uint64_t turn_content_id(ContentPurpose purpose, std::int64_t session, int turn) {
  return content_id(purpose, (static_cast<std::uint64_t>(session) << 16U) | static_cast<std::uint64_t>(turn));
}

}  // namespace epsim::workloads
