#include "drivers/status_line.hpp"

#include <unistd.h>

#include <cstdio>

namespace pegasos {
namespace {

bool enabled = false;
bool drawn = false;

}  // namespace

void enable_status_line(bool wanted) { enabled = wanted && ::isatty(2) != 0; }

void status_line(const std::string& text) {
  if (!enabled) return;
  std::fprintf(stderr, "\r%s\033[K", text.c_str());  // then erase the rest of a longer previous line
  std::fflush(stderr);
  drawn = true;
}

void clear_status_line() {
  if (!enabled || !drawn) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  drawn = false;
}

}  // namespace pegasos
