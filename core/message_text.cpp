// SPDX-License-Identifier: Apache-2.0
#include "core/message_text.hpp"

#include <fmt/format.h>

namespace epsim::core {
namespace {

// The length of the control character at `i` (1 for C0 / DEL, 2 for a C1 in UTF-8), or 0.
std::size_t control_at(std::string_view text, std::size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  if (c < 0x20 || c == 0x7f) {
    return 1;
  }
  if (c == 0xc2 && i + 1 < text.size()) {
    const auto next = static_cast<unsigned char>(text[i + 1]);
    if (next >= 0x80 && next <= 0x9f) {
      return 2;
    }
  }
  return 0;
}

}  // namespace

std::string terminal_safe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = control_at(text, i);
    if (n == 1) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[i]));
    } else if (n == 2) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(text[i + 1]));
    } else {
      out += text[i];
    }
    i += n == 0 ? 1 : n;
  }
  return out;
}

bool has_control_characters(std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (control_at(text, i) > 0) {
      return true;
    }
  }
  return false;
}

std::string excerpt(std::string_view text, std::size_t max_chars) {
  if (text.size() <= max_chars) {
    return std::string(text);
  }
  std::size_t cut = max_chars;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) {
    --cut;  // not inside a UTF-8 character
  }
  return fmt::format("{}... ({} bytes)", text.substr(0, cut), text.size());
}

}  // namespace epsim::core
