// SPDX-License-Identifier: Apache-2.0
#pragma once
// SHA-256 (FIPS 180-4) for the page's Content-Security-Policy: the page allows exactly its own inline
// script and style by their hashes ('sha256-<base64>'), not every inline script ('unsafe-inline').
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace epsim::report {

std::array<std::uint8_t, 32> sha256(std::string_view bytes);

/// Standard base64 with padding (RFC 4648 section 4), as CSP hash sources write digests.
std::string base64(const std::uint8_t* bytes, std::size_t n);

/// A CSP hash source for `text`: "'sha256-<base64 of its SHA-256>'".
std::string csp_hash_source(std::string_view text);

}  // namespace epsim::report
