// SPDX-License-Identifier: Apache-2.0
// A results directory replaced as a unit: the new contents replace the old whole (a file the new run
// does not write is gone), an exception leaves the target as it was and no staging directory behind, a
// staging directory of a dead process is removed, and a target that is a file is refused up front.
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/staged_directory.hpp"

namespace fs = std::filesystem;
using epsim::core::StagedDirectory;

namespace {
constexpr std::array<std::string_view, 2> k_owned{"summary.json", "steps.csv"};
}  // namespace

namespace {
fs::path fresh(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("epsim_staged_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}
int entries(const fs::path& dir) {
  int n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) {
    ++n;
  }
  return n;
}
}  // namespace

TEST_CASE("a staged results directory replaces the old one as a unit, or leaves it untouched") {
  const fs::path root = fresh("unit");
  const fs::path target = root / "results";
  {
    StagedDirectory s(target, k_owned);
    std::ofstream(s.path() / "summary.json") << "old";
    std::ofstream(s.path() / "steps.csv") << "old steps";
    REQUIRE_FALSE(fs::exists(target));  // nothing visible before commit
    s.commit();
  }
  REQUIRE(fs::exists(target / "steps.csv"));
  {
    StagedDirectory s(target, k_owned);
    std::ofstream(s.path() / "summary.json") << "new";
    s.commit();
  }
  REQUIRE(fs::exists(target / "summary.json"));
  REQUIRE_FALSE(fs::exists(target / "steps.csv"));  // the old run's log does not survive beside the new summary
  REQUIRE(entries(root) == 1);                      // no staging or old directory left beside it
  // An exception before commit: the old results stay whole, the staging directory goes.
  try {
    StagedDirectory s(target, k_owned);
    std::ofstream(s.path() / "summary.json") << "half";
    throw std::runtime_error("disk full");
  } catch (const std::runtime_error&) {
  }
  std::ifstream in(target / "summary.json");
  std::string text;
  in >> text;
  REQUIRE(text == "new");
  REQUIRE(entries(root) == 1);
  fs::remove_all(root);
}

TEST_CASE("a killed process's staging directory is removed, a file as target is refused") {
  const fs::path root = fresh("stale");
  const fs::path target = root / "r";
  // PIDs never reach 2^31 - 100 (Linux's pid_max is at most 2^22): that process does not exist.
  fs::create_directories(root / ".r.epsim-staging-2147483547" / "sub");
  fs::create_directories(root / ".other.epsim-staging-2147483547");  // another target's: not ours to touch
  {
    StagedDirectory s(target, k_owned);
    REQUIRE_FALSE(fs::exists(root / ".r.epsim-staging-2147483547"));
    REQUIRE(fs::exists(root / ".other.epsim-staging-2147483547"));
  }
  // A directory holding anything the writer does not own is refused, not wiped: "--out ." or
  // "--out ~/work" must never delete a user's files.
  fs::create_directories(root / "mine");
  std::ofstream(root / "mine" / "notes.txt") << "keep me";
  std::ofstream(root / "mine" / "summary.json") << "{}";
  REQUIRE_THROWS_WITH(StagedDirectory(root / "mine", k_owned), Catch::Contains("holds notes.txt"));
  REQUIRE(fs::exists(root / "mine" / "notes.txt"));
  std::ofstream(root / "file") << "x";
  REQUIRE_THROWS_WITH(StagedDirectory(root / "file", k_owned), Catch::Contains("exists and is not a directory"));
  fs::remove_all(root);
}

TEST_CASE("a shared directory: the writer's old outputs go, everything else is carried over as the same files") {
  const fs::path root = fresh("carry");
  const fs::path target = root / "figures";
  using Existing = StagedDirectory::Existing;
  const auto read = [](const fs::path& p) {
    std::ifstream in(p);
    std::string text;
    std::getline(in, text);
    return text;
  };
  {
    StagedDirectory s(target, {}, Existing::carry_foreign);
    std::ofstream(s.path() / "a.svg") << "old a";
    std::ofstream(s.path() / "b.svg") << "old b";
    s.commit();
  }
  // The user's own figure, folder and journal-like file beside epsim's.
  std::ofstream(target / "mine.svg") << "user";
  fs::create_directories(target / "drafts");
  std::ofstream(target / "drafts" / "x.csv") << "draft";
  std::ofstream(target / "journal.jsonl") << "line 1";
  struct stat before {};
  REQUIRE(::stat((target / "journal.jsonl").c_str(), &before) == 0);
  {
    StagedDirectory s(target, {}, Existing::carry_foreign);
    std::ofstream(s.path() / "a.svg") << "new a";
    s.commit();
  }
  CHECK(read(target / "a.svg") == "new a");
  CHECK_FALSE(fs::exists(target / "b.svg"));  // epsim's own, no longer written: gone, not left beside the new
  CHECK(read(target / "mine.svg") == "user");
  CHECK(read(target / "drafts" / "x.csv") == "draft");
  struct stat after {};
  REQUIRE(::stat((target / "journal.jsonl").c_str(), &after) == 0);
  CHECK(after.st_ino == before.st_ino);  // the same file, so an open writer or a lock on it carries on
  CHECK(entries(root) == 1);
  // Names epsim owns without a manifest (results of an older epsim) are replaced too.
  fs::remove(target / ".epsim-manifest");
  std::ofstream(target / "old-result.csv") << "stale";
  {
    constexpr std::array<std::string_view, 1> owned{"old-result.csv"};
    StagedDirectory s(target, owned, Existing::carry_foreign);
    std::ofstream(s.path() / "a.svg") << "newer a";
    s.commit();
  }
  CHECK_FALSE(fs::exists(target / "old-result.csv"));
  CHECK(read(target / "mine.svg") == "user");
  // A link as the folder is refused: the swap would replace whatever it points to.
  fs::create_symlink(target, root / "link");
  REQUIRE_THROWS_WITH(StagedDirectory(root / "link", {}, Existing::carry_foreign), Catch::Contains("symbolic link"));
  REQUIRE_THROWS_WITH(StagedDirectory(root / "link", k_owned), Catch::Contains("symbolic link"));
  fs::remove_all(root);
}
