// SPDX-License-Identifier: Apache-2.0
#include "engines/safetensors.hpp"

#include <fmt/format.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/json_depth.hpp"
#include "core/message_text.hpp"

namespace epsim::engines {

// The longest JSON text of a non-string metadata value kept (safetensors metadata holds strings).
constexpr std::size_t k_max_metadata_json_bytes = 4096;
namespace {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian");

// Bytes per element of each dtype the specification names.
std::uint64_t dtype_bytes(const std::string& dtype) {
  static const std::map<std::string, std::uint64_t> k{
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E4M3", 1}, {"F8_E5M2", 1}, {"I16", 2}, {"U16", 2}, {"F16", 2},
      {"BF16", 2}, {"I32", 4}, {"U32", 4}, {"F32", 4},     {"I64", 8},     {"U64", 8}, {"F64", 8}};
  const auto it = k.find(dtype);
  return it == k.end() ? 0 : it->second;
}

template <typename T>
double load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return static_cast<double>(v);
}

// One element of `dtype` at `p` as a double (F16/BF16 widened by hand: C++20 has no half type).
double element(const std::string& dtype, const char* p) {
  if (dtype == "I64") {
    return load<std::int64_t>(p);
  }
  if (dtype == "I32") {
    return load<std::int32_t>(p);
  }
  if (dtype == "F32") {
    return load<float>(p);
  }
  if (dtype == "F64") {
    return load<double>(p);
  }
  if (dtype == "U64") {
    return load<std::uint64_t>(p);
  }
  if (dtype == "U32") {
    return load<std::uint32_t>(p);
  }
  if (dtype == "I16") {
    return load<std::int16_t>(p);
  }
  if (dtype == "U16") {
    return load<std::uint16_t>(p);
  }
  if (dtype == "I8") {
    return load<std::int8_t>(p);
  }
  if (dtype == "U8" || dtype == "BOOL") {
    return load<std::uint8_t>(p);
  }
  std::uint16_t h;
  std::memcpy(&h, p, 2);
  if (dtype == "BF16") {
    const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  // F16: sign, 5-bit exponent, 10-bit fraction.
  const int sign = (h >> 15) != 0 ? -1 : 1;
  const int exponent = (h >> 10) & 0x1f;
  const int fraction = h & 0x3ff;
  if (exponent == 0) {
    return sign * std::ldexp(fraction, -24);
  }
  if (exponent == 31) {
    return fraction == 0 ? sign * HUGE_VAL : NAN;
  }
  return sign * std::ldexp(fraction + 1024, exponent - 25);
}

}  // namespace

std::int64_t SafetensorsFile::Entry::elements() const {
  std::int64_t n = 1;
  for (const std::int64_t d : shape) {
    n *= d;
  }
  return n;
}

SafetensorsFile::SafetensorsFile(std::filesystem::path path) : path_(std::move(path)) {
  const std::string where = path_.string();
  in_.open(path_, std::ios::binary);
  if (!in_) {
    throw core::Error(where + ": cannot read");
  }
  std::error_code ec;
  const std::uint64_t size = std::filesystem::file_size(path_, ec);
  std::array<char, 8> len_bytes{};
  if (ec || !in_.read(len_bytes.data(), 8)) {
    throw core::Error(where + ": not a safetensors file (shorter than its 8-byte header length)");
  }
  std::uint64_t header_len = 0;
  std::memcpy(&header_len, len_bytes.data(), 8);
  if (header_len > size - 8 || header_len > (std::uint64_t{100} << 20)) {
    throw core::Error(
        fmt::format("{}: not a safetensors file (header length {} in a file of {} bytes)", where, header_len, size));
  }
  std::string header(header_len, '\0');
  in_.read(header.data(), static_cast<std::streamsize>(header_len));
  data_offset_ = 8 + header_len;
  const std::uint64_t data_size = size - data_offset_;
  core::check_json_depth(header, where + ": safetensors header");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(header);
  } catch (const nlohmann::json::exception& e) {
    throw core::Error(where + ": safetensors header is not JSON: " + e.what());
  }
  if (!j.is_object()) {
    throw core::Error(where + ": safetensors header is not a JSON object");
  }
  for (const auto& [name, v] : j.items()) {
    if (name == "__metadata__") {
      if (v.is_object()) {
        for (const auto& [k, m] : v.items()) {
          // A value that is not a string is kept as its JSON text, cut to a bound (it is echoed).
          metadata_[k] = m.is_string() ? m.get<std::string>() : core::excerpt(m.dump(), k_max_metadata_json_bytes);
        }
      }
      continue;
    }
    const std::string tensor = name;  // clang 15 cannot capture a structured binding
    const auto bad = [&](const std::string& what) {
      return core::Error(fmt::format("{}: tensor \"{}\": {}", where, tensor, what));
    };
    if (!v.is_object() || !v.contains("dtype") || !v["dtype"].is_string() || !v.contains("shape") ||
        !v["shape"].is_array() || !v.contains("data_offsets") || !v["data_offsets"].is_array() ||
        v["data_offsets"].size() != 2) {
      throw bad("expected {\"dtype\": ..., \"shape\": [...], \"data_offsets\": [begin, end]}");
    }
    Entry e;
    e.dtype = v["dtype"].get<std::string>();
    const std::uint64_t bytes = dtype_bytes(e.dtype);
    if (bytes == 0) {
      throw bad("unknown dtype \"" + e.dtype + "\"");
    }
    for (const auto& d : v["shape"]) {
      if (!d.is_number_unsigned()) {
        throw bad("shape entries must be non-negative integers");
      }
      e.shape.push_back(d.get<std::int64_t>());
    }
    if (!v["data_offsets"][0].is_number_unsigned() || !v["data_offsets"][1].is_number_unsigned()) {
      throw bad("data_offsets must be non-negative integers");
    }
    e.begin = v["data_offsets"][0].get<std::uint64_t>();
    e.end = v["data_offsets"][1].get<std::uint64_t>();
    if (e.begin > e.end || e.end > data_size || e.end - e.begin != static_cast<std::uint64_t>(e.elements()) * bytes) {
      throw bad(fmt::format("data_offsets [{}, {}] do not hold {} {} elements within the {} data bytes", e.begin, e.end,
                            e.elements(), e.dtype, data_size));
    }
    tensors_.emplace(name, std::move(e));
  }
}

std::vector<double> SafetensorsFile::read(const std::string& name) {
  const auto it = tensors_.find(name);
  if (it == tensors_.end()) {
    throw core::Error(fmt::format("{}: no tensor \"{}\"", path_.string(), name));
  }
  const Entry& e = it->second;
  std::string bytes(e.end - e.begin, '\0');
  in_.clear();
  in_.seekg(static_cast<std::streamoff>(data_offset_ + e.begin));
  if (!in_.read(bytes.data(), static_cast<std::streamsize>(bytes.size()))) {
    throw core::Error(fmt::format("{}: tensor \"{}\": its bytes are cut short", path_.string(), name));
  }
  const std::uint64_t width = dtype_bytes(e.dtype);
  std::vector<double> out(static_cast<std::size_t>(e.elements()));
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = element(e.dtype, bytes.data() + i * width);
  }
  return out;
}

std::string safetensors_bytes(const std::vector<SafetensorsTensor>& tensors, const std::string& dtype) {
  const std::uint64_t width = dtype == "I32" ? 4 : 8;
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  std::string data;
  for (const auto& t : tensors) {
    const std::uint64_t begin = data.size();
    for (const std::int64_t v : t.values) {
      if (width == 4) {
        const auto x = static_cast<std::int32_t>(v);
        data.append(reinterpret_cast<const char*>(&x), 4);
      } else {
        data.append(reinterpret_cast<const char*>(&v), 8);
      }
    }
    header[t.name] = {
        {"dtype", width == 4 ? "I32" : "I64"}, {"shape", t.shape}, {"data_offsets", {begin, data.size()}}};
  }
  const std::string h = header.dump();
  const std::uint64_t len = h.size();
  std::string out(reinterpret_cast<const char*>(&len), 8);
  return out + h + data;
}

}  // namespace epsim::engines
