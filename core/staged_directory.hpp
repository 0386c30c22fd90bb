// SPDX-License-Identifier: Apache-2.0
#pragma once
// A results directory replaced as a unit: everything is written into a staging directory beside the
// target (`.NAME.epsim-staging-PID`), which then takes the target's place in one step (Linux
// renameat2 RENAME_EXCHANGE swaps it with an existing directory, whose old contents are then removed).
// Readers see the old results whole or the new ones whole, never a new requests.csv beside an old
// summary.json or a stale steps.csv beside a new summary. Made before the work starts, it also checks
// the target early (a bad --out fails before a long simulation, not after). On an exception the staging
// directory is removed; on SIGINT / SIGTERM an empty one is (signal_cleanup.hpp); a staging directory
// left by a killed process (SIGKILL, power loss) is removed by the next StagedDirectory for that target.
// A target the writer shares (a study directory with its journal, a report's figures folder with a
// user's own figures) is staged in the `carry_foreign` mode: what the writer does not own is carried
// into the new directory (core/carried_entries.hpp) and a manifest records what it wrote, so the next
// writer replaces exactly that. A symbolic link as the target is refused: the swap would act on
// whatever it points to.
#include <filesystem>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>

#include "core/signal_cleanup.hpp"

namespace epsim::core {

class StagedDirectory {
 public:
  /// What happens to an existing target's entries that the writer does not own.
  enum class Existing : unsigned char {
    refuse_foreign,  ///< the target may hold only the writer's own entries (`epsim run --out`)
    carry_foreign,   ///< they are carried into the new directory; the manifest says what the writer owns
  };
  /// Creates the staging directory (and the target's parent if missing). An existing target is replaced
  /// whole, so it may hold only what the writer owns: entries named in `owned` (and temporary files
  /// "NAME.tmp-PID"); anything else (a user's own files under an --out that was not a results
  /// directory) would be deleted, so it is refused. Throws core::Error naming the target when it is not
  /// a directory, holds a file it does not own, or the staging directory cannot be made. In the
  /// `carry_foreign` mode `owned` names what the writer owns even where no manifest says so (results
  /// written before manifests existed); anything else not in the manifest is kept.
  StagedDirectory(std::filesystem::path target, std::span<const std::string_view> owned,
                  Existing existing = Existing::refuse_foreign);
  /// Removes the staging directory and its contents unless committed.
  ~StagedDirectory();
  StagedDirectory(const StagedDirectory&) = delete;
  StagedDirectory& operator=(const StagedDirectory&) = delete;

  /// Where the files go until commit().
  const std::filesystem::path& path() const { return staging_; }
  const std::filesystem::path& target() const { return target_; }
  /// Puts the staged directory in the target's place (signals deferred meanwhile). Throws core::Error
  /// when it cannot; the target then keeps its old contents.
  void commit();

 private:
  std::filesystem::path target_;
  std::filesystem::path staging_;
  Existing existing_;
  std::set<std::string> owned_;
  std::unique_ptr<SignalCleanup> cleanup_;
  bool committed_ = false;
};

/// Removes every staging directory directly in `parent` whose process no longer exists (a killed
/// writer's), whatever its target; a running process's is left alone.
void remove_dead_staging(const std::filesystem::path& parent);

}  // namespace epsim::core
