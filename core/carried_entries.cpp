// SPDX-License-Identifier: Apache-2.0
#include "core/carried_entries.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/file_kind.hpp"

namespace epsim::core {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t k_max_manifest_bytes = std::size_t{1} << 20;
constexpr const char* k_manifest_header =
    "# epsim: the files it wrote here, and the only ones it replaces or removes\n";

bool plain_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

void carry_one(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(from, ec);
  if (ec) {
    return;  // gone meanwhile: nothing to carry
  }
  if (fs::is_directory(st)) {
    fs::create_directory(to, ec);
    if (ec) {
      throw Error("cannot carry " + from.string() + " over to the new " + to.parent_path().string() + ": " +
                  ec.message());
    }
    for (const auto& e : fs::directory_iterator(from, ec)) {
      carry_one(e.path(), to / e.path().filename());
    }
    if (ec) {  // carrying part of it would lose the rest with the old directory
      throw Error("cannot read " + from.string() + " to carry it over: " + ec.message());
    }
    sync_directory(to);
    return;
  }
  // linkat without AT_SYMLINK_FOLLOW links a symbolic link itself, never what it points to.
  if (::linkat(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), 0) == 0) {
    return;
  }
  const int saved = errno;
  if (fs::is_regular_file(st) && (saved == EPERM || saved == EXDEV || saved == EMLINK)) {
    fs::copy_file(from, to, ec);  // a file another user owns (protected hard links): a copy keeps it
    if (!ec) {
      return;
    }
  }
  throw Error("cannot carry " + from.string() + " over to the new " + to.parent_path().string() + ": " +
              std::strerror(saved));
}

}  // namespace

const char* manifest_name() {
  return ".epsim-manifest";
}

std::set<std::string> read_manifest(const fs::path& dir) {
  std::set<std::string> names;
  const fs::path path = dir / manifest_name();
  std::error_code ec;
  if (!fs::is_regular_file(fs::symlink_status(path, ec)) || fs::file_size(path, ec) > k_max_manifest_bytes) {
    return names;  // none, or not one epsim wrote: nothing counts as the writer's
  }
  std::ifstream in(path, std::ios::binary);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.front() != '#' && plain_name(line)) {
      names.insert(line);
    }
  }
  return names;
}

void write_manifest(const fs::path& dir, const std::set<std::string>& carried) {
  std::set<std::string> written;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name != manifest_name() && carried.count(name) == 0 && plain_name(name) &&
        name.find('\n') == std::string::npos) {
      written.insert(name);
    }
  }
  std::ostringstream text;
  text << k_manifest_header;
  for (const std::string& n : written) {
    text << n << '\n';
  }
  write_file_atomically(dir / manifest_name(), text.str());
}

std::set<std::string> carry_entries(const fs::path& from, const fs::path& to, const std::set<std::string>& skip) {
  std::set<std::string> carried;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(from, ec)) {
    const std::string name = e.path().filename().string();
    if (skip.count(name) != 0 || name == manifest_name() || entry_exists(to / name)) {
      continue;
    }
    carry_one(e.path(), to / name);
    carried.insert(name);
  }
  if (ec) {
    throw Error("cannot read " + from.string() + " to carry its entries over: " + ec.message());
  }
  return carried;
}

void move_missing(const fs::path& from, const fs::path& to, const std::set<std::string>& skip) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(from, ec)) {
    const std::string name = e.path().filename().string();
    if (skip.count(name) != 0 || name == manifest_name()) {
      continue;
    }
    const fs::path there = to / name;
    struct stat old_st {};
    struct stat new_st {};
    if (::lstat(e.path().c_str(), &old_st) != 0) {
      continue;
    }
    if (::lstat(there.c_str(), &new_st) != 0) {
      std::error_code ignored;
      fs::rename(e.path(), there, ignored);  // appeared after the carrying
    } else if (S_ISDIR(old_st.st_mode) && S_ISDIR(new_st.st_mode)) {
      move_missing(e.path(), there, {});
    } else if (!S_ISDIR(old_st.st_mode) && !S_ISDIR(new_st.st_mode) &&
               (old_st.st_ino != new_st.st_ino || old_st.st_dev != new_st.st_dev)) {
      std::error_code ignored;
      fs::rename(e.path(), there, ignored);  // replaced by its owner after the carrying: the newer one
    }
  }
}

}  // namespace epsim::core
