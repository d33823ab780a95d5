// Large arrays in huge pages (core/fresh_memory.hpp) and long JSON arrays
// written in parallel blocks (io/json_numbers.hpp, io/duals_json.cpp): the
// contents are what a plain std::vector holds and what one thread writes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/fresh_memory.hpp"
#include "core/random.hpp"
#include "io/duals_json.hpp"
#include "io/json_numbers.hpp"
#include "tests/test_util.hpp"

using namespace pegasos;

TEST_CASE("HugeVector: the values of a std::vector across the huge-page threshold, aligned blocks", "[memory]") {
  constexpr std::size_t kHuge = HugePageAllocator<int>::kHuge;
  HugeVector<std::uint32_t> v;
  std::vector<std::uint32_t> reference;
  Rng rng(7);
  // Grows by doubling from 4 bytes to 8 MB: small blocks from std::allocator,
  // large ones mapped, each growth a copy from one kind into the other.
  for (std::size_t i = 0; i < (std::size_t{2} << 20); ++i) {
    const auto x = static_cast<std::uint32_t>(rng.uniform() * 4e9);
    v.push_back(x);
    reference.push_back(x);
    if (v.capacity() * sizeof(std::uint32_t) >= HugePageAllocator<int>::kFrom && v.size() == v.capacity()) {
      REQUIRE(reinterpret_cast<std::uintptr_t>(v.data()) % kHuge == 0);  // each new block, once full
    }
  }
  CHECK(std::equal(v.begin(), v.end(), reference.begin(), reference.end()));
  HugeVector<std::uint32_t> copy = v;  // a second mapping
  CHECK(copy == v);
  v.resize(10);
  v.shrink_to_fit();  // back to a small block
  CHECK(std::equal(v.begin(), v.end(), reference.begin()));

  // Every block is unmapped whole: allocate and free cycles leave the
  // process's mappings as they were.
  auto mappings = [] {
    std::ifstream maps("/proc/self/maps");
    std::size_t lines = 0;
    for (std::string line; std::getline(maps, line);) ++lines;
    return lines;
  };
  {
    HugeVector<double> warm(1'000'000);  // first use of each path (std::allocator, mmap)
  }
  const std::size_t before = mappings();
  for (int round = 0; round < 200; ++round) {
    HugeVector<double> a(300'000 + static_cast<std::size_t>(round) * 1000);  // 2.4-4 MB
    HugeVector<char> b((std::size_t{5} << 20) + static_cast<std::size_t>(round));
    a[a.size() - 1] = 1.0;
    b[0] = 'x';
  }
  CHECK(mappings() == before);
  CHECK(HugePageAllocator<int>() == HugePageAllocator<double>());

  HugeVector<double> zeros;
  resize_populated(zeros, 3'000'000);  // 24 MB: populated by all threads, then zero-filled
  REQUIRE(zeros.size() == 3'000'000);
  CHECK(reinterpret_cast<std::uintptr_t>(zeros.data()) % kHuge == 0);
  CHECK(std::all_of(zeros.begin(), zeros.end(), [](double z) { return z == 0.0; }));
}

TEST_CASE("append_items: long arrays in parallel blocks are the text one thread writes", "[memory][io]") {
  Rng rng(11);
  for (const std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{10}, std::size_t{32768},
                                  std::size_t{32769}, std::size_t{100003}}) {
    std::vector<double> values(count);
    for (double& x : values) x = (rng.uniform() - 0.5) * 1e3;
    std::string serial = "[";
    for (std::size_t e = 0; e < count; ++e) {
      if (e > 0) serial += e % 10 == 0 ? ",\n   " : ", ";
      json_numbers::append_number(serial, values[e]);
    }
    serial += "]";
    std::string parallel;
    json_numbers::append_array(parallel, count, [&](std::size_t e) { return values[e]; });
    INFO("count " << count);
    CHECK(parallel == serial);
    if (count > 0) {  // and it reads back bit for bit
      const auto back = nlohmann::json::parse(parallel).get<std::vector<double>>();
      CHECK(testutil::bits(back) == testutil::bits(values));
    }
  }
}

TEST_CASE("duals section: 50k rows written in blocks read back bit for bit", "[memory][duals]") {
  Rng rng(3);
  StoredDuals d;
  d.outputs = 2;
  std::uint64_t h = 0;
  for (std::size_t e = 0; e < 50'000; ++e) {
    h += 1 + static_cast<std::uint64_t>(rng.uniform() * 1e12);  // increasing, as the format requires
    d.rows.push_back(h);
    d.copies.push_back(1 + static_cast<std::uint32_t>(rng.uniform() * 3));
    for (int k = 0; k < d.outputs; ++k) d.alpha.push_back(rng.uniform() * 2 - 1);
  }
  std::string text;
  append_duals_json(text, d);
  const StoredDuals back = duals_from_json(nlohmann::json::parse(text), "m.json", d.outputs);
  CHECK(back.rows == d.rows);
  CHECK(testutil::bits(back.alpha) == testutil::bits(d.alpha));
  CHECK(back.copies == d.copies);
  // A row's hash is 16 hex digits in quotes, ten to a line.
  CHECK(text.find("\"rows\": [\"") != std::string::npos);
  CHECK(text.find(",\n   \"") != std::string::npos);

  d.alpha[12345] = std::nan("");
  std::string refused;
  CHECK_THROWS_AS(append_duals_json(refused, d), std::logic_error);
}
