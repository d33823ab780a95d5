// Crash-safe output: the file at `path` is either the previous version or the
// complete new one, never a truncated mix (write a temp file in the same
// directory, fsync, rename over the target).
#pragma once

#include <string>
#include <string_view>

namespace pegasos {

// Throws InputError naming the path when it cannot be written.
void write_file_atomic(const std::string& path, std::string_view content);

}  // namespace pegasos
