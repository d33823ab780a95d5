// A one-line progress report on stderr for long work inside a command
// (reading and parsing training data, the points of a cross-validation or a
// lambda "auto" path): redrawn in place, and only when stderr is a terminal
// and the command was not given --quiet, so logs and pipes stay clean. The
// epoch progress of training has its own line (pegasos_main.cpp).
#pragma once

#include <string>

namespace pegasos {

// Turn the line on for this process: `wanted` (not --quiet) and stderr a terminal.
void enable_status_line(bool wanted);
// Draw `text` over the current status line (no-op when off). Call from one thread.
void status_line(const std::string& text);
// End a drawn status line (erase it) so later output starts on a clean line.
void clear_status_line();

}  // namespace pegasos
