// SPDX-License-Identifier: Apache-2.0
#pragma once
// What epsim agrees to read and to replace. A single-file output replaces only a regular file (or takes
// a new name): never a device node (as root, --out /dev/null would replace the system's /dev/null), a
// FIFO, a directory or a symbolic link (whose rename would replace the link, and whose dangling form
// would fail only after the work). An input is read only from a regular file (a symlink to one is
// fine): a FIFO would block the reader forever, a device may never end. Every writer and reader of
// files given on the command line goes through these checks.
#include <filesystem>

namespace epsim::core {

/// Throws core::Error naming `path` unless it is absent or a regular file (not followed when a link).
void check_output_file(const std::filesystem::path& path);

/// Throws core::Error naming `path` unless it is a regular file (following symbolic links).
void check_input_file(const std::filesystem::path& path);

/// True when `path` exists as a directory entry of any kind, a dangling symbolic link included.
bool entry_exists(const std::filesystem::path& path);

}  // namespace epsim::core
