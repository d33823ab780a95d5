// One first-time read of a data file, timed: what `pegasos train` spends in
// "load" without the rest of the process (bench/speed.py runs it once per
// process, so nothing is parsed twice and the allocator starts cold).
//
//   build/parse_speed FILE [csv|libsvm]
//
// prints: bytes, rows, non-zeros, wall seconds, CPU seconds (user + system of
// the whole process during the read), and a checksum of the parsed data so
// that two builds can be compared.
#include <sys/resource.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "core/dataset.hpp"

namespace {

double cpu_seconds() {
  rusage r{};
  ::getrusage(RUSAGE_SELF, &r);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; };
  return s(r.ru_utime) + s(r.ru_stime);
}

// FNV-1a-like over the parsed arrays' 4-byte words: equal for equal data.
std::uint64_t checksum(const pegasos::Dataset& ds) {
  std::uint64_t h = 14695981039346656037ull;
  auto mix = [&](const void* p, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i + 4 <= n; i += 4) {
      std::uint32_t w = 0;
      std::memcpy(&w, b + i, 4);
      h = (h ^ w) * 1099511628211ull;
    }
  };
  mix(ds.labels.data(), ds.labels.size() * sizeof(ds.labels[0]));
  mix(ds.row_ptr.data(), ds.row_ptr.size() * sizeof(ds.row_ptr[0]));
  mix(ds.indices.data(), ds.indices.size() * sizeof(ds.indices[0]));
  mix(ds.values.data(), ds.values.size() * sizeof(ds.values[0]));
  return h;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    std::fprintf(argc < 2 ? stderr : stdout, "usage: parse_speed FILE [csv|libsvm]\n");
    return argc < 2 ? 2 : 0;
  }
  if (argc > 2 && std::strcmp(argv[2], "csv") != 0 && std::strcmp(argv[2], "libsvm") != 0) {
    std::fprintf(stderr, "parse_speed: format '%s': expected csv or libsvm\n", argv[2]);
    return 2;
  }
  pegasos::ReadOptions options;
  if (argc > 2) options.format = std::strcmp(argv[2], "csv") == 0 ? pegasos::DataFormat::kCsv : pegasos::DataFormat::kLibsvm;
  struct stat st{};
  ::stat(argv[1], &st);
  const double cpu0 = cpu_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  pegasos::Dataset ds;
  try {
    ds = pegasos::read_dataset(argv[1], options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = cpu_seconds() - cpu0;
  std::printf("bytes %lld rows %zu nnz %zu wall %.4f cpu %.4f checksum %016llx\n", static_cast<long long>(st.st_size),
              ds.size(), ds.indices.size(), wall, cpu, static_cast<unsigned long long>(checksum(ds)));
  return 0;
}
