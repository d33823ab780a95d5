#include "core/mapped_input.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>

#include "core/output_file.hpp"

namespace pegasos {
namespace {

// Slots as in core/output_file.cpp: a slot's range and name are written while
// it is kClaimed and read by the handler only while it is kArmed.
constexpr int kSlots = 16;
constexpr std::size_t kPathBytes = 4096;
enum SlotState : int { kFree = 0, kClaimed = 1, kArmed = 2 };
std::atomic<int> slot_state[kSlots];
std::uintptr_t slot_begin[kSlots], slot_end[kSlots];
char slot_path[kSlots][kPathBytes];
std::atomic<bool> reporting{false};
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<bool>::is_always_lock_free,
              "the signal handler needs lock-free atomics");

void write_all(const char* s) {
  std::size_t n = 0;
  while (s[n] != '\0') ++n;
  while (n > 0) {
    const ssize_t w = ::write(STDERR_FILENO, s, n);
    if (w <= 0) return;
    s += w;
    n -= static_cast<std::size_t>(w);
  }
}

extern "C" void report_shrunk_mapping(int sig, siginfo_t* info, void*) {
  const auto addr = reinterpret_cast<std::uintptr_t>(info->si_addr);
  for (int i = 0; i < kSlots && info->si_code > 0; ++i) {  // si_code <= 0: sent, not a fault
    if (slot_state[i].load() != kArmed || addr < slot_begin[i] || addr >= slot_end[i]) continue;
    // Parsing threads fault on the same file at once: one reports and
    // exits, the others wait for that exit.
    if (reporting.exchange(true)) {
      for (;;) ::pause();
    }
    write_all("error: ");
    write_all(slot_path[i]);
    write_all(": the file shrank or was replaced while it was being read (SIGBUS on its mapping)\n");
    remove_temp_files_now();
    ::_exit(2);
  }
  // Not a mapping of ours (or sent by kill): the default action, pending
  // until this handler returns (the signal is blocked while it runs).
  struct sigaction dfl{};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
  ::raise(sig);
}

}  // namespace

int register_mapping(const void* begin, std::size_t size, const std::string& path) {
  if (path.size() >= kPathBytes) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!slot_state[i].compare_exchange_strong(expected, kClaimed)) continue;
    slot_begin[i] = reinterpret_cast<std::uintptr_t>(begin);
    slot_end[i] = slot_begin[i] + size;
    std::memcpy(slot_path[i], path.c_str(), path.size() + 1);
    slot_state[i].store(kArmed);
    return i;
  }
  return -1;
}

void unregister_mapping(int handle) {
  if (handle >= 0 && handle < kSlots) slot_state[handle].store(kFree);
}

void report_shrunk_mappings_on_sigbus() {
  struct sigaction old{};
  if (::sigaction(SIGBUS, nullptr, &old) != 0 || (old.sa_flags & SA_SIGINFO) != 0 || old.sa_handler != SIG_DFL) return;
  struct sigaction sa{};
  sa.sa_sigaction = report_shrunk_mapping;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_SIGINFO;
  ::sigaction(SIGBUS, &sa, nullptr);
}

}  // namespace pegasos
