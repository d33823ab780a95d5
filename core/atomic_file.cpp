#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/errors.hpp"

namespace pegasos {
namespace {

// Temporary files being written, for the signal handler. A handler may only
// read memory that is not being changed under it: a slot's path is written
// while the slot is kClaimed and read only while it is kArmed. A slot is
// claimed *before* mkstemp creates the file, with the cleanup signals blocked
// in the writing thread; a handler running meanwhile on another thread (TBB
// workers do not block them) waits for the name instead of missing the file.
// Writes from several threads at once each take their own slot; with more
// than kSlots at once the extra ones are not cleaned up on a signal.
constexpr int kSlots = 8;
constexpr std::size_t kPathBytes = 4096;
enum SlotState : int { kFree = 0, kClaimed = 1, kArmed = 2 };
std::atomic<int> slot_state[kSlots];
char slot_path[kSlots][kPathBytes];
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs lock-free atomics");

// A free slot, now kClaimed, or -1.
int claim_slot() {
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (slot_state[i].compare_exchange_strong(expected, kClaimed)) return i;
  }
  return -1;
}

// Record the created file's name in a claimed slot and return the slot, or
// release it and return -1 (no file, or the name does not fit).
int arm_slot(int slot, int fd, const std::string& tmp) {
  if (slot < 0) return -1;
  if (fd < 0 || tmp.size() >= kPathBytes) {
    slot_state[slot].store(kFree);
    return -1;
  }
  std::memcpy(slot_path[slot], tmp.c_str(), tmp.size() + 1);
  slot_state[slot].store(kArmed);
  return slot;
}

void disarm_cleanup(int slot) {
  if (slot >= 0) slot_state[slot].store(kFree);
}

extern "C" void remove_temp_files_and_reraise(int sig) {
  const int saved_errno = errno;
  for (int i = 0; i < kSlots; ++i) {
    // Claimed: another thread is inside mkstemp (signals blocked there), the
    // name follows within microseconds. Bounded wait, never a hang.
    for (long spin = 0; spin < 100000000L && slot_state[i].load() == kClaimed; ++spin) {
    }
    if (slot_state[i].load() == kArmed) ::unlink(slot_path[i]);  // async-signal-safe
  }
  errno = saved_errno;
  // SA_RESETHAND restored the default action; the signal is blocked while
  // this handler runs and is delivered (killing the process) when it returns.
  ::raise(sig);
}

}  // namespace

void remove_temp_files_on_signals() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old{};
    if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) continue;  // e.g. ignored under nohup
    struct sigaction sa{};
    sa.sa_handler = remove_temp_files_and_reraise;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;
    ::sigaction(sig, &sa, nullptr);
  }
}

void write_file_atomic(const std::string& path, std::string_view content) {
  std::string tmpl = path + ".tmp-XXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  // Claim a slot, create the file and record its name with the cleanup
  // signals blocked in this thread (see the slot comment above for the others).
  sigset_t cleanup_signals, previous;
  sigemptyset(&cleanup_signals);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&cleanup_signals, sig);
  ::pthread_sigmask(SIG_BLOCK, &cleanup_signals, &previous);
  int slot = claim_slot();
  int fd = ::mkstemp(name.data());
  const int mkstemp_errno = errno;
  const std::string tmp(name.data());
  slot = arm_slot(slot, fd, tmp);
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (fd < 0) throw InputError(path + ": cannot create output file: " + std::strerror(mkstemp_errno));
  auto fail = [&](const char* what) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    disarm_cleanup(slot);
    throw InputError(path + ": " + what + ": " + std::strerror(err));
  };
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t w = ::write(fd, content.data() + done, content.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      fail("write failed");
    }
    done += static_cast<std::size_t>(w);
  }
  if (::fchmod(fd, 0644) != 0) fail("cannot set permissions");
  if (::fsync(fd) != 0) fail("fsync failed");
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    disarm_cleanup(slot);
    throw InputError(path + ": close failed: " + std::strerror(err));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    disarm_cleanup(slot);
    throw InputError(path + ": cannot rename temporary file into place: " + std::strerror(err));
  }
  // A signal arriving now unlinks a name that no longer exists: harmless.
  disarm_cleanup(slot);
}

}  // namespace pegasos
