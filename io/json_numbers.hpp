// Numbers as model files write them: the shortest text that reads back to
// the same value (std::to_chars), so a file round-trips bit for bit; arrays
// of them ten to a line. Shared by the linear model and its feature map.
#pragma once

#include <charconv>
#include <cstddef>
#include <string>

namespace pegasos::json_numbers {

template <class T>
void append_number(std::string& out, T v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

// A JSON array of get(0) … get(count − 1), kPerLine to a line.
template <class Get>
void append_array(std::string& out, std::size_t count, Get&& get) {
  constexpr std::size_t kPerLine = 10;
  out += '[';
  for (std::size_t e = 0; e < count; ++e) {
    if (e > 0) out += e % kPerLine == 0 ? ",\n   " : ", ";
    append_number(out, get(e));
  }
  out += ']';
}

}  // namespace pegasos::json_numbers
