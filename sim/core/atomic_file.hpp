#pragma once
// Writes a whole file or nothing: content goes to a temporary file beside the target, which is then
// renamed over it, so readers never see a half-written result.
#include <filesystem>
#include <string_view>

namespace epsim::core {

void write_file_atomically(const std::filesystem::path& path, std::string_view content);

}  // namespace epsim::core
