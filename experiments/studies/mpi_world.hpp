// SPDX-License-Identifier: Apache-2.0
#pragma once
// The processes a sweep runs on: one, or the ranks of an MPI job (`mpirun -n N epsim sweep ...`) when
// epsim was built with Open MPI (EPSIM_HAVE_MPI) and launched by mpirun. Ranks take runs by index;
// rank 0 gathers every rank's records and writes the outputs.
#include <string>
#include <vector>

namespace epsim::experiments {

class MpiWorld {
 public:
  /// Initialises MPI when launched by mpirun (and finalises it on destruction); a plain launch is a
  /// world of one. Throws core::Error when launched by mpirun on a build without MPI.
  MpiWorld();
  ~MpiWorld();
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  /// Every rank's `mine`, in rank order, at rank 0 (other ranks get an empty list).
  std::vector<std::string> gather(const std::string& mine) const;
  /// Whether every rank says `ok` (a collective: every rank must call it).
  bool all(bool ok) const;

 private:
  int rank_ = 0;
  int size_ = 1;
  bool initialised_ = false;
};

/// True when this process was started by an MPI launcher (Open MPI, MPICH/PMI, PMIx).
bool launched_by_mpi();

}  // namespace epsim::experiments
