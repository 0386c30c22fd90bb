// SPDX-License-Identifier: Apache-2.0
#pragma once
// Parsing a command's options with Boost.Program_options, the one way every command does it: a bad
// option becomes std::invalid_argument, which the CLI reports as a usage error (exit code 2).
#include <boost/program_options.hpp>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "experiments/assembly/experiment_config.hpp"

namespace epsim::experiments {

/// A command used wrongly: `epsim` prints it after the command's name and exits with 2.
struct UsageError : core::Error {
  using core::Error::Error;
};

boost::program_options::variables_map parse_command_line(
    const std::vector<std::string>& args, const boost::program_options::options_description& options,
    const boost::program_options::positional_options_description& positional = {});

/// A whole number in [min, max] given to `option` (e.g. "--seed"): digits only, so "-1" or "1e3" is
/// refused instead of wrapping around (Boost reads "-1" as 2^64 - 1 for an unsigned option). Throws
/// std::invalid_argument naming the option, the range and what was given.
std::int64_t whole_number_option(const std::string& text, std::string_view option, std::int64_t min, std::int64_t max);

/// A comma-separated option value's items, empty ones kept ("1,,2" -> {"1", "", "2"}; "" -> {""}) so
/// that each parser reports the item it refuses.
std::vector<std::string> split_commas(const std::string& text);

/// parse_command_line, its std::invalid_argument turned into a UsageError.
boost::program_options::variables_map parse_options(
    const std::vector<std::string>& args, const boost::program_options::options_description& options,
    const boost::program_options::positional_options_description& positional = {});

/// Checks the single-file outputs given to these options (those given) before any work: each must be a
/// new name or a regular file (core/file_kind.hpp), never a device, FIFO, directory or link.
void check_output_options(const boost::program_options::variables_map& vm, std::initializer_list<const char*> names);

/// The options every command takes: --help and --log-level.
boost::program_options::options_description common_options();

/// Warnings and logs on stderr as "epsim: LEVEL: ..." (spdlog's default logger), never in a command's
/// output; the CLI and the Python module set it up the same way.
void use_stderr_logger();

/// --log-level: trace, debug, info, warn, error or off; another word is a UsageError.
void set_log_level(const std::string& level);

/// "epsim: warning: ..." on the error stream (never in a command's output).
void warn(std::ostream& err, const std::string& what);

/// The experiment in file `config` (the embedded demo without one) with its "key=value" overrides, as every
/// command loads it; its warnings stay in its `warnings`.
ExperimentConfig load_experiment(const std::optional<std::string>& config, const std::vector<std::string>& sets);

/// The experiment of --config (the embedded demo without it) with its --set overrides; its warnings go
/// to `err`.
ExperimentConfig load_experiment(const boost::program_options::variables_map& vm, std::ostream& err);

}  // namespace epsim::experiments
