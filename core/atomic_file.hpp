// Crash-safe output: the file at `path` is either the previous version or the
// complete new one, never a truncated mix (write a temp file in the same
// directory, fsync, rename over the target).
#pragma once

#include <string>
#include <string_view>

namespace pegasos {

// Throws InputError naming the path when it cannot be written. While it runs,
// a temporary file `PATH.tmp-XXXXXX` exists next to `path`; it is removed on
// every error, and on SIGINT/SIGTERM/SIGHUP once
// remove_temp_files_on_signals() was called. A SIGKILL (or a power cut) can
// leave it behind; it is never mistaken for the target.
void write_file_atomic(const std::string& path, std::string_view content);

// Install handlers for SIGINT, SIGTERM and SIGHUP that unlink the temporary
// files of write_file_atomic calls in progress, then re-raise the signal with
// its default action (so the exit status still says "killed by signal").
// Signals whose handler is not the default (e.g. ignored) are left alone.
// Call once, early in main().
void remove_temp_files_on_signals();

}  // namespace pegasos
