// A fixed table of entries that signal handlers read while other threads add
// and remove them (core/output_file.cpp: temporary files to unlink;
// core/mapped_input.cpp: mapped input files). A handler may only read memory
// that is not being changed under it: an entry's payload is written while its
// slot is claimed and read only while it is armed. Lock-free atomics, no
// allocation: everything a handler calls is async-signal-safe.
#pragma once

#include <signal.h>

#include <atomic>
#include <cstddef>
#include <cstring>
#include <string>

namespace pegasos {

inline constexpr std::size_t kSignalPathBytes = 4096;

// Whether `sig` still has its default action, so that a handler of ours may
// be installed: one set by the caller (ignored under nohup, a sanitizer's,
// an embedding program's) is left alone. (A SA_SIGINFO handler is a non-null
// pointer in the same union, never SIG_DFL.)
inline bool at_default_action(int sig) {
  struct sigaction old{};
  return ::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_DFL;
}

// Copy `path` (NUL included) into a handler-readable buffer; false when it
// does not fit.
inline bool copy_signal_path(char (&out)[kSignalPathBytes], const std::string& path) {
  if (path.size() >= kSignalPathBytes) return false;
  std::memcpy(out, path.c_str(), path.size() + 1);
  return true;
}

template <class Payload, int N>
class SignalSlots {
 public:
  static constexpr int kSize = N;
  static_assert(std::atomic<int>::is_always_lock_free, "signal handlers need lock-free atomics");

  // A free slot, now claimed (its payload writable), or -1 when all are taken.
  int claim() {
    for (int i = 0; i < N; ++i) {
      int expected = kFree;
      if (state_[i].compare_exchange_strong(expected, kClaimed)) return i;
    }
    return -1;
  }
  Payload& payload(int i) { return payload_[i]; }
  const Payload& payload(int i) const { return payload_[i]; }
  void arm(int i) { state_[i].store(kArmed); }
  void release(int i) {
    if (i >= 0 && i < N) state_[i].store(kFree);
  }
  // For handlers.
  bool armed(int i) const { return state_[i].load() == kArmed; }
  bool claimed(int i) const { return state_[i].load() == kClaimed; }

 private:
  enum : int { kFree = 0, kClaimed = 1, kArmed = 2 };
  std::atomic<int> state_[N] = {};
  Payload payload_[N] = {};
};

}  // namespace pegasos
