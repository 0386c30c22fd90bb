#pragma once
// Writes a whole file or nothing: content goes to a temporary file beside the target, which is then
// renamed over it, so readers never see a half-written result.
#include <filesystem>
#include <functional>
#include <ostream>
#include <string_view>

namespace epsim::core {

void write_file_atomically(const std::filesystem::path& path, std::string_view content);
/// The same with the content written by `write` into the temporary file's stream (a large log streamed
/// from disk instead of held in one string); an exception from `write` removes the temporary file.
void write_file_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write);

}  // namespace epsim::core
