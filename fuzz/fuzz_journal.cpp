// SPDX-License-Identifier: Apache-2.0
// What the writers read back of their own earlier output, which anything may have changed since: a
// sweep's journal (DIR/journal/rank-N.jsonl, loaded line by line, and reopened for appending, which sets a
// torn last line aside) and the manifest of a directory epsim shares with its user (.epsim-manifest,
// which decides what a writer may remove). The input's first byte picks the file; the rest is its text.
#include <unistd.h>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/carried_entries.hpp"
#include "core/error.hpp"
#include "experiments/studies/study_journal.hpp"
#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace fs = std::filesystem;
  epsim::fuzz::Selected in;
  if (!epsim::fuzz::select(data, size, 2, in)) {
    return 0;
  }
  static const fs::path dir = epsim::fuzz::scratch_directory() / ("epsim_fuzz_journal_" + std::to_string(::getpid()));
  static const struct Cleanup {
    ~Cleanup() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } cleanup;
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir / "journal");
  const fs::path file = in.choice == 0 ? dir / "journal" / "rank-0.jsonl" : dir / epsim::core::manifest_name();
  std::ofstream(file, std::ios::binary)
      .write(reinterpret_cast<const char*>(in.data), static_cast<std::streamsize>(in.size));
  try {
    if (in.choice == 0) {
      std::vector<std::string> warnings;
      (void)epsim::experiments::Journal::load(dir, &warnings);
      const epsim::experiments::Journal reopened(dir, "rank-0");
      (void)epsim::experiments::Journal::load(dir, &warnings);
    } else {
      (void)epsim::core::read_manifest(dir);
    }
  } catch (const epsim::core::Error&) {
  }
  return 0;
}
