// Numbers as model files write them: the shortest text that reads back to
// the same value (std::to_chars), so a file round-trips bit for bit; arrays
// of them ten to a line. Shared by the linear model, its dual variables and
// its feature map.
#pragma once

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <string>
#include <vector>

#include <tbb/parallel_for.h>

namespace pegasos::json_numbers {

template <class T>
void append_number(std::string& out, T v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

// The items of a JSON array, put(e, out) appending item e, kPerLine to a
// line. Long arrays are written in blocks by all threads, then joined in
// order: the same text as one thread writes (a model with the duals of 780k
// rows: 18 MB of text, about 0.2 s on one thread here). `put` is called from
// several threads at once: it must only read shared state (it is taken as
// const, so a mutable lambda does not compile).
template <class Put>
void append_items(std::string& out, std::size_t count, const Put& put) {
  constexpr std::size_t kPerLine = 10, kBlock = std::size_t{1} << 14;
  auto items = [&](std::string& to, std::size_t from, std::size_t end) {
    for (std::size_t e = from; e < end; ++e) {
      if (e > 0) to += e % kPerLine == 0 ? ",\n   " : ", ";
      put(e, to);
    }
  };
  if (count <= 2 * kBlock) {
    items(out, 0, count);
    return;
  }
  std::vector<std::string> parts((count + kBlock - 1) / kBlock);
  tbb::parallel_for(std::size_t{0}, parts.size(), [&](std::size_t b) {
    parts[b].reserve(kBlock * 26);
    items(parts[b], b * kBlock, std::min(count, (b + 1) * kBlock));
  });
  std::size_t size = out.size();
  for (const std::string& part : parts) size += part.size();
  if (size > out.capacity()) out.reserve(std::max(size, 2 * out.capacity()));  // geometric, however reserve() grows
  for (const std::string& part : parts) out += part;
}

// A JSON array of get(0) … get(count − 1), kPerLine to a line (`get` as
// append_items' `put`: called from several threads, read-only).
template <class Get>
void append_array(std::string& out, std::size_t count, const Get& get) {
  out += '[';
  append_items(out, count, [&](std::size_t e, std::string& to) { append_number(to, get(e)); });
  out += ']';
}

}  // namespace pegasos::json_numbers
