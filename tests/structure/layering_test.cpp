// The tree tells the truth: every source file includes only headers of its own layer or the layers
// below it (CMake's link rules alone miss header-only includes), and every folder README lists every
// header the folder holds.
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

// Each layer and the layers it may include (itself included). hardware sits below models: a model's
// layers are kernels that hardware prices (hardware/kernel_work.hpp). workloads and policies see neither.
const std::map<std::string, std::set<std::string>>& allowed() {
  static const std::map<std::string, std::set<std::string>> k{
      {"sim/core", {"sim/core"}},
      {"hardware", {"sim/core", "hardware"}},
      {"models", {"sim/core", "hardware", "models"}},
      {"calibration", {"sim/core", "hardware", "models", "calibration"}},
      {"workloads", {"sim/core", "workloads"}},
      {"policies", {"sim/core", "policies"}},
      {"engines", {"sim/core", "hardware", "models", "workloads", "policies", "engines"}},
      {"sim/serving", {"sim/core", "hardware", "models", "workloads", "policies", "sim/serving"}},
      {"report", {"sim/core", "report"}},
      {"experiments",
       {"sim/core", "hardware", "models", "calibration", "workloads", "policies", "engines", "sim/serving", "report",
        "experiments"}},
  };
  return k;
}

// The layer a project include names ("hardware/roofline.hpp" -> "hardware"), or "" for another header.
std::string layer_of(const std::string& include) {
  for (const auto& [layer, below] : allowed()) {
    if (include.rfind(layer + "/", 0) == 0) {
      return layer;
    }
  }
  return "";
}

std::vector<fs::path> sources_of(const std::string& layer) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(k_root / layer)) {
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

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("no file includes a header of a layer above its own") {
  std::vector<std::string> violations;
  std::size_t files = 0;
  for (const auto& [layer, may] : allowed()) {
    for (const fs::path& file : sources_of(layer)) {
      ++files;
      std::istringstream lines(read(file));
      std::string line;
      int n = 0;
      while (std::getline(lines, line)) {
        ++n;
        const std::string included = quoted_include(line);
        const std::string target = layer_of(included);
        if (!target.empty() && may.count(target) == 0) {
          std::ostringstream v;
          v << fs::relative(file, k_root).string() << ":" << n << " includes " << included;
          violations.push_back(v.str());
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
  // The rule itself, on made-up includes: a policy reaching into the engine is refused, sim/core
  // may include nothing above it, experiments may include anything.
  REQUIRE(layer_of("sim/serving/simulator.hpp") == "sim/serving");
  REQUIRE(allowed().at("policies").count(layer_of("sim/serving/simulator.hpp")) == 0);
  REQUIRE(allowed().at("sim/core").count(layer_of("hardware/roofline.hpp")) == 0);
  REQUIRE(allowed().at("workloads").count(layer_of("models/model_spec.hpp")) == 0);
  REQUIRE(allowed().at("experiments").count(layer_of("sim/serving/simulator.hpp")) == 1);
  REQUIRE(layer_of("toml++/toml.h").empty());
  REQUIRE(quoted_include("#include  \"sim/serving/batch.hpp\"  // why") == "sim/serving/batch.hpp");
  REQUIRE(quoted_include("#include <vector>").empty());
}

TEST_CASE("every folder README lists every header of its folder") {
  std::vector<std::string> missing;
  for (const auto& [layer, may] : allowed()) {
    const std::string readme = read(k_root / layer / "README.md");
    REQUIRE_FALSE(readme.empty());
    for (const fs::path& file : sources_of(layer)) {
      std::string quoted = "`";
      quoted += file.filename().string();
      quoted += '`';
      if (file.extension() == ".hpp" && readme.find(quoted) == std::string::npos) {
        missing.push_back((fs::path(layer) / file.filename()).string());
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
