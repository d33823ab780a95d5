// Reading an input as a stream: a file, standard input ("-"), a named pipe or
// a device, gzip-compressed or not (detected by content), a piece at a time so
// memory stays bounded whatever the input's size. read_file_bytes() (whole
// inputs) memory-maps regular files instead; this is the path for everything
// that cannot be mapped and for `predict`, which writes as it reads.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace pegasos {

// "standard input" for "-", else the path: what messages call an input.
std::string input_name(const std::string& path);

// Whether `bytes` starts with the gzip magic (1f 8b): how every reader tells
// gzip from plain text, whatever the name.
inline bool starts_with_gzip_magic(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

class InputStream {
 public:
  // Throws InputError naming the input when it cannot be opened or is a
  // directory.
  explicit InputStream(const std::string& path);
  ~InputStream();
  InputStream(const InputStream&) = delete;
  InputStream& operator=(const InputStream&) = delete;

  // Append up to `max_bytes` (decompressed) bytes to `out`. Blocks until at
  // least one byte arrived or the input ended; then, when `return_early`, stops
  // as soon as no more input is ready right now (so `tail -f | pegasos predict`
  // answers line by line), else keeps reading until `max_bytes`. Returns the
  // number of bytes appended: 0 only at the end of the input. Throws
  // InputError on a read error or corrupt gzip data.
  std::size_t read(std::string& out, std::size_t max_bytes, bool return_early);

  const std::string& name() const { return name_; }
  // True for a regular file (its size is known; it can be read again).
  bool regular_file() const { return regular_; }

 private:
  std::size_t read_raw(char* data, std::size_t size);
  bool more_ready() const;
  std::size_t inflate_into(std::string& out, std::size_t max_bytes, bool return_early);

  std::string name_;
  int fd_ = -1;
  bool owns_fd_ = false;
  bool regular_ = false;
  bool eof_ = false;
  bool sniffed_ = false;  // first bytes looked at for the gzip magic
  std::string pending_;   // raw bytes read but not yet consumed
  struct Gzip;
  std::unique_ptr<Gzip> gzip_;
};

}  // namespace pegasos
