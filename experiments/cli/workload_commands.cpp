// SPDX-License-Identifier: Apache-2.0
#include "experiments/cli/workload_commands.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <optional>

#include "experiments/cli/command_line.hpp"
#include "workloads/request_trace_stats.hpp"
#include "workloads/workload_bounds.hpp"

namespace po = boost::program_options;

namespace epsim::experiments {
namespace {

constexpr const char* k_usage = R"(usage: epsim workload <stats> [options]

  stats FILE --format F     a request trace before replaying it: requests, duration, mean rate, prompt and
                            output length percentiles, and for Mooncake traces the ideal prefix-cache hit
                            rate (infinite cache, block-granular); F: csv, mooncake, azure, burstgpt
)";

int stats(const std::vector<std::string>& args, std::ostream& out) {
  po::options_description d("workload stats options");
  d.add_options()("help,h", "help")("file", po::value<std::string>()->required(), "request trace")(
      "format", po::value<std::string>()->default_value("csv"), "csv, mooncake, azure or burstgpt (replay_format)")(
      "speedup", po::value<double>()->default_value(1.0), "arrivals this many times faster (replay_speedup)")(
      "start-s", po::value<double>()->default_value(0.0), "skip rows recorded before this trace time (replay_start_s)")(
      "window-s", po::value<double>()->default_value(0.0),
      "end at rows recorded at or after start + this (replay_window_s; 0 = the file's end)")(
      "block-tokens", po::value<std::int64_t>()->default_value(512),
      "mooncake: tokens per hash id (replay_block_tokens)")("model", po::value<std::string>()->default_value(""),
                                                            "burstgpt: only this Model's rows (replay_model)")(
      "num-requests", po::value<std::int64_t>()->default_value(0), "stop after this many requests (0 = all)");
  po::positional_options_description pos;
  pos.add("file", 1);
  if (std::find(args.begin(), args.end(), "--help") != args.end()) {
    out << "usage: epsim workload stats FILE [--format F] [--speedup X] [--start-s S] [--window-s W]\n"
           "                           [--block-tokens B] [--model M] [--num-requests N]\n\n"
        << d;
    return 0;
  }
  const auto vm = parse_command_line(args, d, pos);
  workloads::ReplayOptions o;
  const std::string format = vm["format"].as<std::string>();
  const std::optional<workloads::TraceFormat> named = workloads::trace_format_named(format);
  if (!named) {
    throw std::invalid_argument(fmt::format("unknown request trace format \"{}\"; valid formats are: {}", format,
                                            workloads::trace_format_names()));
  }
  o.format = *named;
  o.speedup = vm["speedup"].as<double>();
  o.start_s = vm["start-s"].as<double>();
  o.window_s = vm["window-s"].as<double>();
  o.block_tokens = vm["block-tokens"].as<std::int64_t>();
  o.model = vm["model"].as<std::string>();
  const std::int64_t n = vm["num-requests"].as<std::int64_t>();
  // The same bounds as the [workload] keys they stand for.
  if (!(o.speedup >= 1e-6 && o.speedup <= 1e6) || !(o.start_s >= 0.0 && o.start_s <= 1e9) ||
      !(o.window_s >= 0.0 && o.window_s <= 1e9) || o.block_tokens < 1 ||
      o.block_tokens > workloads::k_max_request_tokens || n < 0 || n > workloads::k_max_requests) {
    throw std::invalid_argument(fmt::format(
        "--speedup must be in [1e-6, 1e6], --start-s and --window-s in [0, 1e9], --block-tokens in [1, {}], "
        "--num-requests in [0, {}]",
        workloads::k_max_request_tokens, workloads::k_max_requests));
  }
  out << workloads::format_request_trace_stats(
      workloads::compute_request_trace_stats(vm["file"].as<std::string>(), o, n));
  return 0;
}

}  // namespace

int workload_command(const std::vector<std::string>& args, std::ostream& out) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    out << k_usage;
    return args.empty() ? 2 : 0;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "stats") {
    return stats(rest, out);
  }
  throw std::invalid_argument("unknown workload command \"" + args[0] + "\"; valid commands are: stats");
}

}  // namespace epsim::experiments
