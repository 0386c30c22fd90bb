// SPDX-License-Identifier: Apache-2.0
#pragma once
// A text file compiled into the binary (presets, the demo config); see cmake/embed_files.cmake.
#include <span>
#include <string_view>

namespace epsim::core {

struct EmbeddedFile {
  std::string_view name;     ///< file stem, e.g. "qwen3-30b-a3b"
  std::string_view content;  ///< the file's text
};

}  // namespace epsim::core
