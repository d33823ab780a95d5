#include "core/input_stream.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/errors.hpp"

namespace pegasos {
namespace {

constexpr std::size_t kRawBytes = std::size_t{1} << 16;
constexpr std::size_t kPieceBytes = std::size_t{1} << 20;

}  // namespace

std::string input_name(const std::string& path) { return path == "-" ? "standard input" : path; }

struct InputStream::Gzip {
  z_stream zs{};
  bool member_ended = false;
  std::string in;
  Gzip() {
    if (inflateInit2(&zs, 15 + 32) != Z_OK) throw std::runtime_error("zlib: inflateInit2 failed");
  }
  ~Gzip() { inflateEnd(&zs); }
};

InputStream::InputStream(const std::string& path) : name_(input_name(path)) {
  if (path == "-") {
    fd_ = STDIN_FILENO;
  } else {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw InputError(path + ": cannot open: " + std::strerror(errno));
    owns_fd_ = true;
  }
  struct stat st{};
  if (::fstat(fd_, &st) != 0) {
    const int err = errno;
    if (owns_fd_) ::close(fd_);
    throw InputError(name_ + ": cannot read: " + std::strerror(err));
  }
  if (S_ISDIR(st.st_mode)) {
    if (owns_fd_) ::close(fd_);
    throw InputError(name_ + ": is a directory, expected a file");
  }
  regular_ = S_ISREG(st.st_mode);
}

InputStream::~InputStream() {
  if (owns_fd_) ::close(fd_);
}

std::size_t InputStream::read_raw(char* data, std::size_t size) {
  while (true) {
    const ssize_t r = ::read(fd_, data, size);
    if (r > 0) return static_cast<std::size_t>(r);
    if (r == 0) {
      eof_ = true;
      return 0;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {  // a non-blocking descriptor: wait for data
      pollfd p{fd_, POLLIN, 0};
      ::poll(&p, 1, -1);
      continue;
    }
    throw InputError(name_ + ": read failed: " + std::strerror(errno));
  }
}

bool InputStream::more_ready() const {
  if (eof_) return false;
  if (regular_) return true;
  pollfd p{fd_, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP)) != 0;
}

std::size_t InputStream::read(std::string& out, std::size_t max_bytes, bool return_early) {
  if (!sniffed_) {  // the gzip magic decides how the rest is read
    char buf[kRawBytes];
    while (pending_.size() < 2 && !eof_) pending_.append(buf, read_raw(buf, sizeof buf));
    sniffed_ = true;
    if (starts_with_gzip_magic(pending_)) {
      gzip_ = std::make_unique<Gzip>();
    }
  }
  if (gzip_) return inflate_into(out, max_bytes, return_early);
  std::size_t got = std::min(pending_.size(), max_bytes);
  out.append(pending_, 0, got);
  pending_.erase(0, got);
  while (got < max_bytes && !eof_) {
    if (got > 0 && return_early && !more_ready()) break;
    const std::size_t old = out.size();
    const std::size_t room = std::min(max_bytes - got, kPieceBytes);
    out.resize(old + room);
    const std::size_t n = read_raw(out.data() + old, room);
    out.resize(old + n);
    got += n;
  }
  return got;
}

std::size_t InputStream::inflate_into(std::string& out, std::size_t max_bytes, bool return_early) {
  Gzip& gz = *gzip_;
  z_stream& zs = gz.zs;
  std::size_t got = 0;
  while (got < max_bytes) {
    if (zs.avail_in == 0) {
      if (!pending_.empty()) {
        gz.in.swap(pending_);
        pending_.clear();
      } else {
        if (eof_ || (got > 0 && return_early && !more_ready())) break;
        gz.in.resize(kRawBytes);
        gz.in.resize(read_raw(gz.in.data(), kRawBytes));
        if (gz.in.empty()) break;
      }
      zs.next_in = reinterpret_cast<Bytef*>(gz.in.data());
      zs.avail_in = static_cast<uInt>(gz.in.size());
    }
    if (gz.member_ended) {  // concatenated gzip members (as `cat a.gz b.gz`) read as one stream
      inflateReset(&zs);
      gz.member_ended = false;
    }
    const std::size_t old = out.size();
    const std::size_t room = std::min(max_bytes - got, kPieceBytes);
    out.resize(old + room);
    zs.next_out = reinterpret_cast<Bytef*>(out.data() + old);
    zs.avail_out = static_cast<uInt>(room);
    const int rc = inflate(&zs, Z_NO_FLUSH);
    const std::size_t produced = room - zs.avail_out;
    out.resize(old + produced);
    got += produced;
    if (rc == Z_STREAM_END) {
      gz.member_ended = true;
    } else if (rc != Z_OK && !(rc == Z_BUF_ERROR && zs.avail_in == 0)) {
      throw InputError(name_ + ": corrupt gzip data" + (zs.msg ? std::string(" (") + zs.msg + ")" : std::string()));
    }
  }
  if (got == 0 && eof_ && zs.avail_in == 0 && !gz.member_ended) {
    throw InputError(name_ + ": truncated gzip data (the stream ends inside a compressed member)");
  }
  return got;
}

}  // namespace pegasos
