// SPDX-License-Identifier: Apache-2.0
#include "core/directory_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "core/error.hpp"

namespace epsim::core {

namespace {

// The PID the holder wrote ("?" when it has not written it yet).
std::string holder_of(int fd) {
  std::array<char, 32> buf{};
  const ssize_t n = ::pread(fd, buf.data(), buf.size() - 1, 0);
  std::string text(buf.data(), n > 0 ? static_cast<std::size_t>(n) : 0);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) {
    text.pop_back();
  }
  return text.empty() || text.find_first_not_of("0123456789") != std::string::npos ? "?" : text;
}

}  // namespace

DirectoryLock::DirectoryLock(const std::filesystem::path& dir, const std::string& name, const std::string& what) {
  const std::filesystem::path path = dir / name;
  // O_NOFOLLOW: a link planted as the lock file would make epsim write its PID through it.
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd_ < 0) {
    throw Error(path.string() + ": cannot open the lock file: " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    throw Error(path.string() + ": the lock file is not a regular file");
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int saved = errno;
    const std::string holder = holder_of(fd_);
    ::close(fd_);
    fd_ = -1;
    if (saved == EWOULDBLOCK) {
      throw Error(dir.string() + ": in use by another " + what + " (PID " + holder +
                  "); wait for it to end or give another output directory");
    }
    throw Error(path.string() + ": cannot lock: " + std::strerror(saved));
  }
  // Failing to note the PID costs only the PID in a second writer's message: the lock is held.
  const std::string pid = std::to_string(::getpid()) + "\n";
  const bool noted = ::ftruncate(fd_, 0) == 0 && ::pwrite(fd_, pid.data(), pid.size(), 0) > 0;
  static_cast<void>(noted);
}

DirectoryLock::~DirectoryLock() {
  if (fd_ >= 0) {
    ::close(fd_);  // releases the lock
  }
}

}  // namespace epsim::core
