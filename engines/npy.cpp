// SPDX-License-Identifier: Apache-2.0
#include "engines/npy.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cstring>

#include "core/error.hpp"

namespace epsim::engines {
namespace {

constexpr std::string_view k_magic = "\x93NUMPY";
constexpr std::string_view k_alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// The value of 'key': in the header dict ("{'descr': '<i4', 'fortran_order': False, 'shape': (4, 2), }").
std::string dict_value(const std::string& header, const std::string& key, const std::string& where) {
  const std::string quoted = "'" + key + "':";
  const auto at = header.find(quoted);
  if (at == std::string::npos) {
    throw core::Error(fmt::format("{}: .npy header has no '{}': {}", where, key, header));
  }
  std::size_t i = header.find_first_not_of(' ', at + quoted.size());
  if (i == std::string::npos) {
    throw core::Error(fmt::format("{}: .npy header ends after '{}'", where, key));
  }
  if (header[i] == '\'') {
    const auto end = header.find('\'', i + 1);
    return header.substr(i + 1, end - i - 1);
  }
  if (header[i] == '(') {
    const auto end = header.find(')', i);
    return header.substr(i + 1, end - i - 1);
  }
  const auto end = header.find_first_of(",}", i);
  return header.substr(i, end - i);
}

std::uint64_t little(std::string_view b, std::size_t at, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) {
    v |= static_cast<std::uint64_t>(static_cast<unsigned char>(b[at + i])) << (8 * i);
  }
  return v;
}

}  // namespace

NpyArray parse_npy(std::string_view bytes, const std::string& where) {
  if (bytes.size() < 10 || bytes.substr(0, 6) != k_magic) {
    throw core::Error(where + ": not a .npy array (no \\x93NUMPY magic)");
  }
  const int major = static_cast<unsigned char>(bytes[6]);
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  const std::size_t start = 8 + len_bytes;
  if (bytes.size() < start) {
    throw core::Error(where + ": .npy header cut short");
  }
  const std::uint64_t header_len = little(bytes, 8, len_bytes);
  if (bytes.size() < start + header_len) {
    throw core::Error(where + ": .npy header cut short");
  }
  const std::string header(bytes.substr(start, header_len));
  const std::string descr = dict_value(header, "descr", where);
  if (dict_value(header, "fortran_order", where) != "False") {
    throw core::Error(where + ": .npy array in Fortran order; expected C order");
  }
  if (descr.size() < 3 || (descr[1] != 'i' && descr[1] != 'u') ||
      (descr[0] != '<' && descr[0] != '>' && descr[0] != '|')) {
    throw core::Error(
        fmt::format("{}: .npy dtype '{}'; expected an integer array ('<i4', '<i2', '|u1', ...)", where, descr));
  }
  const bool is_signed = descr[1] == 'i';
  const bool big = descr[0] == '>';
  const std::string_view width_text = std::string_view(descr).substr(2);
  std::size_t width = 0;
  if (std::from_chars(width_text.data(), width_text.data() + width_text.size(), width).ptr !=
          width_text.data() + width_text.size() ||
      (width != 1 && width != 2 && width != 4 && width != 8)) {
    throw core::Error(fmt::format("{}: .npy dtype '{}' has an unsupported width", where, descr));
  }
  NpyArray a;
  // Elements the data can hold: each dimension is checked against it before it multiplies the count, so
  // a shape like (2^40, 2^40) is refused instead of overflowing.
  const std::size_t data = start + header_len;
  const std::size_t capacity = (bytes.size() - data) / width;
  std::size_t n = 1;
  const std::string shape = dict_value(header, "shape", where);
  std::size_t i = 0;
  while (i < shape.size()) {
    const std::size_t j = shape.find(',', i);
    std::string_view part = std::string_view(shape).substr(i, j == std::string::npos ? std::string::npos : j - i);
    while (!part.empty() && part.front() == ' ') {
      part.remove_prefix(1);
    }
    while (!part.empty() && part.back() == ' ') {
      part.remove_suffix(1);
    }
    if (!part.empty()) {
      std::int64_t dim = 0;
      if (std::from_chars(part.data(), part.data() + part.size(), dim).ptr != part.data() + part.size() || dim < 0) {
        throw core::Error(fmt::format("{}: .npy shape ({}) is not a tuple of integers >= 0", where, shape));
      }
      a.shape.push_back(dim);
      if (dim != 0 && n > capacity / static_cast<std::size_t>(dim)) {
        throw core::Error(fmt::format("{}: .npy data holds {} bytes, less than the shape ({}) needs", where,
                                      bytes.size() - data, shape));
      }
      n *= static_cast<std::size_t>(dim);
    }
    if (j == std::string::npos) {
      break;
    }
    i = j + 1;
  }
  if (n > capacity) {  // a 0-d array holds one element
    throw core::Error(fmt::format("{}: .npy data holds {} bytes, the shape ({}) needs {}", where, bytes.size() - data,
                                  shape, n * width));
  }
  a.values.resize(n);
  for (std::size_t k = 0; k < a.values.size(); ++k) {
    std::uint64_t raw = 0;
    for (std::size_t b = 0; b < width; ++b) {
      const auto byte = static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[data + k * width + b]));
      raw |= byte << (8 * (big ? width - 1 - b : b));
    }
    if (is_signed && width < 8 && (raw >> (8 * width - 1)) != 0) {
      raw |= ~std::uint64_t{0} << (8 * width);  // sign-extend
    }
    a.values[k] = static_cast<std::int64_t>(raw);
  }
  return a;
}

std::string decode_base64(std::string_view text, const std::string& where) {
  // Each byte's 6-bit value; 64 = skipped (padding, line breaks), 65 = not base64.
  static const std::array<std::uint8_t, 256> k_value = [] {
    std::array<std::uint8_t, 256> v{};
    v.fill(65);
    for (std::size_t i = 0; i < k_alphabet.size(); ++i) {
      v[static_cast<unsigned char>(k_alphabet[i])] = static_cast<std::uint8_t>(i);
    }
    for (const char c : {'=', '\n', '\r', ' '}) {
      v[static_cast<unsigned char>(c)] = 64;
    }
    return v;
  }();
  std::string out;
  out.reserve(text.size() / 4 * 3);
  std::uint32_t acc = 0;
  int bits = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const std::uint8_t v = k_value[static_cast<unsigned char>(text[i])];
    if (v == 64) {
      continue;
    }
    if (v == 65) {
      throw core::Error(fmt::format("{}: base64 character {} is '{}', outside the alphabet", where, i, text[i]));
    }
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return out;
}

std::string npy_bytes(const std::vector<std::int64_t>& shape, const std::vector<std::int32_t>& values) {
  std::string dims;
  for (const std::int64_t d : shape) {
    dims += fmt::format("{}, ", d);
  }
  if (shape.size() > 1) {
    dims.erase(dims.size() - 2);
  } else if (!shape.empty()) {
    dims.erase(dims.size() - 1);
  }
  std::string header = fmt::format("{{'descr': '<i4', 'fortran_order': False, 'shape': ({}), }}", dims);
  // Pad with spaces and a newline so the data starts on a 64-byte boundary, as numpy does.
  const std::size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  std::string out(k_magic);
  out.push_back('\x01');
  out.push_back('\x00');
  out.push_back(static_cast<char>(header.size() & 0xff));
  out.push_back(static_cast<char>(header.size() >> 8));
  out += header;
  for (const std::int32_t v : values) {
    out.append(reinterpret_cast<const char*>(&v), 4);
  }
  return out;
}

std::string encode_base64(std::string_view bytes) {
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const std::uint32_t v = (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i])) << 16) |
                            (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8) |
                            static_cast<unsigned char>(bytes[i + 2]);
    for (int s = 18; s >= 0; s -= 6) {
      out.push_back(k_alphabet[(v >> s) & 63]);
    }
  }
  if (i < bytes.size()) {
    std::uint32_t v = static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i])) << 16;
    if (i + 1 < bytes.size()) {
      v |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8;
    }
    out.push_back(k_alphabet[(v >> 18) & 63]);
    out.push_back(k_alphabet[(v >> 12) & 63]);
    out.push_back(i + 1 < bytes.size() ? k_alphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

}  // namespace epsim::engines
