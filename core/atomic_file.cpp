// SPDX-License-Identifier: Apache-2.0
#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <system_error>

#include "core/error.hpp"
#include "core/file_kind.hpp"

namespace epsim::core {

namespace {

constexpr std::string_view k_tmp_marker = ".tmp-";

std::filesystem::path temporary_of(const std::filesystem::path& path) {
  std::filesystem::path tmp = path;
  tmp += std::string(k_tmp_marker) + std::to_string(::getpid());
  return tmp;
}

}  // namespace

void sync_file(const std::filesystem::path& p) {
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    throw Error("cannot reopen " + p.string() + " to flush it: " + std::strerror(errno));
  }
  const int rc = ::fsync(fd);
  const int saved = errno;
  ::close(fd);
  if (rc != 0) {
    throw Error("cannot flush " + p.string() + " to disk: " + std::strerror(saved));
  }
}

namespace {

// Writes `tmp` whole and flushed to disk, or throws (the caller removes what was written).
void write_temporary(const std::filesystem::path& tmp, const std::function<void(std::ostream&)>& write) {
  std::error_code ignored;
  std::filesystem::remove(tmp, ignored);  // a leftover of an earlier process with this PID (or a planted link)
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      throw Error("cannot write " + tmp.string());
    }
    write(out);
    out.flush();
    if (!out) {
      throw Error("failed writing " + tmp.string());
    }
  }
  sync_file(tmp);
}

// The PID of a temporary file's writer ("NAME.tmp-PID"), or 0 when the name is not one.
long temporary_pid(const std::string& name) {
  const std::size_t at = name.rfind(k_tmp_marker);
  if (at == std::string::npos || at == 0) {
    return 0;
  }
  const std::string digits = name.substr(at + k_tmp_marker.size());
  if (digits.empty() || digits.size() > 10 || digits.find_first_not_of("0123456789") != std::string::npos) {
    return 0;
  }
  const long long pid = std::strtoll(digits.c_str(), nullptr, 10);
  return pid <= std::numeric_limits<pid_t>::max() ? static_cast<long>(pid) : 0;
}

}  // namespace

PreparedFile::PreparedFile(std::filesystem::path path, std::string_view content)
    : PreparedFile(std::move(path), [content](std::ostream& out) {
        out.write(content.data(), static_cast<std::streamsize>(content.size()));
      }) {}

PreparedFile::PreparedFile(std::filesystem::path path, const std::function<void(std::ostream&)>& write)
    : path_(std::move(path)), tmp_(temporary_of(path_)) {
  check_output_file(path_);
  install_signal_cleanup();
  cleanup_ = std::make_unique<SignalCleanup>(tmp_, SignalCleanup::Kind::file);  // an interrupted write leaves nothing
  try {
    write_temporary(tmp_, write);
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(tmp_, ignored);
    throw;
  }
}

PreparedFile::~PreparedFile() {
  if (!installed_) {
    std::error_code ignored;
    std::filesystem::remove(tmp_, ignored);
  }
}

void PreparedFile::install() {
  // Checked again at the last moment: the target may have become a link or a device meanwhile.
  check_output_file(path_);
  std::error_code ec;
  std::filesystem::rename(tmp_, path_, ec);
  if (ec) {
    throw Error("cannot rename " + tmp_.string() + " to " + path_.string() + ": " + ec.message());
  }
  installed_ = true;
  sync_directory(path_.parent_path().empty() ? std::filesystem::path(".") : path_.parent_path());
}

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  PreparedFile(path, content).install();
}

void write_file_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write) {
  PreparedFile(path, write).install();
}

void sync_directory(const std::filesystem::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    (void)::fsync(fd);
    ::close(fd);
  }
}

int remove_dead_temporaries(const std::filesystem::path& dir) {
  int removed = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const long pid = temporary_pid(e.path().filename().string());
    std::error_code kind_ec;
    if (pid <= 0 || !e.is_regular_file(kind_ec) || e.is_symlink(kind_ec)) {
      continue;
    }
    // Only a writer that is gone: a running epsim (another sweep, a report) is still writing it.
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
      std::error_code ignored;
      removed += std::filesystem::remove(e.path(), ignored) ? 1 : 0;
    }
  }
  return removed;
}

}  // namespace epsim::core
