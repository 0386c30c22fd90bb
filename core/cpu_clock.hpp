// SPDX-License-Identifier: Apache-2.0
#pragma once
// CPU time, which a busy or shared machine does not inflate the way it does wall time: what studies
// report as their cost. A run simulates on one thread, so its thread's clock is the run's CPU time.
#include <sys/resource.h>

#include <ctime>

namespace epsim::core {

/// Seconds of CPU the calling thread has used.
inline double thread_cpu_s() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

/// Seconds of CPU, user and system, the whole process (every thread) has used.
inline double process_cpu_s() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  const auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

}  // namespace epsim::core
