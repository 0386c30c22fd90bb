// SPDX-License-Identifier: Apache-2.0
#include "experiments/cli/command_line.hpp"

#include <fmt/format.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include "core/file_kind.hpp"
#include "core/message_text.hpp"

namespace po = boost::program_options;

namespace epsim::experiments {

void check_output_options(const po::variables_map& vm, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (vm.count(name) != 0) {
      core::check_output_file(vm[name].as<std::string>());
    }
  }
}

po::variables_map parse_command_line(const std::vector<std::string>& args, const po::options_description& options,
                                     const po::positional_options_description& positional) {
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(options).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw std::invalid_argument(e.what());
  }
  return vm;
}

std::int64_t whole_number_option(const std::string& text, std::string_view option, std::int64_t min, std::int64_t max) {
  std::int64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || text.front() == '-' || text.front() == '+' || ec != std::errc() || ptr != end || v < min ||
      v > max) {
    throw std::invalid_argument(
        fmt::format("{}: expected a whole number in [{}, {}], got \"{}\"", option, min, max, text));
  }
  return v;
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  for (std::size_t pos = 0; pos <= text.size();) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    out.push_back(text.substr(pos, comma - pos));
    pos = comma + 1;
  }
  return out;
}

po::variables_map parse_options(const std::vector<std::string>& args, const po::options_description& options,
                                const po::positional_options_description& positional) {
  try {
    return parse_command_line(args, options, positional);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

po::options_description common_options() {
  po::options_description d("options");
  d.add_options()("help,h", "show this help")("log-level", po::value<std::string>()->default_value("warn"),
                                              "trace, debug, info, warn, error, off");
  return d;
}

void use_stderr_logger() {
  static const bool once = [] {
    auto logger = spdlog::stderr_logger_mt("epsim-stderr");
    logger->set_pattern("epsim: %l: %v");
    spdlog::set_default_logger(logger);
    return true;
  }();
  (void)once;
}

void set_log_level(const std::string& level) {
  const auto l = spdlog::level::from_str(level);
  if (l == spdlog::level::off && level != "off") {
    throw UsageError("--log-level: unknown level \"" + level + "\"; valid: trace, debug, info, warn, error, off");
  }
  spdlog::set_level(l);
}

void warn(std::ostream& err, const std::string& what) {
  err << "epsim: warning: " << core::terminal_safe(what) << "\n";
}

ExperimentConfig load_experiment(const std::optional<std::string>& config, const std::vector<std::string>& sets) {
  return config ? load_config(*config, sets)
                : load_config_text(embedded_demo_config(), "embedded demo (examples/demo.toml)", sets);
}

ExperimentConfig load_experiment(const po::variables_map& vm, std::ostream& err) {
  const auto sets = vm.count("set") ? vm["set"].as<std::vector<std::string>>() : std::vector<std::string>{};
  ExperimentConfig cfg = load_experiment(
      vm.count("config") ? std::optional<std::string>(vm["config"].as<std::string>()) : std::nullopt, sets);
  for (const std::string& w : cfg.warnings) {
    warn(err, w);
  }
  return cfg;
}

}  // namespace epsim::experiments
