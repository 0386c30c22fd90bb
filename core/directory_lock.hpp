// SPDX-License-Identifier: Apache-2.0
#pragma once
// One writer per output directory: an exclusive flock(2) on a lock file inside it, held for the
// writer's lifetime and released by the kernel however the process ends (SIGKILL included), so a stale
// lock cannot outlive its holder. The file holds the holder's PID, for the refusal message of a second
// writer, which fails at once instead of interleaving its results with the first one's.
#include <filesystem>
#include <string>

namespace epsim::core {

class DirectoryLock {
 public:
  /// Takes the lock on `dir`/`name` (created when absent). Throws core::Error naming the directory and
  /// the holder's PID when another process holds it, and naming the file when it cannot be made or is
  /// not a regular file. `what` names the writer in the message ("epsim sweep").
  DirectoryLock(const std::filesystem::path& dir, const std::string& name, const std::string& what);
  ~DirectoryLock();
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace epsim::core
