#pragma once
// Parsing a command's options with Boost.Program_options, the one way every command does it: a bad
// option becomes std::invalid_argument, which the CLI reports as a usage error (exit code 2).
#include <boost/program_options.hpp>
#include <string>
#include <vector>

namespace epsim::experiments {

boost::program_options::variables_map parse_command_line(
    const std::vector<std::string>& args, const boost::program_options::options_description& options,
    const boost::program_options::positional_options_description& positional = {});

}  // namespace epsim::experiments
