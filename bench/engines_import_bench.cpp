// SPDX-License-Identifier: Apache-2.0
// Engine recordings streamed into steps, DeepSeek-V3 shapes (58 MoE layers x 256 experts, top-8): an EPLB load
// history (one entry per step), vLLM routed experts (JSON Lines of 64-token requests, nested lists and base64
// .npy), TensorRT-LLM per-rank statistics (2 ranks). Prints steps/s, MB/s and the peak resident memory the
// import added. The files are written first; each import then runs in a fresh process of this binary
// (`engines_import_bench --import FORMAT PATH`), so the peak is the import's own.
#include <fmt/format.h>
#include <sys/resource.h>

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "engines/import_trtllm_stats.hpp"
#include "engines/import_vllm_routed.hpp"
#include "engines/npy.hpp"
#include "engines/routing_importers.hpp"
#include "engines/safetensors.hpp"
#include "models/model_spec.hpp"

using namespace epsim;
namespace fs = std::filesystem;

namespace {

constexpr int k_layers = 58;
constexpr int k_experts = 256;
constexpr int k_top_k = 8;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double max_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

struct Count : engines::StepSink {
  std::int64_t steps = 0;
  void begin(const trace::Header&) override {}
  void step(const trace::Step&) override { ++steps; }
};

// One token's top-8 distinct experts per MoE layer into `ids` ([layer][k]), within 4 of the 8 groups of 32
// (DeepSeek-V3's group-limited routing, which the importers check).
void draw_token(boost::random::mt19937& rng, std::vector<int>& ids) {
  boost::random::uniform_int_distribution<int> group(0, 7);
  boost::random::uniform_int_distribution<int> within(0, 31);
  boost::random::uniform_int_distribution<int> pick(0, 3);
  for (int l = 0; l < k_layers; ++l) {
    int groups[4];
    for (int g = 0; g < 4; ++g) {
      int x = group(rng);
      while (std::find(groups, groups + g, x) != groups + g) {
        x = group(rng);
      }
      groups[g] = x;
    }
    int* row = ids.data() + l * k_top_k;
    for (int k = 0; k < k_top_k; ++k) {
      int e = groups[pick(rng)] * 32 + within(rng);
      while (std::find(row, row + k, e) != row + k) {
        e = groups[pick(rng)] * 32 + within(rng);
      }
      row[k] = e;
    }
  }
}

void report(const char* what, const fs::path& p, std::int64_t steps, double s, double rss0) {
  std::uintmax_t bytes = 0;
  if (fs::is_directory(p)) {
    for (const auto& e : fs::directory_iterator(p)) {
      bytes += fs::file_size(e.path());
    }
  } else {
    bytes = fs::file_size(p);
  }
  fmt::print("{:<20} {:<20} {:>6} steps  {:>8.0f} steps/s  {:>7.1f} MB/s  file {:>6.1f} MB  peak RSS +{:.1f} MiB\n",
             what, p.filename().string(), steps, static_cast<double>(steps) / s, static_cast<double>(bytes) / 1e6 / s,
             static_cast<double>(bytes) / 1e6, max_rss_mib() - rss0);
}

}  // namespace

// One import, timed, in this process: prints its line.
int import_one(const std::string& format, const fs::path& p) {
  engines::RoutingImportOptions o;
  o.model = models::load_model_preset("deepseek-v3");
  const double rss0 = max_rss_mib();
  Count c;
  const auto t0 = std::chrono::steady_clock::now();
  engines::find_routing_importer(format)->run(p, o, c);
  report(format.c_str(), p, c.steps, seconds_since(t0), rss0);
  return 0;
}

// Tokens per [layer][expert] of `tokens` tokens drawn one by one.
std::vector<std::int64_t> draw_counts(boost::random::mt19937& rng, int tokens) {
  std::vector<int> ids(static_cast<std::size_t>(k_layers * k_top_k));
  std::vector<std::int64_t> counts(static_cast<std::size_t>(k_layers * k_experts), 0);
  for (int t = 0; t < tokens; ++t) {
    draw_token(rng, ids);
    for (int l = 0; l < k_layers; ++l) {
      for (int k = 0; k < k_top_k; ++k) {
        ++counts[static_cast<std::size_t>(l * k_experts + ids[static_cast<std::size_t>(l * k_top_k + k)])];
      }
    }
  }
  return counts;
}

// EPLB load history: 2,000 entries of 512 tokens.
void write_history(const fs::path& p, boost::random::mt19937& rng) {
  std::ofstream f(p);
  f << "{\"load_history\": [";
  for (int s = 0; s < 2000; ++s) {
    const std::vector<std::int64_t> counts = draw_counts(rng, 512);
    f << (s ? "," : "") << "{\"logical_expert_load\": [";
    for (int l = 0; l < k_layers; ++l) {
      const auto row = counts.begin() + l * k_experts;
      f << (l ? "," : "") << "[" << fmt::format("{}", fmt::join(row, row + k_experts, ",")) << "]";
    }
    f << "]}";
  }
  f << "]}\n";
}

// vLLM routed experts: 1,000 requests of 64 tokens, as nested lists or as base64 .npy.
void write_routed(const fs::path& p, bool npy, boost::random::mt19937& rng) {
  std::ofstream f(p);
  std::vector<int> ids(static_cast<std::size_t>(k_layers * k_top_k));
  std::vector<std::int32_t> flat;
  for (int r = 0; r < 1000; ++r) {
    std::string line = "{\"choices\": [{\"routed_experts\": ";
    flat.clear();
    std::string lists = "[";
    for (int t = 0; t < 64; ++t) {
      draw_token(rng, ids);
      flat.insert(flat.end(), ids.begin(), ids.end());
      if (!npy) {
        lists += t ? ",[" : "[";
        for (int l = 0; l < k_layers; ++l) {
          lists += fmt::format("{}[{}]", l ? "," : "",
                               fmt::join(ids.begin() + l * k_top_k, ids.begin() + (l + 1) * k_top_k, ","));
        }
        lists += "]";
      }
    }
    lists += "]";
    if (npy) {
      line.push_back('"');
      line.append(engines::encode_base64(engines::npy_bytes({64, k_layers, k_top_k}, flat)));
      line.push_back('"');
    } else {
      line.append(lists);
    }
    f << line << "}]}\n";
  }
}

// TensorRT-LLM statistics: 2 ranks x 1,000 iterations of 128 tokens x 58 layers (hidden ids 3..60), I32.
void write_trtllm(const fs::path& p, boost::random::mt19937& rng) {
  fs::create_directories(p);
  std::ofstream(p / "meta_info.json") << "{\"num_experts\": 256, \"num_experts_per_token\": 8}";
  for (int rank = 0; rank < 2; ++rank) {
    std::vector<engines::SafetensorsTensor> tensors;
    for (int it = 0; it < 1000; ++it) {
      const std::vector<std::int64_t> counts = draw_counts(rng, 128);
      for (int l = 0; l < k_layers; ++l) {
        const auto row = counts.begin() + l * k_experts;
        tensors.push_back(
            {fmt::format("{}_{}", it, l + 3), {k_experts}, std::vector<std::int64_t>(row, row + k_experts)});
      }
    }
    std::ofstream(p / fmt::format("rank{}.safetensors", rank), std::ios::binary)
        << engines::safetensors_bytes(tensors, "I32");
  }
}

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--import") {
    return import_one(argv[2], argv[3]);
  }
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  const fs::path dir = fs::temp_directory_path() / "epsim_engines_bench";
  fs::remove_all(dir);
  fs::create_directories(dir);
  boost::random::mt19937 rng(7);
  write_history(dir / "history.json", rng);
  write_routed(dir / "routed.jsonl", false, rng);
  write_routed(dir / "routed-npy.jsonl", true, rng);
  write_trtllm(dir / "trtllm", rng);
  for (const char* run : {"eplb-load-history history.json", "vllm-routed-experts routed.jsonl",
                          "vllm-routed-experts routed-npy.jsonl", "trtllm-expert-stats trtllm"}) {
    const std::string what(run);
    const auto space = what.find(' ');
    const std::string cmd =
        fmt::format("'{}' --import {} '{}'", self, what.substr(0, space), (dir / what.substr(space + 1)).string());
    if (std::system(cmd.c_str()) != 0) {
      fmt::print(stderr, "failed: {}\n", cmd);
      return 1;
    }
  }
  fs::remove_all(dir);
  return 0;
}
