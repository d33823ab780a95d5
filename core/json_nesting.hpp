// A guard for JSON text from outside (config files, --set values, experiment
// specs, journals, JSONL documents, model files): refused before it is parsed
// when it nests deeper than kMaxDepth. The library's parser copes, but
// printing or copying such a value recurses once per level (a config value
// 70000 arrays deep crashed the error message that quoted it). No file of ours
// nests more than a few levels.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace pegasos::json_nesting {

inline constexpr std::size_t kMaxDepth = 256;

// Whether the [ and { of `text` (outside strings) nest deeper than kMaxDepth:
// a scan of the bytes, no parse.
inline bool too_deep(std::string_view text) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) return true;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return false;
}

inline std::string error() { return "JSON nested deeper than " + std::to_string(kMaxDepth) + " levels"; }

}  // namespace pegasos::json_nesting
