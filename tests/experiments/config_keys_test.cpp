// SPDX-License-Identifier: Apache-2.0
// The configuration reference is generated: docs/configuration.md's key tables are what
// `epsim list keys --markdown` prints (scripts/gen-config-doc.sh rewrites them), so a key added,
// removed or redescribed in a section reader fails here until the docs are regenerated.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "experiments/cli/cli.hpp"
#include "experiments/cli/config_keys.hpp"

using Catch::Contains;

namespace {

struct Result {
  int code;
  std::string out;
  std::string err;
};

Result cli(const std::vector<std::string>& args) {
  std::ostringstream out;
  std::ostringstream err;
  const int code = epsim::experiments::run_cli(args, out, err);
  return {code, out.str(), err.str()};
}

// One generated block: the `epsim` arguments its BEGIN marker names, what it holds, and the section
// it documents less the subsections it leaves out.
struct Block {
  std::vector<std::string> args;
  std::string text;
  std::string section;
  std::vector<std::string> except;
};

std::vector<Block> generated_blocks() {
  std::ifstream in(std::string(EPSIM_SOURCE_DIR) + "/docs/configuration.md");
  REQUIRE(in);
  const std::string begin = "<!-- BEGIN generated: epsim ";
  const std::string end = "<!-- END generated -->";
  std::vector<Block> out;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(begin, 0) == 0) {
      REQUIRE_FALSE(inside);
      REQUIRE(line.size() > begin.size() + 4);
      REQUIRE(line.substr(line.size() - 4) == " -->");
      Block b;
      std::istringstream words(line.substr(begin.size(), line.size() - begin.size() - 4));
      for (std::string w; words >> w;) {
        b.args.push_back(w);
      }
      REQUIRE(b.args.size() >= 3);
      REQUIRE(b.args[0] == "list");
      REQUIRE(b.args[1] == "keys");
      for (std::size_t i = 2; i < b.args.size(); ++i) {
        if (b.args[i] == "--except" && i + 1 < b.args.size()) {
          b.except.push_back(b.args[++i]);
        } else if (b.args[i] != "--markdown") {
          b.section = b.args[i];
        }
      }
      out.push_back(std::move(b));
      inside = true;
    } else if (line == end) {
      REQUIRE(inside);
      inside = false;
    } else if (inside) {
      out.back().text += line + "\n";
    }
  }
  REQUIRE_FALSE(inside);
  return out;
}

bool inside(const std::string& key, const std::string& section) {
  return key.rfind(section + ".", 0) == 0;
}

}  // namespace

TEST_CASE("docs/configuration.md's generated tables match the code") {
  const std::vector<Block> blocks = generated_blocks();
  REQUIRE(blocks.size() >= 15);  // one per section of the reference
  for (const Block& b : blocks) {
    INFO("block of `epsim " << b.section << "`: rerun scripts/gen-config-doc.sh");
    const Result r = cli(b.args);
    REQUIRE(r.code == 0);
    CHECK(b.text == r.out);
  }
}

TEST_CASE("docs/configuration.md's generated tables hold every key once") {
  const std::vector<Block> blocks = generated_blocks();
  for (const epsim::core::ParamDoc& d : epsim::experiments::document_config()) {
    int tables = 0;
    for (const Block& b : blocks) {
      bool left_out = false;
      for (const std::string& e : b.except) {
        left_out = left_out || inside(d.key, e);
      }
      tables += inside(d.key, b.section) && !left_out ? 1 : 0;
    }
    INFO(d.key);
    CHECK(tables == 1);
  }
}

TEST_CASE("list keys prints a section's keys with type, range, default and description") {
  const Result r = cli({"list", "keys", "scheduler"});
  REQUIRE(r.code == 0);
  // Hand-checked against parse_scheduler (sim/serving_config.cpp): 1 << 24 reads as 2^24.
  CHECK_THAT(r.out, Contains("scheduler.max_batch_tokens (integer in [1, 2^24]; default 8192): token budget of one "
                             "step per DP rank (decodes + prefill chunks)\n"));
  CHECK_THAT(r.out, Contains("scheduler.kv_watermark (number in [0, 0.5]; default 0.01): "));
  CHECK_THAT(r.out, Contains("scheduler.gpu_memory_utilization (number in (0, 1]; default 0.9): "));
  CHECK_THAT(r.out, Contains("scheduler.batching (one of: continuous, static; default \"continuous\"): "));
  CHECK_THAT(r.out, Contains("scheduler.step_overhead_us (number >= 0; default 0): "));
  // Only the section's keys, one a line.
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    CHECK(line.rfind("scheduler.", 0) == 0);
  }

  // A nested section, and registered policies' options under the table that holds them.
  const Result rebalance = cli({"list", "keys", "policy.rebalance"});
  REQUIRE(rebalance.code == 0);
  CHECK_THAT(rebalance.out, Contains("policy.rebalance.trigger (string; default \"none\"): "));
  CHECK_THAT(rebalance.out, Contains("policy.rebalance.horizon_steps (integer in [1, 2^24]; default 50): (trigger "
                                     "director) "));

  // A required key says so instead of a default.
  CHECK_THAT(cli({"list", "keys", "model"}).out, Contains("model.hidden_size (integer"));
  CHECK_THAT(cli({"list", "keys", "model"}).out, Contains("; required): "));
}

TEST_CASE("list keys refuses an unknown section, naming the valid ones") {
  const Result r = cli({"list", "keys", "schedular"});
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Contains("unknown section \"schedular\"; valid sections are: run, model, "));
  CHECK_THAT(r.err, Contains(", scheduler, "));
  CHECK_THAT(r.err, Contains(", policy.rebalance, "));
  const Result except = cli({"list", "keys", "cluster", "--except", "cluster.nothing"});
  CHECK(except.code == 2);
  CHECK_THAT(except.err, Contains("unknown section \"cluster.nothing\""));
  const Result stray = cli({"list", "models", "--markdown"});
  CHECK(stray.code == 2);
  CHECK_THAT(stray.err, Contains("go with \"keys\" only"));
}
