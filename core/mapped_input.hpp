// Input files read through a memory mapping (core/dataset.cpp FileBytes):
// a file that shrinks while it is mapped (another process truncates or
// rewrites it) makes the next read of a page past its new end raise SIGBUS,
// which would kill the process with no word of why. Mappings are registered
// here while they are in use, and a SIGBUS handler that finds the faulting
// address inside one reports the file and exits 2 (bad input), after
// removing the temporary files of outputs being written; a SIGBUS anywhere
// else keeps its default action.
#pragma once

#include <cstddef>
#include <string>

namespace pegasos {

// Register [begin, begin + size) as a mapping of `path`; returns a handle for
// unregister_mapping, or -1 when every slot is taken or the name is too long
// (that mapping then faults with the default action).
int register_mapping(const void* begin, std::size_t size, const std::string& path);
void unregister_mapping(int handle);

// Install the SIGBUS handler (once, early in main(), beside
// remove_temp_files_on_signals). Left alone when SIGBUS is not at its
// default action.
void report_shrunk_mappings_on_sigbus();

}  // namespace pegasos
