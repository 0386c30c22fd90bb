#include "sim/core/atomic_file.hpp"

#include <unistd.h>
#include <fstream>
#include <system_error>

#include "sim/core/error.hpp"

namespace epsim::core {

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  std::filesystem::path tmp = path;
  tmp += ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      throw Error("cannot write " + tmp.string());
    }
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      std::error_code ignored;
      std::filesystem::remove(tmp, ignored);
      throw Error("failed writing " + tmp.string());
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw Error("cannot rename " + tmp.string() + " to " + path.string() + ": " + ec.message());
  }
}

}  // namespace epsim::core
