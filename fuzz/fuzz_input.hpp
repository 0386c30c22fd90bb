#pragma once
// Shared by the libFuzzer harnesses: an input as a file (the parsers read paths, as the CLI gives them)
// and the one outcome a parser may have besides success, core::Error. Anything else (another exception,
// a crash, a sanitizer report, a leak, more than -rss_limit_mb of memory) is a finding.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace epsim::fuzz {

/// Writes `data` to a per-process scratch file with extension `ext` and returns its path.
inline std::filesystem::path input_file(const std::uint8_t* data, std::size_t size, const std::string& ext) {
  const std::filesystem::path p =
      std::filesystem::temp_directory_path() / ("epsim_fuzz_" + std::to_string(::getpid()) + ext);
  std::ofstream(p, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return p;
}

}  // namespace epsim::fuzz
