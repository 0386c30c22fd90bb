#pragma once
// Writes a whole file or nothing: content goes to a temporary file beside the target, which is then
// renamed over it, so readers never see a half-written result.
#include <filesystem>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace epsim::core {

void write_file_atomically(const std::filesystem::path& path, std::string_view content);
/// The same with the content written by `write` into the temporary file's stream (a large log streamed
/// from disk instead of held in one string); an exception from `write` removes the temporary file.
void write_file_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write);

/// Several files of one directory written as a set (name, content): every content goes to its temporary
/// file first, and only when all are complete are they renamed into place, back to back with SIGINT /
/// SIGTERM deferred. A failure while writing (a full disk) removes every temporary file and leaves the old
/// files as they were, so readers never see a new file beside an old one of the same set; only a crash of
/// the machine within the renames could.
void write_files_atomically(const std::filesystem::path& dir,
                            const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace epsim::core
