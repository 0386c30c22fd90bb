// SPDX-License-Identifier: Apache-2.0
#pragma once
// Durations for progress lines and estimates: "45s", "2m05s", "3h07m". The value is rounded to the
// unit the text ends in before it is split, so 119.6 s reads "2m00s", never "1m60s".
#include <string>

namespace epsim::core {

/// Below a minute whole seconds ("59s"); below an hour minutes and seconds ("2m00s"); else hours and
/// minutes ("1h00m"). Negative, NaN or infinite: "?".
std::string duration_text(double seconds);

}  // namespace epsim::core
