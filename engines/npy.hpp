// SPDX-License-Identifier: Apache-2.0
#pragma once
// NumPy's .npy format (a magic string, a version, a Python-dict header with descr, fortran_order and shape,
// then the raw array), as vLLM sends routed experts: base64 of np.save's bytes. Integer arrays only, in
// either byte order. Written here because Debian 12 packages no C++ reader of the format.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace epsim::engines {

struct NpyArray {
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> values;  ///< C order
};

/// Parses .npy bytes; throws core::Error "`where`: ..." on a malformed header, a non-integer dtype, Fortran
/// order or short data.
NpyArray parse_npy(std::string_view bytes, const std::string& where);
/// Decodes standard base64 (padding optional, whitespace skipped); throws core::Error naming `where` on a
/// character outside the alphabet.
std::string decode_base64(std::string_view text, const std::string& where);
/// The .npy bytes of an int32 C-order array (tests and samples).
std::string npy_bytes(const std::vector<std::int64_t>& shape, const std::vector<std::int32_t>& values);
/// Standard base64 with padding (tests and samples).
std::string encode_base64(std::string_view bytes);

}  // namespace epsim::engines
