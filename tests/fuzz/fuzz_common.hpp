// Shared by the libFuzzer targets: one worker thread (deterministic, and a
// crash shows up on the fuzzer's own stack), and the rule that only
// pegasos::InputError (ConfigError derives from it) is an expected outcome.
// Anything else escaping a target is a bug: libFuzzer reports the uncaught
// exception as a crash (abort) and saves the input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include <tbb/global_control.h>

inline void pegasos_fuzz_single_thread() {
  static const auto control =
      std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, 1);
  (void)control;
}

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}
