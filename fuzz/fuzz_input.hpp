// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shared by the libFuzzer harnesses: an input as a file (the parsers read paths, as the CLI gives them),
// the input split into a selector byte and the rest (harnesses over a registry of formats), and the one
// outcome a parser may have besides success, core::Error. Anything else (another exception, a crash, a
// sanitizer report, a leak, more than -rss_limit_mb of memory) is a finding.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <string_view>

namespace epsim::fuzz {

/// Where scratch files go: /dev/shm when there is one (memory, so a file costs no disk write: the harnesses
/// run several times faster there), else the system's temporary directory.
inline std::filesystem::path scratch_directory() {
  std::error_code ec;
  if (std::filesystem::is_directory("/dev/shm", ec)) {
    return "/dev/shm";
  }
  return std::filesystem::temp_directory_path();
}

/// The scratch files this process wrote, removed when it exits (libFuzzer ends a run with exit()).
struct ScratchFiles {
  std::set<std::filesystem::path> paths;
  ~ScratchFiles() {
    std::error_code ignored;
    for (const auto& p : paths) {
      std::filesystem::remove(p, ignored);
    }
  }
};

/// Writes `data` to a per-process scratch file with extension `ext` and returns its path.
inline std::filesystem::path input_file(const std::uint8_t* data, std::size_t size, const std::string& ext) {
  static ScratchFiles scratch;
  const std::filesystem::path p = scratch_directory() / ("epsim_fuzz_" + std::to_string(::getpid()) + ext);
  scratch.paths.insert(p);
  std::ofstream(p, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return p;
}

/// An input whose first byte picks one of `choices` (a format, an importer) and whose rest is its content.
struct Selected {
  std::size_t choice = 0;
  const std::uint8_t* data = nullptr;
  std::size_t size = 0;
  std::string_view text() const { return {reinterpret_cast<const char*>(data), size}; }
};

/// Splits an input as Selected; false for an empty input.
inline bool select(const std::uint8_t* data, std::size_t size, std::size_t choices, Selected& out) {
  if (size == 0 || choices == 0) {
    return false;
  }
  out = Selected{static_cast<std::size_t>(data[0]) % choices, data + 1, size - 1};
  return true;
}

}  // namespace epsim::fuzz
