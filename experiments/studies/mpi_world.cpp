// SPDX-License-Identifier: Apache-2.0
#include "experiments/studies/mpi_world.hpp"

#include <cstdlib>

#include "core/error.hpp"

#ifdef EPSIM_HAVE_MPI
#include <mpi.h>
#endif

namespace epsim::experiments {

bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (std::getenv(v) != nullptr) {
      return true;
    }
  }
  return false;
}

#ifdef EPSIM_HAVE_MPI

MpiWorld::MpiWorld() {
  if (!launched_by_mpi()) {
    return;
  }
  int already = 0;
  MPI_Initialized(&already);
  if (!already) {
    MPI_Init(nullptr, nullptr);
    initialised_ = true;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiWorld::~MpiWorld() {
  if (initialised_) {
    MPI_Finalize();
  }
}

std::vector<std::string> MpiWorld::gather(const std::string& mine) const {
  if (size_ == 1) {
    return {mine};
  }
  int length = static_cast<int>(mine.size());
  std::vector<int> lengths(rank_ == 0 ? static_cast<std::size_t>(size_) : 0);
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> offsets(lengths.size());
  int total = 0;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    offsets[i] = total;
    total += lengths[i];
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    out.push_back(all.substr(static_cast<std::size_t>(offsets[i]), static_cast<std::size_t>(lengths[i])));
  }
  return out;
}

bool MpiWorld::all(bool ok) const {
  if (size_ == 1) {
    return ok;
  }
  int mine = ok ? 1 : 0;
  int every = 0;
  MPI_Allreduce(&mine, &every, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return every == 1;
}

#else

MpiWorld::MpiWorld() {
  if (launched_by_mpi()) {
    const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
    if (size == nullptr || std::string(size) != "1") {
      throw core::Error(
          "launched by mpirun, but this epsim was built without MPI: every rank would run the whole sweep. Install "
          "libopenmpi-dev and rebuild, or run without mpirun (-j N uses the local cores)");
    }
  }
}

MpiWorld::~MpiWorld() = default;

std::vector<std::string> MpiWorld::gather(const std::string& mine) const {
  return {mine};
}

bool MpiWorld::all(bool ok) const {
  return ok;
}

#endif

}  // namespace epsim::experiments
