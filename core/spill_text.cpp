// SPDX-License-Identifier: Apache-2.0
#include "core/spill_text.hpp"

#include <array>
#include <cerrno>
#include <cstring>
#include <sstream>
#include <utility>

#include "core/error.hpp"

namespace epsim::core {

SpillText::SpillText(std::string head, std::size_t memory_bytes)
    : tail_(std::move(head)), memory_bytes_(memory_bytes) {}

SpillText::~SpillText() {
  if (file_ != nullptr) {
    std::fclose(file_);
  }
}

void SpillText::spill() {
  if (file_ == nullptr) {
    file_ = std::tmpfile();
    if (file_ == nullptr) {
      throw Error(std::string("cannot create a temporary file for a log: ") + std::strerror(errno));
    }
  }
  if (std::fwrite(tail_.data(), 1, tail_.size(), file_) != tail_.size()) {
    throw Error(std::string("cannot write a log's temporary file (disk full?): ") + std::strerror(errno));
  }
  spilled_ += tail_.size();
  tail_.clear();
}

void SpillText::write_to(std::ostream& out) const {
  if (file_ != nullptr) {
    if (std::fflush(file_) != 0 || std::fseek(file_, 0, SEEK_SET) != 0) {
      throw Error(std::string("cannot read back a log's temporary file: ") + std::strerror(errno));
    }
    std::array<char, 1 << 16> chunk{};
    std::size_t left = spilled_;
    while (left > 0) {
      const std::size_t n = std::fread(chunk.data(), 1, std::min(left, chunk.size()), file_);
      if (n == 0) {
        throw Error("a log's temporary file ended early");
      }
      out.write(chunk.data(), static_cast<std::streamsize>(n));
      left -= n;
    }
    std::fseek(file_, 0, SEEK_END);  // later spills append
  }
  out.write(tail_.data(), static_cast<std::streamsize>(tail_.size()));
}

std::string SpillText::str() const {
  std::ostringstream s;
  write_to(s);
  return std::move(s).str();
}

}  // namespace epsim::core
