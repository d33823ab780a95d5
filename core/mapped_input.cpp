#include "core/mapped_input.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

#include "core/output_file.hpp"
#include "core/signal_slots.hpp"

namespace pegasos {
namespace {

// Mappings in use (core/signal_slots.hpp).
// The range is atomic, and the handler checks the slot is still armed after
// reading it: a slot released and claimed again meanwhile is not taken for
// the fault's file. 64 slots: text folders are read a file per thread.
struct Mapping {
  std::atomic<std::uintptr_t> begin, end;
  char path[kSignalPathBytes];
};
SignalSlots<Mapping, 64> mappings;
std::atomic<bool> reporting{false};
static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<std::uintptr_t>::is_always_lock_free,
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
  for (int i = 0; i < mappings.kSize && info->si_code > 0; ++i) {  // si_code <= 0: sent, not a fault
    if (!mappings.armed(i)) continue;
    const std::uintptr_t begin = mappings.payload(i).begin.load(), end = mappings.payload(i).end.load();
    if (addr < begin || addr >= end || !mappings.armed(i)) continue;
    // Parsing threads fault on the same file at once: one reports and
    // exits, the others wait for that exit.
    if (reporting.exchange(true)) {
      for (;;) ::pause();
    }
    write_all("error: ");
    write_all(mappings.payload(i).path);
    write_all(": the file was truncated or became unreadable while it was being read (SIGBUS on its mapping)\n");
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
  const int i = mappings.claim();
  if (i < 0) return -1;
  Mapping& m = mappings.payload(i);
  m.begin.store(reinterpret_cast<std::uintptr_t>(begin));
  m.end.store(reinterpret_cast<std::uintptr_t>(begin) + size);
  if (!copy_signal_path(m.path, path)) {
    mappings.release(i);
    return -1;
  }
  mappings.arm(i);
  return i;
}

void unregister_mapping(int handle) { mappings.release(handle); }

void report_shrunk_mappings_on_sigbus() {
  if (!at_default_action(SIGBUS)) return;
  struct sigaction sa{};
  sa.sa_sigaction = report_shrunk_mapping;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_SIGINFO;
  ::sigaction(SIGBUS, &sa, nullptr);
}

}  // namespace pegasos
