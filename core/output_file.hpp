// Where results go, and nothing lost on the way.
//
// A regular file (or a path that does not exist yet) is written crash-safe:
// a temporary file `PATH.tmp-XXXXXX` in the same directory, renamed over the
// target once complete, so PATH is either the previous version or the complete
// new one (with PEGASOS_FSYNC=1 in the environment also after a power cut: the
// file is fsync'ed before the rename).
// Standard output ("-"), FIFOs, character and block devices and sockets are
// written in place, as they come (a reader on a pipe sees lines as they are
// produced; /dev/null stays a device). Every write, the final flush and the
// close are checked: a failure throws OutputError naming the output. A reader
// that closed its end of a pipe (EPIPE) throws BrokenPipe, which main() turns
// into a quiet end by SIGPIPE, as Unix filters do.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/errors.hpp"

namespace pegasos {

// Writing failed after the output was opened (ENOSPC, EIO, ...). Not bad input:
// the driver exits 1 with the message.
class OutputError : public std::runtime_error {
 public:
  explicit OutputError(const std::string& what) : std::runtime_error(what) {}
};

// The reader of a pipe went away. Not an error to report: stop quietly.
class BrokenPipe : public std::runtime_error {
 public:
  explicit BrokenPipe(const std::string& output) : std::runtime_error(output + ": broken pipe") {}
};

// An output opened for writing. Opening throws InputError when the path cannot
// be created (no such directory, permission, a directory). Bytes are buffered
// (64 KiB) until flush(), commit() or a full buffer.
class OutputFile {
 public:
  // "-" (or "") is standard output.
  explicit OutputFile(const std::string& path);
  ~OutputFile();  // without commit(): a temporary file is removed, the target untouched
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write(std::string_view bytes);
  // Hand the buffered bytes to the kernel (a reader of a pipe sees them now).
  void flush();
  // Everything written: flush; for a regular file close (after an fsync with
  // PEGASOS_FSYNC=1) and rename into place; for an in-place output close it
  // (standard output is flushed, not closed). Throws OutputError (BrokenPipe)
  // on failure.
  void commit();

  // "standard output" for "-", else the path: for messages.
  const std::string& name() const { return name_; }
  // True when written in place (standard output, FIFO, device, socket).
  bool in_place() const { return tmp_.empty(); }
  // True for a terminal, FIFO/pipe or socket: someone may be reading as we go,
  // so streaming commands flush after each batch of results.
  bool interactive() const { return interactive_; }

 private:
  void write_fd(const char* data, std::size_t size);
  void discard();
  void follow_dangling_link(const std::string& path);

  std::string path_, name_, tmp_;
  std::string buffer_;
  int fd_ = -1;
  unsigned long long written_ = 0;  // bytes handed to the temporary file so far
  int slot_ = -1;  // temp-file cleanup slot (see output_file.cpp)
  unsigned mode_ = 0644;  // a regular file's permissions after commit()
  // The replaced file's owner and group (-1: a new file, or keep ours).
  long owner_ = -1, group_ = -1;
  bool interactive_ = false;
  bool committed_ = false;
};

// Write `content` to `path` as one OutputFile (atomic for regular files, in
// place for "-", FIFOs, devices and sockets).
void write_output(const std::string& path, std::string_view content);

// Fail before the work, not after it: throws the InputError that opening
// `path` as an OutputFile would (a directory, a missing folder, no permission,
// a read-only file system), by creating and removing its temporary file.
// Standard output, descriptors, FIFOs, devices and sockets are not opened (a
// FIFO's open waits for a reader): they are checked when written.
void check_output_creatable(const std::string& path);

// Create directory `path` and its parents where missing (InputError naming
// it when that fails: a file in the way, no permission, ...).
void make_output_directory(const std::string& path);

// An output that is the very file of an input (same device and inode: the
// same path, a link, another spelling) would be replaced by the temp-file
// rename: InputError "OUT: the output is WHAT (PATH); refusing to overwrite
// it". Outputs that do not exist yet or are not regular files (-, FIFOs,
// devices) and inputs that are empty, "-" or missing are never refused.
struct NamedInput {
  const char* what;          // "the data", "the source model", ...
  const std::string* path;
};
void refuse_overwriting(const std::string& out, const std::vector<NamedInput>& inputs);

// Standard output or standard error open on an input's own file (`pegasos
// predict m d >> d`, `1<> d`, `2>> d`): what is written would append to, or
// overwrite, the input. InputError naming it (for standard error the message
// cannot be shown without writing it into the input: standard error becomes
// /dev/null first, and the exit status alone says it); a terminal, pipe or
// device is fine.
void refuse_standard_output_over_inputs(const std::vector<NamedInput>& inputs);

// Whether an output path names standard output ("-", /dev/stdout, /dev/fd/1):
// a command that writes a second report there too sends that one to standard
// error instead, so the output stays one parseable document.
bool names_standard_output(const std::string& path);

// Check standard output at the end of a command: flush C and C++ streams and
// throw OutputError (BrokenPipe) if any earlier write to them failed.
void check_standard_output();

// True if a message written to standard error was lost (`2> /dev/full`): the
// command cannot report it, so it must not exit 0 either.
bool standard_error_failed();

// Descriptors 0, 1 and 2 that were closed when the process started
// (`pegasos eval ... >&-`) are opened on /dev/null: a file the program
// creates never becomes its standard output or error (a report printed to
// stdout would land in a temporary model file, or in a probe file unlinked
// at once, and the loss go unreported). Standard input and output are opened
// read-only, so a write to stdout fails (EBADF), which
// check_standard_output() reports; standard error is opened write-only, as
// closing it means "no diagnostics", not "fail".
void reserve_standard_descriptors();

// Install handlers for SIGINT, SIGTERM, SIGHUP and the other signals that
// stop a job by default (SIGQUIT, SIGUSR1/2, SIGALRM, SIGXCPU, SIGXFSZ,
// SIGVTALRM, SIGPROF, SIGPIPE) that unlink the temporary
// files of outputs being written, then re-raise the signal with its default
// action (so the exit status still says "killed by signal"). Signals whose
// handler is not the default (e.g. ignored) are left alone. Call once, early
// in main().
void remove_temp_files_on_signals();

// Unlink the temporary files of outputs being written, now; async-signal-safe
// (for other fatal-signal handlers: core/mapped_input.hpp).
void remove_temp_files_now() noexcept;

}  // namespace pegasos
