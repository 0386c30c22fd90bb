// SPDX-License-Identifier: Apache-2.0
#pragma once
// Error types. Library code throws; only the CLI decides how to exit.
#include <stdexcept>
#include <string>

namespace epsim::core {

/// Any failure epsim reports to the user: the message is complete and printable as one line.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Invalid configuration or input: names the file (or other source), the key and what was expected.
class ConfigError : public Error {
 public:
  ConfigError(const std::string& source, const std::string& key, const std::string& what)
      : Error(source + ": " + (key.empty() ? std::string() : key + ": ") + what) {}
};

}  // namespace epsim::core
