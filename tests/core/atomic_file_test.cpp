#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/error.hpp"

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

TEST_CASE("a set of files is replaced whole or not at all") {
  const fs::path dir = fs::temp_directory_path() / "epsim_atomic_set_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto read = [](const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  using Files = std::vector<std::pair<std::string, std::string>>;
  epsim::core::write_files_atomically(dir, Files{{"runs.csv", "old runs\n"}, {"study.json", "old study\n"}});
  CHECK(read(dir / "runs.csv") == "old runs\n");
  CHECK(read(dir / "study.json") == "old study\n");

  // The third file cannot be written (its folder is missing): the first two, already complete in their
  // temporaries, must not replace the old ones, and no temporary may remain.
  CHECK_THROWS_WITH(epsim::core::write_files_atomically(
                        dir, Files{{"runs.csv", "new runs\n"}, {"study.json", "new study\n"}, {"missing/x.csv", "x"}}),
                    Catch::Contains("missing/x.csv.tmp-"));
  CHECK(read(dir / "runs.csv") == "old runs\n");
  CHECK(read(dir / "study.json") == "old study\n");
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 2);

  epsim::core::write_files_atomically(dir, Files{{"runs.csv", "new runs\n"}, {"study.json", "new study\n"}});
  CHECK(read(dir / "runs.csv") == "new runs\n");
  CHECK(read(dir / "study.json") == "new study\n");
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 2);
  fs::remove_all(dir);
}
