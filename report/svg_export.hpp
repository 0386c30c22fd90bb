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

/// Whether `node` names an executable (a path, or a name found on the PATH).
bool program_available(const std::string& node);

/// The SVG text of each specification, in order. Throws core::Error when Node.js cannot be started
/// (naming the fix: install nodejs or skip SVGs) or when Vega fails on a figure (with its message).
std::vector<std::string> render_svgs(const std::vector<nlohmann::json>& specs, const std::string& node);

}  // namespace epsim::report
