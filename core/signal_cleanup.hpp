// SPDX-License-Identifier: Apache-2.0
#pragma once
// What an interrupted epsim leaves behind: nothing of its own making. Paths registered here (temporary
// files being written, an empty staging directory) are removed when SIGINT or SIGTERM arrives, and the
// process then dies of that signal as it would have. The handler only calls async-signal-safe functions
// (unlink, rmdir, signal, raise) on paths copied into fixed slots at registration, so registering
// allocates nothing the handler touches. Code that must not be cut in the middle (renaming a finished
// results directory into place) holds a SignalBlock; signals that arrive meanwhile are delivered after.
#include <csignal>
#include <filesystem>

namespace epsim::core {

/// Installs the SIGINT / SIGTERM handlers (once; later calls do nothing).
void install_signal_cleanup();

/// For a host process that owns SIGINT / SIGTERM (the Python module: Python turns SIGINT into
/// KeyboardInterrupt, and a notebook interrupts its kernel with it): install_signal_cleanup installs
/// nothing from now on, so the host's handlers stay. Call it before any epsim work; a file being written
/// when such a process dies is a dead temporary that the next run into that place removes.
void keep_host_signal_handlers();

/// A path removed on SIGINT / SIGTERM while this object lives: a file (unlink) or an empty directory
/// (rmdir). Paths beyond the registry's 64 slots or 4,095 bytes are not registered (nothing fails).
class SignalCleanup {
 public:
  enum class Kind : unsigned char { file, empty_directory };
  SignalCleanup(const std::filesystem::path& path, Kind kind);
  ~SignalCleanup();
  SignalCleanup(const SignalCleanup&) = delete;
  SignalCleanup& operator=(const SignalCleanup&) = delete;

 private:
  int slot_ = -1;
};

/// Defers SIGINT / SIGTERM while it lives (pending ones are delivered when it ends).
class SignalBlock {
 public:
  SignalBlock();
  ~SignalBlock();
  SignalBlock(const SignalBlock&) = delete;
  SignalBlock& operator=(const SignalBlock&) = delete;

 private:
  sigset_t previous_{};
};

}  // namespace epsim::core
