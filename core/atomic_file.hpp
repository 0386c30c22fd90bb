// SPDX-License-Identifier: Apache-2.0
#pragma once
// Writes a whole file or nothing: content goes to a temporary file beside the target ("NAME.tmp-PID"),
// flushed to disk, then renamed over it (and the folder flushed), so readers never see a half-written
// result, even after a crash of the machine. Only a new name or a regular file is replaced
// (core/file_kind.hpp): never a device, a FIFO, a directory or a symbolic link.
#include <filesystem>
#include <functional>
#include <memory>
#include <ostream>
#include <string_view>

#include "core/signal_cleanup.hpp"

namespace epsim::core {

void write_file_atomically(const std::filesystem::path& path, std::string_view content);
/// The same with the content written by `write` into the temporary file's stream (a large log streamed
/// from disk instead of held in one string); an exception from `write` removes the temporary file.
void write_file_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write);

/// A file written whole to its temporary but not yet in place: install() renames it over the target, so
/// a caller can put it in place back to back with other outputs (a report's page right after its
/// figures folder). Destroyed uninstalled (an exception), or on SIGINT / SIGTERM, it removes its
/// temporary file.
class PreparedFile {
 public:
  /// Checks the target (core::check_output_file) and writes the temporary file, flushed to disk.
  PreparedFile(std::filesystem::path path, std::string_view content);
  PreparedFile(std::filesystem::path path, const std::function<void(std::ostream&)>& write);
  ~PreparedFile();
  PreparedFile(const PreparedFile&) = delete;
  PreparedFile& operator=(const PreparedFile&) = delete;
  void install();

 private:
  std::filesystem::path path_;
  std::filesystem::path tmp_;
  std::unique_ptr<SignalCleanup> cleanup_;
  bool installed_ = false;
};

/// Flushes a written file's data to disk; throws core::Error naming it when it cannot.
void sync_file(const std::filesystem::path& path);

/// Flushes a directory's entries (a rename or a new file in it) to disk; errors are ignored (some file
/// systems cannot sync a directory, and the data itself is already flushed).
void sync_directory(const std::filesystem::path& dir);

/// Removes the temporary files ("NAME.tmp-PID") directly in `dir` whose process no longer exists (a
/// killed epsim's); never another running process's, never below `dir`. Returns how many it removed.
int remove_dead_temporaries(const std::filesystem::path& dir);

}  // namespace epsim::core
