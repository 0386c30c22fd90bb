// SPDX-License-Identifier: Apache-2.0
// One writer per output directory: a second lock on the same directory fails at once, naming the
// holder's PID; the lock ends with its holder; a planted link as the lock file is refused.
#include <sys/file.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "core/directory_lock.hpp"
#include "core/error.hpp"

namespace fs = std::filesystem;
using Catch::Contains;
using epsim::core::DirectoryLock;

TEST_CASE("a second writer of a locked directory fails at once, naming the holder") {
  const fs::path d = fs::temp_directory_path() / ("epsim_lock_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  {
    const DirectoryLock first(d, ".lock", "epsim sweep");
    // flock(2) locks belong to open files: a second open of the same file conflicts even in one process.
    REQUIRE_THROWS_WITH(DirectoryLock(d, ".lock", "epsim sweep"),
                        Contains("in use by another epsim sweep (PID " + std::to_string(::getpid()) + ")"));
  }
  // Released with its holder: the next writer takes it.
  REQUIRE_NOTHROW(DirectoryLock(d, ".lock", "epsim sweep"));
  fs::remove(d / ".lock");
  fs::create_symlink(d / "elsewhere", d / ".lock");
  REQUIRE_THROWS_WITH(DirectoryLock(d, ".lock", "epsim sweep"), Contains("cannot open the lock file"));
  REQUIRE_FALSE(fs::exists(d / "elsewhere"));
  fs::remove_all(d);
}
