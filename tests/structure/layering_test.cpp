// SPDX-License-Identifier: Apache-2.0
// The tree tells the truth: every source file includes only headers of its own layer or the layers it
// may use (layers.txt, the one list CMake links from; CMake's link rules alone miss header-only
// includes), no folder mixes two layers, docs/architecture.md's layer table says what layers.txt says,
// and every folder README lists every header the folder holds.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const fs::path k_root = fs::path(EPSIM_TEST_DATA_DIR) / ".." / "..";

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Layer {
  std::string name;
  std::string folder;
  std::set<std::string> uses;  // the layers it may include, itself included
};

// layers.txt: "name folder uses..." per line, bottom up; '#' starts a comment line.
const std::vector<Layer>& layers() {
  static const std::vector<Layer> k = [] {
    std::vector<Layer> out;
    std::istringstream lines(read(k_root / "layers.txt"));
    std::string line;
    while (std::getline(lines, line)) {
      if (line.empty() || line[0] == '#') {
        continue;
      }
      std::istringstream words(line);
      Layer l;
      words >> l.name >> l.folder;
      l.uses.insert(l.name);
      for (std::string w; words >> w;) {
        l.uses.insert(w);
      }
      out.push_back(l);
    }
    return out;
  }();
  return k;
}

const Layer& layer_named(const std::string& name) {
  for (const Layer& l : layers()) {
    if (l.name == name) {
      return l;
    }
  }
  FAIL("no layer " << name);
  return layers().front();
}

// The layer a project include names ("hardware/roofline.hpp" -> "hardware"): the layer whose folder is
// the longest prefix of the path; "" for another header.
std::string layer_of(const std::string& include) {
  std::string best;
  std::size_t best_len = 0;
  for (const Layer& l : layers()) {
    if (include.rfind(l.folder + "/", 0) == 0 && l.folder.size() > best_len) {
      best = l.name;
      best_len = l.folder.size();
    }
  }
  return best;
}

bool is_layer_folder(const fs::path& dir) {
  const std::string rel = fs::relative(dir, k_root).generic_string();
  return std::any_of(layers().begin(), layers().end(), [&](const Layer& l) { return l.folder == rel; });
}

// The folders of a layer: its own and its sub-folders that are not another layer's.
std::vector<fs::path> folders_of(const Layer& l) {
  std::vector<fs::path> out{k_root / l.folder};
  for (auto it = fs::recursive_directory_iterator(k_root / l.folder); it != fs::recursive_directory_iterator(); ++it) {
    if (it->is_directory()) {
      if (is_layer_folder(it->path())) {
        it.disable_recursion_pending();
      } else {
        out.push_back(it->path());
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<fs::path> sources_in(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const auto ext = e.path().extension();
    if (e.is_regular_file() && (ext == ".hpp" || ext == ".cpp")) {
      out.push_back(e.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The header a line includes with quotes ("#include \"a/b.hpp\"" -> "a/b.hpp"), or "".
std::string quoted_include(const std::string& line) {
  const auto at = line.find("#include");
  if (at == std::string::npos) {
    return "";
  }
  const auto open = line.find_first_not_of(" \t", at + 8);
  if (open == std::string::npos || line[open] != '"') {
    return "";
  }
  const auto close = line.find('"', open + 1);
  return close == std::string::npos ? "" : line.substr(open + 1, close - open - 1);
}

}  // namespace

TEST_CASE("no file includes a header of a layer its layer may not use") {
  std::vector<std::string> violations;
  std::size_t files = 0;
  for (const Layer& l : layers()) {
    for (const fs::path& dir : folders_of(l)) {
      for (const fs::path& file : sources_in(dir)) {
        ++files;
        std::istringstream lines(read(file));
        std::string line;
        int n = 0;
        while (std::getline(lines, line)) {
          ++n;
          const std::string included = quoted_include(line);
          const std::string target = layer_of(included);
          if (!target.empty() && l.uses.count(target) == 0) {
            std::ostringstream v;
            v << fs::relative(file, k_root).string() << ":" << n << " includes " << included;
            violations.push_back(v.str());
          }
        }
      }
    }
  }
  std::ostringstream listed;
  for (const auto& v : violations) {
    listed << "  " << v << "\n";
  }
  INFO("violations:\n" << listed.str());
  REQUIRE(files > 100);
  REQUIRE(violations.empty());
}

TEST_CASE("the layering check catches an upward include") {
  // The rule itself, on made-up includes: a policy reaching into the engine is refused, core may
  // include nothing above it, the CLI may include anything, the assembly no study.
  REQUIRE(layer_of("sim/simulator.hpp") == "sim");
  REQUIRE(layer_of("experiments/studies/slo_search.hpp") == "studies");
  REQUIRE(layer_named("policies").uses.count(layer_of("sim/simulator.hpp")) == 0);
  REQUIRE(layer_named("core").uses.count(layer_of("hardware/roofline.hpp")) == 0);
  REQUIRE(layer_named("workloads").uses.count(layer_of("models/model_spec.hpp")) == 0);
  REQUIRE(layer_named("cli").uses.count(layer_of("sim/simulator.hpp")) == 1);
  REQUIRE(layer_named("assembly").uses.count(layer_of("experiments/studies/study_plan.hpp")) == 0);
  REQUIRE(layer_of("toml++/toml.h").empty());
  REQUIRE(quoted_include("#include  \"sim/batch.hpp\"  // why") == "sim/batch.hpp");
  REQUIRE(quoted_include("#include <vector>").empty());
}

TEST_CASE("layers use only layers below them, and no folder holds two layers' code") {
  std::set<std::string> below;
  for (const Layer& l : layers()) {
    for (const std::string& u : l.uses) {
      INFO(l.name << " uses " << u);
      CHECK((u == l.name || below.count(u) == 1));
    }
    below.insert(l.name);
    // A layer's folder is no other layer's, and holds code (the bottom layer left sim/ for core/).
    CHECK(fs::is_directory(k_root / l.folder));
    CHECK_FALSE(sources_in(k_root / l.folder).empty());
  }
  // No source file sits in a folder above two layers (experiments/ holds layers, not code).
  CHECK(sources_in(k_root / "experiments").empty());
  CHECK_FALSE(fs::exists(k_root / "sim" / "core"));
  CHECK_FALSE(fs::exists(k_root / "sim" / "serving"));
}

TEST_CASE("docs/architecture.md's layer table is layers.txt") {
  // Each layer is one row: | `folder/` | may use | ..., the uses in layers.txt's order.
  const std::string doc = read(k_root / "docs" / "architecture.md");
  for (const Layer& l : layers()) {
    std::string uses;
    for (const Layer& other : layers()) {
      if (other.name != l.name && l.uses.count(other.name) == 1) {
        uses += (uses.empty() ? "" : ", ") + other.name;
      }
    }
    const std::string row = "| " + l.name + " | `" + l.folder + "/` | " + (uses.empty() ? "-" : uses) + " |";
    INFO("expected the row: " << row);
    CHECK(doc.find(row) != std::string::npos);
  }
}

TEST_CASE("every folder README lists every header of its folder") {
  std::vector<std::string> missing;
  for (const Layer& l : layers()) {
    for (const fs::path& dir : folders_of(l)) {
      const std::vector<fs::path> sources = sources_in(dir);
      if (sources.empty()) {
        continue;
      }
      const std::string readme = read(dir / "README.md");
      INFO(fs::relative(dir, k_root).string() << "/README.md");
      REQUIRE_FALSE(readme.empty());
      for (const fs::path& file : sources) {
        std::string quoted = "`";  // built in steps: GCC 12 warns (-Wrestrict) on "`" + string + "`"
        quoted += file.filename().string();
        quoted += '`';
        if (file.extension() == ".hpp" && readme.find(quoted) == std::string::npos) {
          missing.push_back(fs::relative(file, k_root).string());
        }
      }
    }
  }
  std::ostringstream listed;
  for (const auto& v : missing) {
    listed << "  " << v << "\n";
  }
  INFO("headers no README lists (as `name.hpp`):\n" << listed.str());
  REQUIRE(missing.empty());
}
