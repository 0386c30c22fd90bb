// SPDX-License-Identifier: Apache-2.0
#pragma once
// Vega, compiled into epsim from Debian's libjs-vega: the browser bundles of the modules a 2-D chart
// needs, behind a ten-line AMD loader. Debian ships Vega as separate UMD modules (no single bundle), and
// their browser-global fallback overwrites `vega` module by module; the AMD path of the same files
// resolves their dependencies by name instead. Running the text defines `__epsimVega()`, which returns
// { parse, View } - in a page (the report) and in Node's vm (svg_export.hpp) alike.
#include <string>
#include <string_view>

namespace epsim::report {

/// The loader, then every module in dependency order.
const std::string& vega_runtime_js();

/// Vega's copyright and license (BSD-3-Clause), as Debian ships it: the report carries it.
std::string_view vega_license_text();

}  // namespace epsim::report
