// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a directory replaced as a unit keeps of its old self when the writer does not own all of it (a
// study directory's journal and a user's notes, a report's figures folder with the user's own figures):
// the writer's manifest says which top-level names it wrote last time; everything else is carried into
// the new directory as hard links (files, links, FIFOs: the same inodes, so a journal appended to or a
// lock held stays the same file) or, for directories, re-created with their contents linked. After the
// swap, whatever appeared in the old directory meanwhile is moved over, so nothing but the writer's own
// old outputs is ever removed.
#include <filesystem>
#include <set>
#include <string>

namespace epsim::core {

/// The manifest's name inside a directory: ".epsim-manifest".
const char* manifest_name();

/// The names the manifest in `dir` lists (empty when there is none); bounded (1 MiB, plain names only).
std::set<std::string> read_manifest(const std::filesystem::path& dir);

/// Writes the manifest of `dir`: its top-level names other than the manifest itself, those in `carried`
/// excepted (they are not the writer's).
void write_manifest(const std::filesystem::path& dir, const std::set<std::string>& carried);

/// Links every entry of `from` whose top-level name is neither in `skip` nor already in `to` into `to`,
/// recursively for directories; returns the top-level names it carried. Throws core::Error naming the
/// entry when one can be neither linked nor copied.
std::set<std::string> carry_entries(const std::filesystem::path& from, const std::filesystem::path& to,
                                    const std::set<std::string>& skip);

/// Moves every entry of `from` that `to` lacks into `to` (recursing into directories both have), the
/// top-level names in `skip` excepted: what appeared in the old directory after it was carried.
void move_missing(const std::filesystem::path& from, const std::filesystem::path& to,
                  const std::set<std::string>& skip);

}  // namespace epsim::core
