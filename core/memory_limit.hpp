// How much memory this process may use, for the checks that refuse a huge
// dense allocation with a clear message instead of "out of memory" or an
// OOM kill: the smallest of physical memory, the address-space and data
// limits (`ulimit -v`, `ulimit -d`) and the cgroup's memory limit (v2
// memory.max, v1 memory.limit_in_bytes; a container's).
#pragma once

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <limits>

namespace pegasos {

struct MemoryLimit {
  double bytes = std::numeric_limits<double>::infinity();
  const char* what = "no limit";  // "physical memory", "ulimit -v", ...
};

inline MemoryLimit memory_limit() {
  MemoryLimit m;
  auto lower = [&](double bytes, const char* what) {
    if (bytes > 0 && bytes < m.bytes) {
      m.bytes = bytes;
      m.what = what;
    }
  };
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0) lower(static_cast<double>(pages) * static_cast<double>(page), "physical memory");
  for (const auto& [resource, what] : {std::pair<int, const char*>{RLIMIT_AS, "ulimit -v"}, {RLIMIT_DATA, "ulimit -d"}}) {
    rlimit r{};
    if (::getrlimit(resource, &r) == 0 && r.rlim_cur != RLIM_INFINITY) lower(static_cast<double>(r.rlim_cur), what);
  }
  for (const char* path : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    if (std::FILE* f = std::fopen(path, "r")) {
      double v = 0;
      if (std::fscanf(f, "%lf", &v) == 1) lower(v, "the cgroup's memory limit");  // "max": no number, no limit
      std::fclose(f);
    }
  }
  return m;
}

}  // namespace pegasos
