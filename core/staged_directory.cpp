// SPDX-License-Identifier: Apache-2.0
#include "core/staged_directory.hpp"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <system_error>

#include "core/atomic_file.hpp"
#include "core/carried_entries.hpp"
#include "core/error.hpp"

namespace epsim::core {

namespace {

std::string staging_prefix(const std::filesystem::path& target) {
  std::string p(1, '.');  // appended piecewise: GCC 12's -Wrestrict misfires on "." + std::string
  p.append(target.filename().string());
  p.append(".epsim-staging-");
  return p;
}

// Staging directories of processes that no longer exist (killed before they could clean up) whose names
// start with `prefix`.
void remove_dead_staging_with(const std::filesystem::path& parent, const std::string& prefix) {
  const std::string marker = ".epsim-staging-";
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(parent, ec)) {
    const std::string name = entry.path().filename().string();
    const std::size_t at = name.rfind(marker);
    if (name.rfind(prefix, 0) != 0 || at == std::string::npos || name.front() != '.') {
      continue;
    }
    const std::string pid_text = name.substr(at + marker.size());
    char* end = nullptr;
    const long pid = std::strtol(pid_text.c_str(), &end, 10);
    if (pid > 0 && end != nullptr && *end == '\0' && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
      std::error_code ignored;
      std::filesystem::remove_all(entry.path(), ignored);
    }
  }
}

void remove_stale_staging(const std::filesystem::path& target) {
  remove_dead_staging_with(target.parent_path().empty() ? "." : target.parent_path(), staging_prefix(target));
}

}  // namespace

StagedDirectory::StagedDirectory(std::filesystem::path target, std::span<const std::string_view> owned,
                                 Existing existing)
    : target_(std::move(target)), existing_(existing), owned_(owned.begin(), owned.end()) {
  std::error_code ec;
  std::filesystem::path given = std::filesystem::absolute(target_, ec).lexically_normal();
  if (given.filename().empty()) {
    given = given.parent_path();  // "link/" names the link too
  }
  if (!ec && std::filesystem::is_symlink(given, ec)) {
    throw Error(given.string() +
                ": is a symbolic link; epsim replaces only a real directory here, so give its "
                "target or another path");
  }
  // A real name (".", "dir/" and "a/../b" have none or a misleading one): the staging directory is its
  // sibling.
  target_ = std::filesystem::weakly_canonical(std::filesystem::absolute(target_, ec), ec);
  if (ec || target_.filename().empty() || target_ == target_.root_path()) {
    throw Error("cannot use " + target_.string() + " as a results directory");
  }
  if (std::filesystem::exists(target_, ec) && !std::filesystem::is_directory(target_, ec)) {
    throw Error(target_.string() + ": exists and is not a directory (expected a results directory to write)");
  }
  if (existing_ == Existing::refuse_foreign && std::filesystem::is_directory(target_, ec)) {
    for (const auto& entry : std::filesystem::directory_iterator(target_, ec)) {
      const std::string name = entry.path().filename().string();
      const bool ours =
          std::find(owned.begin(), owned.end(), name) != owned.end() || name.find(".tmp-") != std::string::npos;
      if (!ours) {
        throw Error(target_.string() + ": holds " + name +
                    ", which is not a result epsim writes; the results replace the directory as a whole, so give "
                    "a new or an earlier results directory as the output");
      }
    }
  }
  if (!target_.parent_path().empty()) {
    std::filesystem::create_directories(target_.parent_path(), ec);
    if (ec) {
      throw Error("cannot create " + target_.parent_path().string() + " for the results: " + ec.message());
    }
  }
  remove_stale_staging(target_);
  std::string name = staging_prefix(target_);
  name.append(std::to_string(::getpid()));
  staging_ = target_.parent_path() / name;
  std::filesystem::remove_all(staging_, ec);
  if (!std::filesystem::create_directory(staging_, ec) || ec) {
    throw Error("cannot create the results directory " + target_.string() + " (staging it at " + staging_.string() +
                "): " + (ec ? ec.message() : std::string("it exists")));
  }
  install_signal_cleanup();
  cleanup_ = std::make_unique<SignalCleanup>(staging_, SignalCleanup::Kind::empty_directory);
}

void remove_dead_staging(const std::filesystem::path& parent) {
  remove_dead_staging_with(parent, ".");
}

StagedDirectory::~StagedDirectory() {
  if (!committed_) {
    std::error_code ignored;
    std::filesystem::remove_all(staging_, ignored);
  }
}

void StagedDirectory::commit() {
  const SignalBlock block;
  std::error_code ec;
  // What stays the writer's to replace: its manifest's names, its own names, what it just wrote.
  std::set<std::string> mine = owned_;
  if (existing_ == Existing::carry_foreign) {
    for (const auto& e : std::filesystem::directory_iterator(staging_)) {
      mine.insert(e.path().filename().string());
    }
    std::set<std::string> carried;
    if (std::filesystem::is_directory(target_, ec)) {
      const std::set<std::string> listed = read_manifest(target_);
      mine.insert(listed.begin(), listed.end());
      carried = carry_entries(target_, staging_, mine);
    }
    write_manifest(staging_, carried);
  }
  sync_directory(staging_);
  const auto finish = [&](const std::filesystem::path& old) {
    committed_ = true;
    if (existing_ == Existing::carry_foreign) {
      move_missing(old, target_, mine);  // what appeared in the old directory while it was carried
    }
    sync_directory(target_.parent_path());
    std::error_code ignored;
    std::filesystem::remove_all(old, ignored);  // the old results
  };
  if (std::filesystem::exists(target_, ec)) {
    // Swap in one step; the staging path then holds the old results, removed below.
    if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, target_.c_str(), RENAME_EXCHANGE) != 0) {
      if (errno != EINVAL && errno != ENOSYS) {
        throw Error("cannot replace " + target_.string() + ": " + std::strerror(errno));
      }
      // A file system without the exchange: the old results step aside first (for an instant the
      // target is absent, never mixed).
      const std::filesystem::path aside = staging_.string() + ".old";
      std::filesystem::rename(target_, aside, ec);
      if (ec) {
        throw Error("cannot replace " + target_.string() + ": " + ec.message());
      }
      std::filesystem::rename(staging_, target_, ec);
      if (ec) {
        std::error_code ignored;
        std::filesystem::rename(aside, target_, ignored);
        throw Error("cannot replace " + target_.string() + ": " + ec.message());
      }
      finish(aside);
      return;
    }
    finish(staging_);
    return;
  }
  std::filesystem::rename(staging_, target_, ec);
  if (ec) {
    throw Error("cannot create " + target_.string() + ": " + ec.message());
  }
  committed_ = true;
  sync_directory(target_.parent_path());
}

}  // namespace epsim::core
