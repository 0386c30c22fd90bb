#include "sim/core/atomic_file.hpp"

#include <unistd.h>
#include <fstream>
#include <system_error>

#include "sim/core/error.hpp"
#include "sim/core/signal_cleanup.hpp"

namespace epsim::core {

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  write_file_atomically(
      path, [content](std::ostream& out) { out.write(content.data(), static_cast<std::streamsize>(content.size())); });
}

void write_file_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write) {
  std::filesystem::path tmp = path;
  tmp += ".tmp-" + std::to_string(::getpid());
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

}  // namespace epsim::core
