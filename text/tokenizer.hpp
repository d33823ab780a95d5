// Steps 1-3 of the text pipeline (text/featurizer.hpp): prepare (mail headers,
// lowercase), tokenize, and the word / character n-gram terms of a token list.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "text/options.hpp"

namespace pegasos {

// Longer tokens are dropped, not truncated (text/featurizer.hpp, step 2).
constexpr std::size_t kMaxTokenBytes = 64;

// Step 1. Returns `doc` itself when nothing changes, else a view of `scratch`.
std::string_view prepare_text(std::string_view doc, const TextOptions& options, std::string& scratch);

// Step 2 on prepared text: appends the tokens (views into `text`) to `tokens`.
// Never fails: any byte sequence (invalid UTF-8, NUL bytes) is accepted.
void tokenize_prepared(std::string_view text, const TextOptions& options,
                       std::vector<std::string_view>& tokens);

// Steps 1-2. The views point into `doc` or `scratch` (keep both alive).
std::vector<std::string_view> tokenize(std::string_view doc, const TextOptions& options, std::string& scratch);

// Steps 1-3: every term occurrence of `doc`, in order (all word unigrams,
// then bigrams, ..., then each token's char n-grams by n, then position).
// Allocates; meant for tests and inspection.
std::vector<std::string> text_terms(std::string_view doc, const TextOptions& options);

// The built-in English stop-word list (NLTK's; lowercase, apostrophe-free
// fragments such as "don" and "t" included since the tokenizer splits "don't").
bool is_stop_word(std::string_view token);

// Working memory for featurising one document at a time; one per thread.
// Contents are unspecified between calls; reusing it avoids allocation.
struct TextScratch {
  std::string text;
  std::vector<std::string_view> tokens;
  std::string gram;
  std::vector<std::uint64_t> keys, buffer;
  std::vector<std::uint32_t> ids;
  std::vector<std::uint32_t> starts;
  std::vector<std::pair<std::uint32_t, double>> row;
};

// Step 3: the terms of the token list in s.tokens (word n-grams, then
// character n-grams; see text/featurizer.hpp). `fn(term)` gets a view that is
// valid only during the call. Uses s.gram and s.starts.
template <class Fn>
void for_each_term(const TextOptions& o, TextScratch& s, Fn&& fn) {
  const std::vector<std::string_view>& tokens = s.tokens;
  if (o.word_ngrams >= 1) {
    for (std::string_view t : tokens) fn(t);
  }
  for (std::size_t n = 2; n <= static_cast<std::size_t>(std::max(o.word_ngrams, 0)); ++n) {
    for (std::size_t i = 0; i + n <= tokens.size(); ++i) {
      s.gram.assign(tokens[i]);
      for (std::size_t k = 1; k < n; ++k) {
        s.gram.push_back(' ');
        s.gram.append(tokens[i + k]);
      }
      fn(std::string_view(s.gram));
    }
  }
  if (o.char_ngrams_max <= 0) return;
  const auto n_min = static_cast<std::size_t>(o.char_ngrams_min);
  const auto n_max = static_cast<std::size_t>(o.char_ngrams_max);
  for (std::string_view t : tokens) {
    // gram = "#" + " " + token + " "; an n-gram starting at byte b of the
    // padded token is spelled "#" + slice: put the '#' at b - 1 for the call.
    s.gram.assign("# ");
    s.gram.append(t);
    s.gram.push_back(' ');
    s.starts.clear();
    for (std::size_t b = 1; b < s.gram.size(); ++b) {
      if ((static_cast<unsigned char>(s.gram[b]) & 0xC0u) != 0x80u) s.starts.push_back(static_cast<std::uint32_t>(b));
    }
    const std::size_t m = s.starts.size();  // code points of the padded token
    s.starts.push_back(static_cast<std::uint32_t>(s.gram.size()));
    auto emit = [&](std::size_t first, std::size_t n) {
      const std::size_t b = s.starts[first], e = s.starts[first + n];
      const char saved = s.gram[b - 1];
      s.gram[b - 1] = '#';
      fn(std::string_view(s.gram.data() + b - 1, e - b + 1));
      s.gram[b - 1] = saved;
    };
    if (m < n_min) {  // shorter than every n: the whole padded token, once
      emit(0, m);
      continue;
    }
    for (std::size_t n = n_min; n <= std::min(n_max, m); ++n) {
      for (std::size_t i = 0; i + n <= m; ++i) emit(i, n);
    }
  }
}

}  // namespace pegasos
