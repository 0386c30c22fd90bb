// SPDX-License-Identifier: Apache-2.0
#pragma once
// Each figure as its own SVG, drawn by the same Vega as the page (vega_runtime.hpp), headless under
// Node.js: Vega's SVG renderer needs a JavaScript engine, not a browser, and Debian's nodejs is one
// package. Node gets the script on stdin and answers one JSON line per figure on stdout; nothing is
// written to disk here.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace epsim::report {

/// The Node.js to run: $EPSIM_NODE when set, else `node` on the PATH.
std::string node_program();

/// How long Node.js may take to draw a report's figures before it is stopped (a hung EPSIM_NODE must not
/// hold `epsim report` forever): $EPSIM_NODE_TIMEOUT_S when set, else k_default_node_timeout_s. Throws
/// core::Error for a value that is not seconds in (0, 86400].
inline constexpr double k_default_node_timeout_s = 300.0;
double node_timeout_s();

/// Whether `node` names an executable (a path, or a name found on the PATH).
bool program_available(const std::string& node);

/// The SVG text of each specification, in order. Throws core::Error when Node.js cannot be started
/// (naming the fix: install nodejs or skip SVGs), when Vega fails on a figure (with its message), or when
/// Node.js has not finished within node_timeout_s() (it is killed).
std::vector<std::string> render_svgs(const std::vector<nlohmann::json>& specs, const std::string& node);

}  // namespace epsim::report
