// SPDX-License-Identifier: Apache-2.0
#pragma once
// A reader of the safetensors format (an 8-byte little-endian header length, a JSON header naming each
// tensor's dtype, shape and byte range, then the raw little-endian data): the header is read once, each
// tensor only when asked for, so a file of many tensors is never held whole. Errors name the file and the
// tensor. Written here because Debian 12 packages no C++ reader; the format is that of Hugging Face's
// safetensors specification.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace epsim::engines {

class SafetensorsFile {
 public:
  struct Entry {
    std::string dtype;                ///< "I32", "I64", "F32", ...
    std::vector<std::int64_t> shape;  ///< empty = a scalar
    std::uint64_t begin = 0;          ///< byte range in the data section
    std::uint64_t end = 0;
    std::int64_t elements() const;
  };

  /// Opens `path` and reads its header; throws core::Error naming the file on a malformed one.
  explicit SafetensorsFile(std::filesystem::path path);

  const std::map<std::string, Entry>& tensors() const { return tensors_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  /// Tensor `name` as doubles (any integer, float or bool dtype), row-major; throws core::Error naming the
  /// file and the tensor when it is absent or its bytes are short.
  std::vector<double> read(const std::string& name);

 private:
  std::filesystem::path path_;
  std::ifstream in_;
  std::uint64_t data_offset_ = 0;
  std::map<std::string, Entry> tensors_;
  std::map<std::string, std::string> metadata_;
};

/// Writes `tensors` (name -> shape and int64 values) as a safetensors file with I64 or I32 data (tests and
/// samples; the writer is the reader's round-trip partner).
struct SafetensorsTensor {
  std::string name;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> values;
};
std::string safetensors_bytes(const std::vector<SafetensorsTensor>& tensors, const std::string& dtype = "I64");

}  // namespace epsim::engines
