// SPDX-License-Identifier: Apache-2.0
#include "core/signal_cleanup.hpp"

#include <unistd.h>

#include <array>
#include <atomic>
#include <cstring>
#include <mutex>

namespace epsim::core {

namespace {

constexpr std::size_t k_slots = 64;
constexpr std::size_t k_path_bytes = 4096;

struct Slot {
  std::atomic<bool> used{false};
  SignalCleanup::Kind kind = SignalCleanup::Kind::file;
  std::array<char, k_path_bytes> path{};
};

std::array<Slot, k_slots>& slots() {
  static std::array<Slot, k_slots> s;
  return s;
}

std::atomic<bool>& host_keeps_handlers() {
  static std::atomic<bool> keeps{false};
  return keeps;
}

std::mutex& slots_mutex() {
  static std::mutex m;
  return m;
}

extern "C" void on_signal(int sig) {
  for (Slot& s : slots()) {
    if (s.used.load(std::memory_order_acquire)) {
      if (s.kind == SignalCleanup::Kind::file) {
        ::unlink(s.path.data());
      } else {
        ::rmdir(s.path.data());
      }
    }
  }
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

}  // namespace

void install_signal_cleanup() {
  static std::once_flag once;
  if (host_keeps_handlers().load()) {
    return;
  }
  std::call_once(once, [] {
    slots();  // constructed before any signal can need it
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
  });
}

void keep_host_signal_handlers() {
  host_keeps_handlers().store(true);
}

SignalCleanup::SignalCleanup(const std::filesystem::path& path, Kind kind) {
  const std::string p = path.string();
  if (p.size() >= k_path_bytes) {
    return;
  }
  const std::lock_guard<std::mutex> lock(slots_mutex());
  for (std::size_t i = 0; i < k_slots; ++i) {
    Slot& s = slots()[i];
    if (!s.used.load(std::memory_order_relaxed)) {
      s.kind = kind;
      std::memcpy(s.path.data(), p.c_str(), p.size() + 1);
      s.used.store(true, std::memory_order_release);
      slot_ = static_cast<int>(i);
      return;
    }
  }
}

SignalCleanup::~SignalCleanup() {
  if (slot_ >= 0) {
    const std::lock_guard<std::mutex> lock(slots_mutex());
    slots()[static_cast<std::size_t>(slot_)].used.store(false, std::memory_order_release);
  }
}

SignalBlock::SignalBlock() {
  sigset_t block;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &block, &previous_);
}

SignalBlock::~SignalBlock() {
  pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

}  // namespace epsim::core
