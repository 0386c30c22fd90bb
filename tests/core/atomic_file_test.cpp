#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/core/atomic_file.hpp"
#include "sim/core/error.hpp"

namespace fs = std::filesystem;

TEST_CASE("atomic writes replace the whole file and leave no temporary behind") {
  const fs::path dir = fs::temp_directory_path() / "epsim_atomic_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path f = dir / "out.txt";
  epsim::core::write_file_atomically(f, "first version, longer\n");
  epsim::core::write_file_atomically(f, "second\n");
  std::ifstream in(f);
  std::stringstream ss;
  ss << in.rdbuf();
  REQUIRE(ss.str() == "second\n");
  REQUIRE(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);
  fs::remove_all(dir);
}

TEST_CASE("writing into a missing directory fails with a message naming the file") {
  REQUIRE_THROWS_WITH(epsim::core::write_file_atomically("/nonexistent-dir-epsim/x.json", "x"),
                      Catch::Contains("/nonexistent-dir-epsim/x.json"));
}
