#include "core/output_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <vector>

#include "core/errors.hpp"
#include "core/signal_slots.hpp"

namespace pegasos {
namespace {

// Temporary files being written, for the signal handler (core/signal_slots.hpp).
// A slot is claimed *before* mkstemp creates the file, with the cleanup
// signals blocked in the writing thread; a handler running meanwhile on
// another thread (TBB workers do not block them) waits for the name instead
// of missing the file. Writes from several threads at once each take their
// own slot; with more than 8 at once the extra ones are not cleaned up on a
// signal.
struct TempPath {
  char path[kSignalPathBytes];
};
SignalSlots<TempPath, 8> temp_files;

// Record the created file's name in a claimed slot and return the slot, or
// release it and return -1 (no file, or the name does not fit).
int arm_slot(int slot, int fd, const std::string& tmp) {
  if (slot < 0) return -1;
  if (fd < 0 || !copy_signal_path(temp_files.payload(slot).path, tmp)) {
    temp_files.release(slot);
    return -1;
  }
  temp_files.arm(slot);
  return slot;
}

// PEGASOS_FSYNC=1: fsync a file before renaming it into place, so that after
// a power cut PATH is the old or the new version on every file system (ext4
// and btrfs already order a rename over a file after its data). Off by
// default, as LIBLINEAR, scikit-learn (joblib) and Vowpal Wabbit: it waits
// for the disk, 1-2 ms on an SSD, 10 ms or more on a disk, on every model.
bool durable_commits() {
  static const bool on = [] {
    const char* v = std::getenv("PEGASOS_FSYNC");
    return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
  }();
  return on;
}

void disarm_cleanup(int slot) { temp_files.release(slot); }

// The signals whose default action ends the process, that a user or the
// system sends to stop a job: Ctrl-C, kill, a closed terminal, Ctrl-\\,
// timeout -s, ulimit -t / -f, a reader gone from a pipe. Their handler
// removes the temporary files, then the signal takes its default action.
constexpr int kCleanupSignals[] = {SIGINT,  SIGTERM, SIGHUP,  SIGQUIT,   SIGUSR1, SIGUSR2,
                                   SIGALRM, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGPIPE};

extern "C" void remove_temp_files_and_reraise(int sig) {
  const int saved_errno = errno;
  remove_temp_files_now();
  errno = saved_errno;
  // SA_RESETHAND restored the default action; the signal is blocked while
  // this handler runs and is delivered (killing the process) when it returns.
  ::raise(sig);
}

}  // namespace

void remove_temp_files_now() noexcept {
  for (int i = 0; i < temp_files.kSize; ++i) {
    // Claimed: another thread is inside mkstemp (signals blocked there), the
    // name follows within microseconds. Bounded wait, never a hang.
    for (long spin = 0; spin < 100000000L && temp_files.claimed(i); ++spin) {
    }
    if (temp_files.armed(i)) ::unlink(temp_files.payload(i).path);  // async-signal-safe
  }
}

void remove_temp_files_on_signals() {
  for (int sig : kCleanupSignals) {
    if (!at_default_action(sig)) continue;  // e.g. ignored under nohup
    struct sigaction sa{};
    sa.sa_handler = remove_temp_files_and_reraise;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;
    ::sigaction(sig, &sa, nullptr);
  }
}

namespace {

constexpr std::size_t kBufferBytes = std::size_t{1} << 16;

bool is_interactive_fd(int fd) {
  struct stat st{};
  if (::isatty(fd)) return true;
  return ::fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
}

[[noreturn]] void throw_write_error(const std::string& name, const char* what, int err) {
  if (err == EPIPE) throw BrokenPipe(name);
  throw OutputError(name + ": " + what + ": " + std::strerror(err));
}

// The permissions of a new file: 0666 less the process's umask (mkstemp
// creates 0600 whatever it is), as the shell's `>` would create it. Read once
// (reading the umask means setting it), before any output is opened.
mode_t default_file_mode() {
  static const mode_t mode = [] {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    return static_cast<mode_t>(0666 & ~mask);
  }();
  return mode;
}

// The descriptor a path names when it is one of this process's own
// (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N), else -1.
int inherited_descriptor(const std::string& path) {
  if (path == "/dev/stdin") return STDIN_FILENO;  // read-only where it is data: refused as an output
  if (path == "/dev/stdout") return STDOUT_FILENO;
  if (path == "/dev/stderr") return STDERR_FILENO;
  for (const std::string_view prefix : {std::string_view("/dev/fd/"), std::string_view("/proc/self/fd/")}) {
    if (path.size() <= prefix.size() || path.size() > prefix.size() + 9 || path.compare(0, prefix.size(), prefix) != 0) {
      continue;
    }
    int fd = 0;
    for (std::size_t i = prefix.size(); i < path.size(); ++i) {
      if (path[i] < '0' || path[i] > '9') return -1;
      fd = fd * 10 + (path[i] - '0');
    }
    return fd;
  }
  return -1;
}

// PATH.tmp-XXXXXX beside `target` (PATH, or the file a dangling link names);
// where its name is too long for the suffix (NAME_MAX), the temporary file's
// name is the name cut short. A name longer than NAME_MAX is refused: the
// rename at the end would fail (ENAMETOOLONG) after the work, and
// check_output_creatable's probe finds it first.
std::string temporary_template(const std::string& path, const std::string& target_path) {
  const std::filesystem::path target(target_path);
  std::string base = target.filename().string();
  constexpr std::size_t kSuffix = sizeof(".tmp-XXXXXX") - 1, kNameMax = 255;
  if (base.size() > kNameMax) {
    throw InputError(path + ": the file name is too long (" + std::to_string(base.size()) + " bytes; at most " +
                     std::to_string(kNameMax) + ")");
  }
  if (base.size() + kSuffix > kNameMax) base.resize(kNameMax - kSuffix);
  return (target.parent_path() / (base + ".tmp-XXXXXX")).string();
}

}  // namespace

OutputFile::OutputFile(const std::string& path) : path_(path), name_(path) {
  if (path.empty() || path == "-") {
    name_ = "standard output";
    fd_ = STDOUT_FILENO;
    interactive_ = is_interactive_fd(fd_);
    return;
  }
  // /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N: a descriptor this
  // process already has, written in place through it (its offset, O_APPEND
  // of `>>`). Resolved as a path it would be the file the shell opened, and
  // replacing that file lost what `>>` was appending to.
  if (const int inherited = inherited_descriptor(path); inherited >= 0) {
    const int flags = ::fcntl(inherited, F_GETFL);
    if (flags < 0) throw InputError(path + ": cannot open output: " + std::strerror(errno));
    if ((flags & O_ACCMODE) == O_RDONLY) throw InputError(path + ": cannot open output: open for reading only");
    fd_ = ::fcntl(inherited, F_DUPFD_CLOEXEC, 3);
    if (fd_ < 0) throw InputError(path + ": cannot open output: " + std::strerror(errno));
    interactive_ = is_interactive_fd(fd_);
    return;
  }
  struct stat st{};
  mode_ = default_file_mode();
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists) {
    if (S_ISDIR(st.st_mode)) throw InputError(path + ": cannot write output: is a directory");
    if (S_ISREG(st.st_mode)) {
      mode_ = st.st_mode & 07777;  // the replaced file's permissions are kept
      // ... and its owner and group, where we may set them (root writing
      // over a user's file; a member of the file's group).
      if (st.st_uid != ::geteuid()) owner_ = static_cast<long>(st.st_uid);
      if (st.st_gid != ::getegid()) group_ = static_cast<long>(st.st_gid);
      // A symbolic link to a regular file: its target is replaced (as `>`
      // writes through it), the link stays a link.
      struct stat lst{};
      if (::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
        if (char* real = ::realpath(path.c_str(), nullptr)) {
          path_ = real;
          std::free(real);
        }
      }
    }
    if (!S_ISREG(st.st_mode)) {  // FIFO, device, socket: in place, never replaced
      fd_ = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
      if (fd_ < 0) throw InputError(path + ": cannot open output: " + std::strerror(errno));
      interactive_ = is_interactive_fd(fd_);
      return;
    }
  }
  if (!exists) follow_dangling_link(path);
  const std::string tmpl = temporary_template(path, path_);
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  // Claim a slot, create the file and record its name with the cleanup
  // signals blocked in this thread (see the slot comment above for the others).
  sigset_t cleanup_signals, previous;
  sigemptyset(&cleanup_signals);
  for (int sig : kCleanupSignals) sigaddset(&cleanup_signals, sig);
  ::pthread_sigmask(SIG_BLOCK, &cleanup_signals, &previous);
  const int slot = temp_files.claim();
  fd_ = ::mkstemp(name.data());
  const int mkstemp_errno = errno;
  tmp_ = name.data();
  slot_ = arm_slot(slot, fd_, tmp_);
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (fd_ < 0) {
    tmp_.clear();
    // The file is written beside PATH and renamed over it: name the folder
    // (`train d.svm /proc/version` said "No such file or directory" of a
    // path that exists).
    const std::string folder = std::filesystem::path(path_).parent_path().string();
    const std::string message = path + ": cannot create output file (a temporary file in " +
                                (folder.empty() ? std::string(".") : folder) + " renamed over it): " +
                                std::strerror(mkstemp_errno);
    // A full disk or an I/O error is the system's failure, exit 1 as when a
    // write hits it; a path that cannot hold a file is the user's, exit 2.
    if (mkstemp_errno == ENOSPC || mkstemp_errno == EDQUOT || mkstemp_errno == EIO) throw OutputError(message);
    throw InputError(message);
  }
}

// PATH does not resolve to a file: if it is a symbolic link (dangling, or a
// chain of them), the file it names is the output (created there, as `>`
// creates it; the link stays a link), and a loop is an error.
void OutputFile::follow_dangling_link(const std::string& path) {
  std::filesystem::path at(path);
  for (int hops = 0; hops < 40; ++hops) {
    struct stat lst{};
    if (::lstat(at.c_str(), &lst) != 0 || !S_ISLNK(lst.st_mode)) {
      path_ = at.string();
      return;
    }
    std::error_code ec;
    const std::filesystem::path next = std::filesystem::read_symlink(at, ec);
    if (ec) throw InputError(path + ": cannot open output: " + ec.message());
    at = next.is_absolute() ? next : at.parent_path() / next;
  }
  throw InputError(path + ": cannot open output: too many levels of symbolic links");
}

OutputFile::~OutputFile() {
  if (!committed_) discard();
}

void OutputFile::discard() {
  if (fd_ >= 0 && fd_ != STDOUT_FILENO) ::close(fd_);
  fd_ = -1;
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
  disarm_cleanup(slot_);
  slot_ = -1;
}

void OutputFile::write_fd(const char* data, std::size_t size) {
#ifdef __linux__
  if (!tmp_.empty() && size > 0) {
    // Allocate the temporary file's blocks before writing them. On ext4 a
    // rename over an existing file forces the allocation of delayed blocks
    // (auto_da_alloc), which made the rename of a small model cost about as
    // much as the rest of the commit; a full disk is also reported here,
    // before any byte is written. Filesystems without fallocate just write.
    if (::fallocate(fd_, 0, static_cast<off_t>(written_), static_cast<off_t>(size)) != 0 &&
        (errno == ENOSPC || errno == EDQUOT || errno == EFBIG)) {
      throw_write_error(name_, "write failed", errno);
    }
  }
#endif
  written_ += size;
  std::size_t done = 0;
  while (done < size) {
    const ssize_t w = ::write(fd_, data + done, size - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      throw_write_error(name_, "write failed", errno);
    }
    done += static_cast<std::size_t>(w);
  }
}

void OutputFile::write(std::string_view bytes) {
  if (committed_ || fd_ < 0) throw std::logic_error("OutputFile::write after commit: " + name_);
  if (buffer_.size() + bytes.size() > kBufferBytes) {
    flush();
    if (bytes.size() >= kBufferBytes) {
      write_fd(bytes.data(), bytes.size());
      return;
    }
  }
  buffer_.append(bytes);
}

void OutputFile::flush() {
  if (buffer_.empty()) return;
  write_fd(buffer_.data(), buffer_.size());
  buffer_.clear();
}

void OutputFile::commit() {
  if (committed_) return;
  flush();
  if (tmp_.empty()) {  // in place
    if (fd_ != STDOUT_FILENO && ::close(fd_) != 0) {
      const int err = errno;
      fd_ = -1;
      throw_write_error(name_, "close failed", err);
    }
    fd_ = -1;
    committed_ = true;
    return;
  }
  if (owner_ >= 0 || group_ >= 0) {
    // Best effort, as cp -p: without the right to give the file away, the
    // new file is ours (the permissions below still apply).
    if (::fchown(fd_, owner_ >= 0 ? static_cast<uid_t>(owner_) : static_cast<uid_t>(-1),
                 group_ >= 0 ? static_cast<gid_t>(group_) : static_cast<gid_t>(-1)) != 0 &&
        owner_ >= 0 && group_ >= 0) {
      [[maybe_unused]] const int ignored = ::fchown(fd_, static_cast<uid_t>(-1), static_cast<gid_t>(group_));
    }
  }
  if (::fchmod(fd_, mode_) != 0) throw_write_error(path_, "cannot set permissions", errno);
  if (durable_commits() && ::fsync(fd_) != 0) throw_write_error(path_, "fsync failed", errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) throw_write_error(path_, "close failed", errno);
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) {
    throw_write_error(path_, "cannot rename temporary file into place", errno);
  }
  // A signal arriving now unlinks a name that no longer exists: harmless.
  disarm_cleanup(slot_);
  slot_ = -1;
  tmp_.clear();
  committed_ = true;
}

namespace {

// The file an input names (standard input's for "-"); false where it cannot be stat'ed.
bool stat_input(const std::string& path, struct stat& st) {
  return path == "-" ? ::fstat(STDIN_FILENO, &st) == 0 : ::stat(path.c_str(), &st) == 0;
}

bool same_file(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

// An input as messages name it.
std::string input_shown(const std::string& path) { return path == "-" ? "standard input" : path; }

}  // namespace

void refuse_overwriting(const std::string& out, const std::vector<NamedInput>& inputs) {
  struct stat o{};
  if (out.empty() || out == "-" || inherited_descriptor(out) >= 0 || ::stat(out.c_str(), &o) != 0 ||
      !S_ISREG(o.st_mode)) {
    return;
  }
  // Descriptor fd open on the output's very file.
  const auto same_as_descriptor = [&](int fd) {
    struct stat d{};
    return ::fstat(fd, &d) == 0 && same_file(d, o);
  };
  for (const auto& [what, path] : inputs) {  // "-": `pegasos train - m.svm < m.svm`
    struct stat i{};
    if (!path->empty() && stat_input(*path, i) && same_file(i, o)) {
      throw InputError(out + ": the output is " + what + " (" + input_shown(*path) + "); refusing to overwrite it");
    }
  }
  // `eval M D --json r.out > r.out`: the report printed to standard output
  // would go to the file the rename replaces, and be lost.
  if (same_as_descriptor(STDOUT_FILENO)) {
    throw InputError(out + ": the output is also standard output's file; refusing to replace it (write the "
                           "output elsewhere, or name it - to write it to standard output)");
  }
  // `train d m.json 2> m.json`: the summary and warnings would go to the file
  // the rename replaces, and be lost.
  if (same_as_descriptor(STDERR_FILENO)) {
    throw InputError(out + ": the output is also standard error's file; refusing to replace it (send standard "
                           "error elsewhere)");
  }
}

void refuse_standard_output_over_inputs(const std::vector<NamedInput>& inputs) {
  for (const int fd : {STDOUT_FILENO, STDERR_FILENO}) {
    struct stat o{};
    if (::fstat(fd, &o) != 0 || !S_ISREG(o.st_mode)) continue;  // a terminal, pipe or device
    const char* stream = fd == STDOUT_FILENO ? "standard output" : "standard error";
    for (const auto& [what, path] : inputs) {
      struct stat i{};
      if (!path->empty() && stat_input(*path, i) && same_file(i, o)) {
        if (fd == STDERR_FILENO) {
          // The message itself would be appended to the input: it is dropped
          // (standard error becomes /dev/null) and only the exit status says it.
          const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
          if (null >= 0) {
            ::dup2(null, STDERR_FILENO);
            ::close(null);
          }
        }
        throw InputError(std::string(stream) + " is " + what + " (" + input_shown(*path) +
                         "); refusing to write into it (redirect " + stream + " to another file)");
      }
    }
  }
}

void make_output_directory(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) throw InputError(path + ": cannot create the output folder: " + ec.message());
  if (!std::filesystem::is_directory(path, ec)) throw InputError(path + ": cannot create the output folder: not a directory");
}

void check_output_creatable(const std::string& path) {
  if (path.empty() || path == "-" || inherited_descriptor(path) >= 0) return;
  struct stat st{};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) return;
  const OutputFile probe(path);  // never committed: its temporary file is removed, the target untouched
}

void write_output(const std::string& path, std::string_view content) {
  OutputFile out(path);
  out.write(content);
  out.commit();
}

void reserve_standard_descriptors() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    // A closed standard output stays a failed write (its data would be lost);
    // a closed standard error is the user's choice of no diagnostics, so
    // messages to it go to /dev/null and succeed.
    const int got = ::open("/dev/null", (fd == 2 ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
    if (got >= 0 && got != fd) ::close(got);
  }
}

bool names_standard_output(const std::string& path) {
  return path == "-" || path == "/dev/stdout" || path == "/dev/fd/1" || path == "/proc/self/fd/1";
}

void check_standard_output() {
  std::cout.flush();
  errno = 0;
  const bool failed = std::fflush(stdout) != 0 || std::ferror(stdout) != 0 || !std::cout;
  const int err = errno;
  if (!failed) return;
  if (err == EPIPE) throw BrokenPipe("standard output");
  throw OutputError(std::string("standard output: write failed") + (err != 0 ? std::string(": ") + std::strerror(err) : ""));
}

bool standard_error_failed() {
  std::fflush(stderr);
  return std::ferror(stderr) != 0;
}

}  // namespace pegasos
