// SPDX-License-Identifier: Apache-2.0
#include "core/file_kind.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "core/error.hpp"

namespace epsim::core {

namespace {

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) {
    return "a directory";
  }
  if (S_ISLNK(mode)) {
    return "a symbolic link";
  }
  if (S_ISFIFO(mode)) {
    return "a FIFO";
  }
  if (S_ISCHR(mode) || S_ISBLK(mode)) {
    return "a device";
  }
  if (S_ISSOCK(mode)) {
    return "a socket";
  }
  return "not a regular file";
}

}  // namespace

void check_output_file(const std::filesystem::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) {
      return;  // a new file; whether its folder can hold it is the write's own error
    }
    throw Error(path.string() + ": cannot check the output: " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    throw Error(path.string() + ": is " + kind_of(st.st_mode) +
                "; epsim writes an output only as a new or a regular file, so give another path");
  }
}

void check_input_file(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw Error(path.string() + ": cannot open: " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    throw Error(path.string() + ": is " + kind_of(st.st_mode) + "; epsim reads this input only from a regular file");
  }
}

bool entry_exists(const std::filesystem::path& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

}  // namespace epsim::core
