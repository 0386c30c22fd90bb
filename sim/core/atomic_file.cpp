#include "sim/core/atomic_file.hpp"

#include <unistd.h>
#include <fstream>
#include <list>
#include <system_error>

#include "sim/core/error.hpp"
#include "sim/core/signal_cleanup.hpp"

namespace epsim::core {

namespace {

std::filesystem::path temporary_of(const std::filesystem::path& path) {
  std::filesystem::path tmp = path;
  tmp += ".tmp-" + std::to_string(::getpid());
  return tmp;
}

}  // namespace

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  write_file_atomically(
      path, [content](std::ostream& out) { out.write(content.data(), static_cast<std::streamsize>(content.size())); });
}

void write_file_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write) {
  const std::filesystem::path tmp = temporary_of(path);
  install_signal_cleanup();
  const SignalCleanup on_signal(tmp, SignalCleanup::Kind::file);  // an interrupted write leaves nothing
  try {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      throw Error("cannot write " + tmp.string());
    }
    write(out);
    out.flush();
    if (!out) {
      throw Error("failed writing " + tmp.string());
    }
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw Error("cannot rename " + tmp.string() + " to " + path.string() + ": " + ec.message());
  }
}

void write_files_atomically(const std::filesystem::path& dir,
                            const std::vector<std::pair<std::string, std::string>>& files) {
  install_signal_cleanup();
  std::list<SignalCleanup> on_signal;  // an interrupted write leaves no temporary file
  std::vector<std::filesystem::path> temporaries;
  const auto remove_temporaries = [&] {
    std::error_code ignored;
    for (const std::filesystem::path& t : temporaries) {
      std::filesystem::remove(t, ignored);
    }
  };
  try {
    for (const auto& [name, content] : files) {
      const std::filesystem::path tmp = temporary_of(dir / name);
      on_signal.emplace_back(tmp, SignalCleanup::Kind::file);
      temporaries.push_back(tmp);
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      if (!out) {
        throw Error("cannot write " + tmp.string());
      }
      out.write(content.data(), static_cast<std::streamsize>(content.size()));
      out.flush();
      if (!out) {
        throw Error("failed writing " + tmp.string());
      }
    }
  } catch (...) {
    remove_temporaries();
    throw;
  }
  const SignalBlock block;  // the set is renamed whole, or (a failed rename) the rest stays unrenamed
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::error_code ec;
    std::filesystem::rename(temporaries[i], dir / files[i].first, ec);
    if (ec) {
      remove_temporaries();
      throw Error("cannot rename " + temporaries[i].string() + " to " + (dir / files[i].first).string() + ": " +
                  ec.message());
    }
  }
}

}  // namespace epsim::core
