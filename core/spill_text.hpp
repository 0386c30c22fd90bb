// SPDX-License-Identifier: Apache-2.0
#pragma once
// Text appended in order (a log a run writes as it goes), kept in memory up to a limit and moved past it
// to an anonymous temporary file: std::tmpfile's file has no name and the system deletes it when it is
// closed or the process ends, killed or not, so a long run's log costs disk instead of memory and leaves
// nothing behind.
#include <cstdio>
#include <ostream>
#include <string>

namespace epsim::core {

class SpillText {
 public:
  explicit SpillText(std::string head = {}, std::size_t memory_bytes = std::size_t{8} << 20);
  SpillText(const SpillText&) = delete;
  SpillText& operator=(const SpillText&) = delete;
  SpillText(SpillText&&) = delete;
  SpillText& operator=(SpillText&&) = delete;
  ~SpillText();

  /// Where to append; call spill_if_full() after appending.
  std::string& tail() { return tail_; }
  /// Moves the tail to the file once it holds `memory_bytes`.
  void spill_if_full() {
    if (tail_.size() >= memory_bytes_) {
      spill();
    }
  }
  /// Writes the whole text to `out`. Throws core::Error if the spilled part cannot be read back.
  void write_to(std::ostream& out) const;
  /// The whole text (for tests and small logs).
  std::string str() const;
  /// Bytes appended so far, and of those the ones on disk.
  std::size_t size() const { return spilled_ + tail_.size(); }
  std::size_t spilled() const { return spilled_; }

 private:
  void spill();

  std::string tail_;
  std::size_t memory_bytes_;
  std::FILE* file_ = nullptr;
  std::size_t spilled_ = 0;
};

}  // namespace epsim::core
