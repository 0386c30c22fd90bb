// SPDX-License-Identifier: Apache-2.0
// The safetensors reader against files whose bytes are written out by hand here, and its refusals.
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "engines/safetensors.hpp"

namespace fs = std::filesystem;
using epsim::engines::SafetensorsFile;

namespace {

fs::path write_bytes(const std::string& name, const std::string& bytes) {
  const fs::path p = fs::temp_directory_path() / ("epsim_st_" + name);
  std::ofstream(p, std::ios::binary) << bytes;
  return p;
}

std::string le64(std::uint64_t v) {
  return {reinterpret_cast<const char*>(&v), 8};
}

}  // namespace

TEST_CASE("safetensors: a hand-assembled file reads back every dtype's values", "[engines]") {
  // Header and data written byte by byte: an I32 [2,2], an F16 [3] and a BF16 [1].
  std::string data;
  for (const std::int32_t v : {1, 2, 30, 400}) {
    data.append(reinterpret_cast<const char*>(&v), 4);
  }
  // F16: 1.0 = 0x3C00, -2.0 = 0xC000, 0.5 = 0x3800; BF16 3.0 = 0x4040.
  for (const std::uint16_t v :
       {std::uint16_t{0x3C00}, std::uint16_t{0xC000}, std::uint16_t{0x3800}, std::uint16_t{0x4040}}) {
    data.append(reinterpret_cast<const char*>(&v), 2);
  }
  const std::string header =
      R"({"__metadata__":{"format":"pt"},"a":{"dtype":"I32","shape":[2,2],"data_offsets":[0,16]},)"
      R"("h":{"dtype":"F16","shape":[3],"data_offsets":[16,22]},"b":{"dtype":"BF16","shape":[1],"data_offsets":[22,24]}})";
  const fs::path p = write_bytes("dtypes.safetensors", le64(header.size()) + header + data);
  SafetensorsFile f(p);
  CHECK(f.metadata().at("format") == "pt");
  CHECK(f.tensors().size() == 3);
  CHECK(f.tensors().at("a").shape == std::vector<std::int64_t>{2, 2});
  CHECK(f.read("a") == std::vector<double>{1, 2, 30, 400});
  CHECK(f.read("h") == std::vector<double>{1.0, -2.0, 0.5});
  CHECK(f.read("b") == std::vector<double>{3.0});
  CHECK_THROWS_WITH(f.read("zz"), Catch::Contains("no tensor \"zz\""));
  fs::remove(p);
}

TEST_CASE("safetensors: the writer's bytes read back", "[engines]") {
  const std::string bytes =
      epsim::engines::safetensors_bytes({{"0_3", {4}, {5, 0, 7, 1}}, {"1_3", {4}, {2, 2, 2, 7}}}, "I32");
  const fs::path p = write_bytes("roundtrip.safetensors", bytes);
  SafetensorsFile f(p);
  CHECK(f.tensors().at("0_3").dtype == "I32");
  CHECK(f.read("0_3") == std::vector<double>{5, 0, 7, 1});
  CHECK(f.read("1_3") == std::vector<double>{2, 2, 2, 7});
  fs::remove(p);
}

TEST_CASE("safetensors: malformed files are refused with the file and the tensor named", "[engines]") {
  const auto refuses = [](const std::string& name, const std::string& bytes, const std::string& what) {
    const fs::path p = write_bytes(name, bytes);
    CHECK_THROWS_WITH(SafetensorsFile(p), Catch::Contains(p.string()) && Catch::Contains(what));
    fs::remove(p);
  };
  refuses("short", "abc", "shorter than its 8-byte header length");
  refuses("huge_header", le64(1000) + "{}", "header length 1000");
  refuses("not_json", le64(3) + "{x}", "header is not JSON");
  const std::string bad_range = R"({"t":{"dtype":"I64","shape":[2],"data_offsets":[0,12]}})";
  refuses("bad_range", le64(bad_range.size()) + bad_range + std::string(16, '\0'),
          "tensor \"t\": data_offsets [0, 12]");
  const std::string past_end = R"({"t":{"dtype":"I64","shape":[2],"data_offsets":[0,16]}})";
  refuses("past_end", le64(past_end.size()) + past_end + std::string(8, '\0'), "within the 8 data bytes");
  const std::string bad_dtype = R"({"t":{"dtype":"Q7","shape":[1],"data_offsets":[0,1]}})";
  refuses("bad_dtype", le64(bad_dtype.size()) + bad_dtype + "x", "unknown dtype \"Q7\"");
}
