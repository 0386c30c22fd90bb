#include "core/atomic_file.hpp"

#include <unistd.h>
#include <fstream>
#include <list>
#include <system_error>

#include "core/error.hpp"
#include "core/signal_cleanup.hpp"

namespace epsim::core {

namespace {

std::filesystem::path temporary_of(const std::filesystem::path& path) {
  std::filesystem::path tmp = path;
  tmp += ".tmp-" + std::to_string(::getpid());
  return tmp;
}

// Writes `tmp` whole, or throws (the caller removes what was written).
void write_temporary(const std::filesystem::path& tmp, const std::function<void(std::ostream&)>& write) {
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

// Renames `tmp` over `path`; on failure removes `tmp` and throws.
void rename_into_place(const std::filesystem::path& tmp, const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw Error("cannot rename " + tmp.string() + " to " + path.string() + ": " + ec.message());
  }
}

void write_content(std::ostream& out, std::string_view content) {
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
}

}  // namespace

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  write_file_atomically(path, [content](std::ostream& out) { write_content(out, content); });
}

void write_file_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write) {
  const std::filesystem::path tmp = temporary_of(path);
  install_signal_cleanup();
  const SignalCleanup on_signal(tmp, SignalCleanup::Kind::file);  // an interrupted write leaves nothing
  try {
    write_temporary(tmp, write);
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw;
  }
  rename_into_place(tmp, path);
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
    for (const auto& file : files) {  // not a structured binding: Clang 15 cannot capture one
      temporaries.push_back(temporary_of(dir / file.first));
      on_signal.emplace_back(temporaries.back(), SignalCleanup::Kind::file);
      write_temporary(temporaries.back(), [&file](std::ostream& out) { write_content(out, file.second); });
    }
  } catch (...) {
    remove_temporaries();
    throw;
  }
  const SignalBlock block;  // the set is renamed whole, or (a failed rename) the rest stays unrenamed
  for (std::size_t i = 0; i < files.size(); ++i) {
    try {
      rename_into_place(temporaries[i], dir / files[i].first);
    } catch (...) {
      remove_temporaries();
      throw;
    }
  }
}

}  // namespace epsim::core
