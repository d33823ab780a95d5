// Text featurization: tokenizer, n-grams, header stripping, hashing
// stability, tf-idf on a hand-computed corpus, pruning, serialisation, corpus
// readers and determinism. Expected values are written out by hand (or, for
// the hashing trick, by a brute-force loop over text_terms in this file).
#include <sys/stat.h>

#include <stdlib.h>
#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <tbb/info.h>
#include <tbb/task_arena.h>

#include "core/dataset.hpp"
#include "core/errors.hpp"
#include "core/random.hpp"
#include "tests/test_util.hpp"
#include "text/corpus.hpp"
#include "text/featurizer.hpp"
#include "text/options.hpp"
#include "text/tokenizer.hpp"

namespace {

using Catch::Contains;
using nlohmann::json;
using pegasos::InputError;
using pegasos::SparseRows;
using pegasos::TextCorpus;
using pegasos::TextFeaturizer;
using pegasos::TextMode;
using pegasos::TextOptions;
using pegasos::TermFrequency;
using Strings = std::vector<std::string>;
namespace fs = std::filesystem;
using testutil::TempDir;
using testutil::write_text;
using testutil::write_gzip;
using testutil::bits;
using testutil::case_seed;

Strings tokens(const std::string& doc, const TextOptions& options = {}) {
  std::string scratch;
  Strings out;
  for (std::string_view t : pegasos::tokenize(doc, options, scratch)) out.emplace_back(t);
  return out;
}

TextOptions raw_counts(TextOptions o = {}) {
  o.tf = TermFrequency::kRaw;
  o.idf = false;
  o.normalize = false;
  return o;
}

// One row of a CSR as (index, value) pairs.
std::vector<std::pair<std::uint32_t, float>> row(const SparseRows& rows, std::size_t i) {
  std::vector<std::pair<std::uint32_t, float>> out;
  for (std::uint64_t e = rows.row_ptr[i]; e < rows.row_ptr[i + 1]; ++e) out.emplace_back(rows.indices[e], rows.values[e]);
  return out;
}

void require_identical(const SparseRows& a, const SparseRows& b) {
  REQUIRE(a.row_ptr == b.row_ptr);
  REQUIRE(a.indices == b.indices);
  REQUIRE(bits(a.values) == bits(b.values));
}

// Structural contract of every transform output.
void require_well_formed(const SparseRows& rows, std::uint32_t dimension) {
  REQUIRE(rows.indices.size() == rows.nnz());
  REQUIRE(rows.values.size() == rows.nnz());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (std::uint64_t e = rows.row_ptr[i]; e < rows.row_ptr[i + 1]; ++e) {
      REQUIRE(rows.indices[e] < dimension);
      REQUIRE(rows.values[e] != 0.0f);
      REQUIRE(std::isfinite(rows.values[e]));
      if (e > rows.row_ptr[i]) REQUIRE(rows.indices[e - 1] < rows.indices[e]);
    }
  }
}

// Random documents over a small vocabulary (so terms repeat and collide).
Strings random_docs(std::size_t n, std::uint64_t seed, std::size_t max_words = 400) {
  static const char* kWords[] = {"free", "money", "now", "click", "here", "meeting", "tomorrow", "report",
                                 "the", "a", "of", "Viagra", "naïve", "café", "deal", "offer", "linux",
                                 "kernel", "patch", "2002", "x86", "win", "prize", "unsubscribe"};
  static const char* kGlue[] = {" ", " ", " ", ", ", ". ", "\n", "!", " -- ", "\t"};
  pegasos::Rng rng(seed);
  Strings docs;
  for (std::size_t i = 0; i < n; ++i) {
    std::string d;
    const std::size_t words = rng.below(max_words);
    for (std::size_t w = 0; w < words; ++w) {
      d += kWords[rng.below(std::size(kWords))];
      d += kGlue[rng.below(std::size(kGlue))];
    }
    docs.push_back(std::move(d));
  }
  return docs;
}

// ---------------------------------------------------------------------------
// Tokenizer and n-grams.

TEST_CASE("tokens are maximal runs of letters and digits, lowercased", "[text]") {
  TextOptions o;
  CHECK(tokens("Hello, World! 42 times-2", o) == Strings{"hello", "world", "42", "times", "2"});
  CHECK(tokens("don't stop", o) == Strings{"don", "t", "stop"});
  CHECK(tokens("", o).empty());
  CHECK(tokens(" \t\n.,;", o).empty());
  o.lowercase = false;
  CHECK(tokens("Hello WORLD", o) == Strings{"Hello", "WORLD"});
}

TEST_CASE("UTF-8 letters stay inside tokens, Unicode punctuation separates, only ASCII is lowercased", "[text]") {
  // é = C3 A9, ï = C3 AF, em dash = E2 80 94, NBSP = C2 A0, curly quote = E2 80 99.
  CHECK(tokens("Caf\xC3\xA9 na\xC3\xAFve\xE2\x80\x94test") == Strings{"caf\xC3\xA9", "na\xC3\xAFve", "test"});
  CHECK(tokens("CAF\xC3\x89") == Strings{"caf\xC3\x89"});
  CHECK(tokens("a\xC2\xA0" "b don\xE2\x80\x99t") == Strings{"a", "b", "don", "t"});
  CHECK(tokens("\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E") == Strings{"\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E"});  // 日本語
}

TEST_CASE("invalid UTF-8 and NUL bytes separate tokens and never crash", "[text]") {
  CHECK(tokens("ab\xFF\xFE" "cd") == Strings{"ab", "cd"});
  CHECK(tokens(std::string("a\0b", 3)) == Strings{"a", "b"});
  CHECK(tokens("x\xC0\xAFy") == Strings{"x", "y"});          // overlong '/'
  CHECK(tokens("x\xED\xA0\x80y") == Strings{"x", "y"});      // UTF-16 surrogate
  CHECK(tokens("x\x80\xBFy") == Strings{"x", "y"});          // stray continuation bytes
  CHECK(tokens("end\xE2\x82") == Strings{"end"});            // truncated sequence at the end
  CHECK(tokens("\xF4\x90\x80\x80z") == Strings{"z"});        // above U+10FFFF

  pegasos::Rng rng(case_seed(1));
  TextOptions o;
  o.char_ngrams_min = 1;
  o.char_ngrams_max = 3;
  o.word_ngrams = 2;
  for (int trial = 0; trial < 300; ++trial) {
    std::string doc(rng.below(300), '\0');
    for (char& c : doc) c = static_cast<char>(rng.below(256));
    for (const std::string& t : tokens(doc)) {
      REQUIRE(!t.empty());
      REQUIRE(t.size() <= pegasos::kMaxTokenBytes);
      REQUIRE_NOTHROW(json(t).dump());  // tokens are valid UTF-8
    }
    for (const std::string& t : pegasos::text_terms(doc, o)) REQUIRE_NOTHROW(json(t).dump());
  }
}

TEST_CASE("tokens longer than kMaxTokenBytes are dropped", "[text]") {
  const std::string ok(pegasos::kMaxTokenBytes, 'a');
  const std::string too_long(pegasos::kMaxTokenBytes + 1, 'b');
  CHECK(tokens("x " + ok + " " + too_long + " y") == Strings{"x", ok, "y"});
}

TEST_CASE("stop words are removed before n-grams are formed", "[text]") {
  CHECK(pegasos::is_stop_word("the"));
  CHECK(pegasos::is_stop_word("don"));
  CHECK_FALSE(pegasos::is_stop_word("spam"));
  CHECK_FALSE(pegasos::is_stop_word(""));
  TextOptions o;
  o.stop_words = true;
  o.word_ngrams = 2;
  CHECK(tokens("The cat sat on the mat", o) == Strings{"cat", "sat", "mat"});
  CHECK(pegasos::text_terms("The cat sat on the mat", o) == Strings{"cat", "sat", "mat", "cat sat", "sat mat"});
}

TEST_CASE("word n-grams: unigrams first, then bigrams, trigrams", "[text]") {
  TextOptions o;
  o.word_ngrams = 3;
  CHECK(pegasos::text_terms("a b, c d", o) == Strings{"a", "b", "c", "d", "a b", "b c", "c d", "a b c", "b c d"});
  o.word_ngrams = 2;
  CHECK(pegasos::text_terms("single", o) == Strings{"single"});
}

TEST_CASE("character n-grams over space-padded tokens, in code points", "[text]") {
  TextOptions o;
  o.word_ngrams = 0;
  o.char_ngrams_min = 3;
  o.char_ngrams_max = 4;
  // " abc " has 5 characters: three 3-grams, two 4-grams.
  CHECK(pegasos::text_terms("abc", o) == Strings{"# ab", "#abc", "#bc ", "# abc", "#abc "});
  // " a " has 3 characters: one 3-gram, no 4-gram.
  CHECK(pegasos::text_terms("a", o) == Strings{"# a "});
  // Shorter than every n: the padded token once.
  o.char_ngrams_min = 4;
  o.char_ngrams_max = 5;
  CHECK(pegasos::text_terms("a", o) == Strings{"# a "});
  // é is one character (two bytes).
  o.char_ngrams_min = 2;
  o.char_ngrams_max = 2;
  CHECK(pegasos::text_terms("n\xC3\xA9", o) == Strings{"# n", "#n\xC3\xA9", "#\xC3\xA9 "});
  // Word and character terms together, words first.
  o.word_ngrams = 1;
  o.char_ngrams_min = 3;
  o.char_ngrams_max = 3;
  CHECK(pegasos::text_terms("ab cd", o) == Strings{"ab", "cd", "# ab", "#ab ", "# cd", "#cd "});
}

// ---------------------------------------------------------------------------
// Header stripping.

TEST_CASE("mail headers are dropped except the Subject and From values", "[text]") {
  const std::string mail =
      "From sender@example.com  Thu Aug 22 12:36:23 2002\n"
      "Return-Path: <bounce@lists.example.org>\n"
      "Received: from mail.example.org\n"
      "\tby relay (Postfix) with ESMTP\n"
      "Subject: Cheap pills\n"
      "  today only\n"
      "From: Bob <bob@example.com>\n"
      "X-Mailer: Outlook\n"
      "\n"
      "Body text. Subject: not a header here\n";
  CHECK(tokens(mail) == Strings{"cheap", "pills", "today", "only", "bob", "bob", "example", "com", "body", "text",
                                "subject", "not", "a", "header", "here"});
  TextOptions keep;
  keep.strip_headers = false;
  CHECK(tokens(mail, keep).size() > 30);
  // CRLF line ends, no mbox line.
  CHECK(tokens("SUBJECT: Hi\r\nX-Spam: yes\r\n\r\nbody\r\n") == Strings{"hi", "body"});
}

TEST_CASE("text that does not start with a complete header block is left alone", "[text]") {
  // First line is not "Name: value" (the name has a space).
  CHECK(tokens("Hello there: general\n\nKenobi") == Strings{"hello", "there", "general", "kenobi"});
  // Header-like lines but no empty line ends the block.
  CHECK(tokens("Note: buy now") == Strings{"note", "buy", "now"});
  CHECK(tokens("Title: x\nnot a header line\n\nbody") == Strings{"title", "x", "not", "a", "header", "line", "body"});
  // An mbox line without headers after it.
  CHECK(tokens("From me\n\nhello") == Strings{"from", "me", "hello"});
}

// ---------------------------------------------------------------------------
// Hashing.

TEST_CASE("hashed buckets and signs are fixed constants (stable across runs and machines)", "[text]") {
  // Computed once from XXH3-64 with kTextHashSeed; a change here silently
  // invalidates every saved hashing-mode model.
  CHECK(pegasos::kTextHashSeed == 0x5045474153u);
  auto h = pegasos::hash_term("spam", 20);
  CHECK(h.bucket == 533127u);
  CHECK(h.sign == -1);
  h = pegasos::hash_term("viagra", 20);
  CHECK(h.bucket == 412237u);
  CHECK(h.sign == 1);
  h = pegasos::hash_term("cheap pills", 20);
  CHECK(h.bucket == 957165u);
  CHECK(h.sign == -1);
  h = pegasos::hash_term("#spa", 20);
  CHECK(h.bucket == 897856u);
  CHECK(h.sign == -1);
  // Fewer bits keep the low bits of the same hash.
  CHECK(pegasos::hash_term("spam", 12).bucket == (533127u & 4095u));

  TextFeaturizer f(raw_counts());
  CHECK(f.dimension() == (1u << 20));
  const auto counts = f.term_counts("spam spam eggs viagra");
  using P = std::pair<std::uint32_t, double>;
  CHECK(counts == std::vector<P>{{98489u, -1.0}, {412237u, 1.0}, {533127u, -2.0}});  // eggs, viagra, spam
}

TEST_CASE("hash signs cancel: colliding terms of opposite sign sum to zero", "[text]") {
  // w0 and w70 share bucket 6 of 16 with opposite signs.
  const auto a = pegasos::hash_term("w0", 4), b = pegasos::hash_term("w70", 4);
  REQUIRE(a.bucket == 6u);
  REQUIRE(b.bucket == 6u);
  REQUIRE(a.sign == -b.sign);
  TextOptions o = raw_counts();
  o.hash_bits = 4;
  TextFeaturizer f(o);
  CHECK(f.term_counts("w0 w70").empty());
  CHECK(f.term_counts("w0 w70 w70") == std::vector<std::pair<std::uint32_t, double>>{{6u, static_cast<double>(b.sign)}});
  const SparseRows rows = f.transform(Strings{"w0 w70"});
  CHECK(rows.nnz() == 0);
  // Over many distinct terms the signs are balanced (the sum is a fixed
  // number since the hash is fixed; |sum| ~ sqrt(n) = 100).
  int sum = 0;
  for (int i = 0; i < 10000; ++i) sum += pegasos::hash_term("t" + std::to_string(i), 20).sign;
  CHECK(sum == -90);
}

TEST_CASE("hashing transform equals a brute-force map over text_terms", "[text]") {
  TextOptions o;
  o.hash_bits = GENERATE(3, 6, 20);
  o.word_ngrams = 2;
  o.tf = GENERATE(TermFrequency::kRaw, TermFrequency::kSublinear);
  o.idf = false;
  o.normalize = false;
  TextFeaturizer f(o);
  const Strings docs = random_docs(40, case_seed(2), 600);
  const SparseRows rows = f.transform(docs);
  require_well_formed(rows, f.dimension());
  for (std::size_t i = 0; i < docs.size(); ++i) {
    std::map<std::string, int> counts;
    for (const std::string& t : pegasos::text_terms(docs[i], o)) ++counts[t];
    std::map<std::uint32_t, double> expected;
    for (const auto& [term, c] : counts) {
      const auto h = pegasos::hash_term(term, o.hash_bits);
      const double tf = o.tf == TermFrequency::kRaw ? c : 1.0 + std::log(static_cast<double>(c));
      expected[h.bucket] += h.sign * tf;
    }
    std::vector<std::pair<std::uint32_t, float>> want;
    for (const auto& [b, v] : expected) {
      if (std::abs(v) > 1e-9) want.emplace_back(b, static_cast<float>(v));
    }
    const auto got = row(rows, i);
    REQUIRE(got.size() == want.size());
    for (std::size_t k = 0; k < got.size(); ++k) {
      REQUIRE(got[k].first == want[k].first);
      REQUIRE(got[k].second == Approx(want[k].second).epsilon(1e-6));
    }
  }
}

// ---------------------------------------------------------------------------
// Vocabulary, df, idf, tf, L2 on a corpus small enough to do by hand.
//
//   d1 = "apple banana apple"                 n = 3 documents
//   d2 = "banana cherry"                      df: apple 1, banana 3, cherry 2, date 1
//   d3 = "banana cherry cherry cherry date"   cf: apple 2, banana 3, cherry 4, date 1
//
// smooth idf = ln((1 + n) / (1 + df)) + 1:
//   apple = date = ln(4/2) + 1,  banana = ln(4/4) + 1 = 1,  cherry = ln(4/3) + 1.

const Strings kToy = {"apple banana apple", "banana cherry", "banana cherry cherry cherry date"};

TEST_CASE("vocabulary mode: sorted vocabulary, smooth idf, sublinear tf, L2", "[text]") {
  TextOptions o;
  o.mode = TextMode::kVocabulary;
  TextFeaturizer f(o);
  const SparseRows rows = f.fit_transform(kToy);
  REQUIRE(f.vocabulary() == Strings{"apple", "banana", "cherry", "date"});
  REQUIRE(f.dimension() == 4u);
  REQUIRE(f.documents() == 3u);
  const double idf_apple = std::log(2.0) + 1, idf_banana = 1.0, idf_cherry = std::log(4.0 / 3.0) + 1;
  CHECK(f.idf(0) == Approx(idf_apple));
  CHECK(f.idf(1) == Approx(idf_banana));
  CHECK(f.idf(2) == Approx(idf_cherry));
  CHECK(f.idf(3) == Approx(idf_apple));
  require_well_formed(rows, 4);

  // d1: apple tf = 1 + ln 2, banana tf = 1.
  const double a1 = (1 + std::log(2.0)) * idf_apple, b1 = 1.0 * idf_banana;
  const double n1 = std::sqrt(a1 * a1 + b1 * b1);
  auto r1 = row(rows, 0);
  REQUIRE(r1.size() == 2);
  CHECK(r1[0].first == 0u);
  CHECK(r1[0].second == Approx(a1 / n1).epsilon(1e-6));
  CHECK(r1[1].first == 1u);
  CHECK(r1[1].second == Approx(b1 / n1).epsilon(1e-6));
  // d3: banana 1, cherry tf = 1 + ln 3, date 1.
  const double b3 = idf_banana, c3 = (1 + std::log(3.0)) * idf_cherry, d3 = idf_apple;
  const double n3 = std::sqrt(b3 * b3 + c3 * c3 + d3 * d3);
  auto r3 = row(rows, 2);
  REQUIRE(r3.size() == 3);
  CHECK(r3[0] == std::pair<std::uint32_t, float>{1u, r3[0].second});
  CHECK(r3[0].second == Approx(b3 / n3).epsilon(1e-6));
  CHECK(r3[1].first == 2u);
  CHECK(r3[1].second == Approx(c3 / n3).epsilon(1e-6));
  CHECK(r3[2].first == 3u);
  CHECK(r3[2].second == Approx(d3 / n3).epsilon(1e-6));
  double sq = 0;
  for (const auto& e : r3) sq += double(e.second) * e.second;
  CHECK(sq == Approx(1.0).epsilon(1e-6));

  // Terms outside the vocabulary are ignored.
  const SparseRows unseen = f.transform(Strings{"kiwi apple KIWI", "kiwi"});
  CHECK(row(unseen, 0) == std::vector<std::pair<std::uint32_t, float>>{{0u, 1.0f}});
  CHECK(row(unseen, 1).empty());
}

TEST_CASE("raw tf without idf or normalisation gives plain counts", "[text]") {
  TextOptions o = raw_counts();
  o.mode = TextMode::kVocabulary;
  TextFeaturizer f(o);
  const SparseRows rows = f.fit_transform(kToy);
  CHECK(row(rows, 0) == std::vector<std::pair<std::uint32_t, float>>{{0u, 2.0f}, {1u, 1.0f}});
  CHECK(row(rows, 2) == std::vector<std::pair<std::uint32_t, float>>{{1u, 1.0f}, {2u, 3.0f}, {3u, 1.0f}});
  CHECK(f.idf(2) == 1.0);
  CHECK(f.term_counts("cherry apple cherry") == std::vector<std::pair<std::uint32_t, double>>{{0u, 1.0}, {2u, 2.0}});
}

TEST_CASE("min_df, max_df and max_features prune the vocabulary", "[text]") {
  TextOptions o;
  o.mode = TextMode::kVocabulary;
  auto vocabulary = [&](const TextOptions& options) {
    TextFeaturizer f(options);
    f.fit(kToy);
    return f.vocabulary();
  };
  o.min_df = 2;
  CHECK(vocabulary(o) == Strings{"banana", "cherry"});
  o.min_df = 1;
  o.max_df = 0.9;  // at most 2.7 of 3 documents: banana (3) goes
  CHECK(vocabulary(o) == Strings{"apple", "cherry", "date"});
  o.max_df = 1.0;
  o.max_features = 2;  // by total count: cherry 4, banana 3
  CHECK(vocabulary(o) == Strings{"banana", "cherry"});
  o.max_features = 3;  // apple (2) next
  CHECK(vocabulary(o) == Strings{"apple", "banana", "cherry"});
  o.max_features = 0;
  o.min_df = 4;
  TextFeaturizer f(o);
  CHECK_THROWS_WITH(f.fit(kToy), Contains("no term is left after pruning") && Contains("min_df = 4"));
  CHECK_THROWS_AS(f.fit(Strings{}), InputError);
}

TEST_CASE("hashing mode with idf counts document frequency per bucket", "[text]") {
  TextFeaturizer f;  // defaults: hashing, 2^20 buckets, sublinear tf, idf, l2
  REQUIRE(f.needs_fit());
  CHECK_THROWS_AS(f.transform(kToy), std::logic_error);
  f.fit(kToy);
  const auto apple = pegasos::hash_term("apple", 20).bucket, banana = pegasos::hash_term("banana", 20).bucket,
             cherry = pegasos::hash_term("cherry", 20).bucket, kiwi = pegasos::hash_term("kiwi", 20).bucket;
  CHECK(f.idf(apple) == Approx(std::log(2.0) + 1));
  CHECK(f.idf(banana) == Approx(1.0));
  CHECK(f.idf(cherry) == Approx(std::log(4.0 / 3.0) + 1));
  CHECK(f.idf(kiwi) == Approx(std::log(4.0) + 1));  // never seen: df = 0
  const SparseRows rows = f.transform(Strings{"banana"});
  CHECK(row(rows, 0) == std::vector<std::pair<std::uint32_t, float>>{{banana, -1.0f}});  // sign of "banana" is -1

  TextOptions stateless;
  stateless.idf = false;
  TextFeaturizer g(stateless);
  CHECK_FALSE(g.needs_fit());
  CHECK(g.transform(Strings{"banana"}).nnz() == 1);  // no fit needed
}

// ---------------------------------------------------------------------------
// Serialisation.

TEST_CASE("to_json -> text -> from_json reproduces transform bit for bit", "[text]") {
  TextOptions o;
  const int variant = GENERATE(0, 1, 2, 3);
  if (variant == 1) {
    o.mode = TextMode::kVocabulary;
    o.word_ngrams = 2;
    o.char_ngrams_min = 2;
    o.char_ngrams_max = 4;
    o.min_df = 2;
  } else if (variant == 2) {
    o.hash_bits = 12;
    o.stop_words = true;
    o.tf = TermFrequency::kRaw;
  } else if (variant == 3) {
    o.mode = TextMode::kVocabulary;
    o.idf = false;
    o.normalize = false;
    o.lowercase = false;
    o.strip_headers = false;
  }
  const Strings train = random_docs(60, case_seed(3), 80);
  const Strings test = random_docs(30, case_seed(4), 80);
  TextFeaturizer f(o);
  f.fit(train);
  const std::string text = f.to_json().dump(1);
  const TextFeaturizer g = TextFeaturizer::from_json(json::parse(text), "feat.json");
  CHECK(g.dimension() == f.dimension());
  CHECK(g.vocabulary() == f.vocabulary());
  CHECK(g.to_json() == f.to_json());
  require_identical(f.transform(test), g.transform(test));
  const TextFeaturizer copy = g;  // the copy rebuilds its lookup table
  require_identical(f.transform(test), copy.transform(test));
}

TEST_CASE("from_json names the offending field", "[text]") {
  TextOptions o;
  o.mode = TextMode::kVocabulary;
  TextFeaturizer f(o);
  f.fit(kToy);
  const json good = f.to_json();
  auto error = [](const json& j) -> std::string {
    try {
      TextFeaturizer::from_json(j, "m.json", "/text");
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  };
  json j = good;
  j.erase("options");
  CHECK(error(j) == "m.json: /text/options: missing field");
  j = good;
  j["options"]["word_ngrams"] = "two";
  CHECK_THAT(error(j), Contains("m.json: /text/options/word_ngrams: expected an integer"));
  j = good;
  j["options"]["typo"] = 1;
  CHECK_THAT(error(j), Contains("/text/options/typo: unknown text option"));
  j = good;
  j["options"]["char_ngrams_min"] = 3;  // without char_ngrams_max
  CHECK_THAT(error(j), Contains("/text/options/char_ngrams_max: set both"));
  j = good;
  j["vocabulary"][1] = "aardvark";
  CHECK_THAT(error(j), Contains("/text/vocabulary/1: term \"aardvark\" is out of order"));
  j = good;
  j["idf"].erase(0);
  CHECK_THAT(error(j), Contains("/text/idf: expected an array of 4 numbers"));
  j = good;
  j["idf"][2] = -1;
  CHECK_THAT(error(j), Contains("/text/idf/2: expected a finite positive number"));
  j = good;
  j["dimension"] = 5;
  CHECK_THAT(error(j), Contains("/text/dimension: expected 4"));
  j = good;
  j["format_version"] = 99;
  CHECK_THAT(error(j), Contains("/text/format_version: version 99 is newer"));

  TextFeaturizer h;
  h.fit(kToy);
  const json hashed = h.to_json();
  j = hashed;
  j["hash"]["seed"] = 1;
  CHECK_THAT(error(j), Contains("/text/hash/seed"));
  j = hashed;
  j["options"]["hash_bits"] = 40;
  CHECK_THAT(error(j), Contains("/text/options/hash_bits: expected an integer in 1..26"));
  j = hashed;
  j["idf"]["indices"][0] = 1u << 20;
  CHECK_THAT(error(j), Contains("/text/idf/indices/0: bucket 1048576 is out of order or outside"));
  CHECK_THAT(error(json::array()), Contains("m.json: /text: expected a text featurizer object"));
}

TEST_CASE("invalid options are rejected with the key, ignored ones are reported", "[text]") {
  auto error_key = [](TextOptions o) {
    auto e = pegasos::text_options_error(o);
    return e ? e->first : std::string("none");
  };
  TextOptions o;
  CHECK(error_key(o) == "none");
  o.hash_bits = 27;
  CHECK(error_key(o) == "hash_bits");
  o = {};
  o.word_ngrams = 0;
  CHECK(error_key(o) == "word_ngrams");
  o.char_ngrams_min = 5;
  o.char_ngrams_max = 3;
  CHECK(error_key(o) == "char_ngrams_min");
  o = {};
  o.max_df = 0;
  CHECK(error_key(o) == "max_df");
  o = {};
  o.min_df = 0;
  CHECK(error_key(o) == "min_df");
  CHECK_THROWS_AS(TextFeaturizer(o), pegasos::ConfigError);
  o = {};
  o.min_df = 3;
  using Conflicts = std::vector<std::pair<std::string, std::string>>;
  CHECK(pegasos::text_option_conflicts(o) == Conflicts{{"min_df", "only used with mode=vocabulary (mode is hashing)"}});
  o.mode = TextMode::kVocabulary;
  CHECK(pegasos::text_option_conflicts(o).empty());
  o.hash_bits = 12;
  REQUIRE(pegasos::text_option_conflicts(o).size() == 1);
  CHECK(pegasos::text_option_conflicts(o)[0].first == "hash_bits");
  CHECK(pegasos::parse_text_mode("vocabulary") == TextMode::kVocabulary);
  CHECK_FALSE(pegasos::parse_term_frequency("log").has_value());
}

// ---------------------------------------------------------------------------
// Readers.

TEST_CASE("JSONL corpus: fields, labels as strings or numbers, blank lines", "[text][io]") {
  const std::string text =
      "\xEF\xBB\xBF{\"text\": \"Buy now\", \"label\": \"spam\", \"id\": 1}\r\n"
      "\n"
      "{\"label\": -1.0, \"text\": \"hello\\u0000there\"}\n"
      "{\"text\": \"\", \"label\": 2}";
  const TextCorpus c = pegasos::parse_jsonl_corpus(text, "c.jsonl", {});
  CHECK(c.labels == Strings{"spam", "-1", "2"});
  CHECK(c.texts == Strings{"Buy now", std::string("hello\0there", 11), ""});
  pegasos::TextReadOptions named;
  named.text_field = "body";
  named.label_field = "y";
  const TextCorpus d = pegasos::parse_jsonl_corpus("{\"body\": \"x\", \"y\": \"ham\"}\n", "d.jsonl", named);
  CHECK(d.labels == Strings{"ham"});
  pegasos::TextReadOptions unlabeled;
  unlabeled.require_labels = false;
  CHECK(pegasos::parse_jsonl_corpus("{\"text\": \"x\"}\n", "u.jsonl", unlabeled).labels == Strings{""});
}

TEST_CASE("JSONL errors name file and line", "[text][io]") {
  auto error = [](const std::string& text, const pegasos::TextReadOptions& o = {}) -> std::string {
    try {
      pegasos::parse_jsonl_corpus(text, "c.jsonl", o);
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  };
  const std::string ok = "{\"text\": \"a\", \"label\": \"x\"}\n";
  CHECK_THAT(error(ok + "\n" + "{\"text\": \"b\", \"label\": \n"), Contains("c.jsonl:3:") && Contains("invalid JSON"));
  CHECK(error(ok + "{\"label\": \"x\"}\n") == "c.jsonl:2: missing text field \"text\"");
  CHECK(error(ok + ok + "{\"text\": 5, \"label\": \"x\"}\n") == "c.jsonl:3: field \"text\" must be a string, found number");
  CHECK(error("{\"text\": \"a\"}\n") == "c.jsonl:1: missing label field \"label\"");
  CHECK(error("{\"text\": \"a\", \"label\": true}\n") ==
        "c.jsonl:1: field \"label\" must be a string or a number, found boolean");
  CHECK(error("{\"text\": \"a\", \"label\": \"\"}\n") == "c.jsonl:1: empty label in field \"label\"");
  CHECK(error("[1, 2]\n") == "c.jsonl:1: expected a JSON object, found array");
  // A tab or a line break in a label would split the tab-separated output.
  CHECK(error(ok + "{\"text\": \"a\", \"label\": \"sp\\nam\"}\n") ==
        "c.jsonl:2: label 'sp?am' contains a control character (tab, line break, ...)");
  CHECK_THAT(error("{\"text\": \"a\", \"label\": \"h\\tam\"}\n"), Contains("c.jsonl:1:") && Contains("control character"));
  // Nesting deep enough to crash a recursive printer: refused before parsing.
  CHECK(error(ok + "{\"text\": \"a\", \"label\": \"x\", \"deep\": " + std::string(300, '[') + std::string(300, ']') + "}\n") ==
        "c.jsonl:2: invalid JSON: JSON nested deeper than 256 levels");
  const std::string bad_utf8 = error("{\"text\": \"\xFF\", \"label\": \"x\"}\n");
  CHECK_THAT(bad_utf8, Contains("c.jsonl:1:11: invalid JSON") && Contains("ill-formed UTF-8"));
  CHECK_NOTHROW(json(bad_utf8).dump());  // the quoted byte is masked
  CHECK(error("\n  \n") == "c.jsonl: no documents (the file is empty or has only blank lines)");
  // The first bad line wins even when later chunks also fail.
  std::string big;
  for (int i = 0; i < 40000; ++i) big += ok;
  CHECK(error(big + "{oops}\n" + big + "{also bad}\n").starts_with("c.jsonl:40001:"));
}

TEST_CASE("TSV corpus: label, tab, text with further tabs", "[text][io]") {
  const TextCorpus c = pegasos::parse_tsv_corpus("spam\tbuy\tnow\r\n\n+1\thello\nham\t\n", "c.tsv", {});
  CHECK(c.labels == Strings{"spam", "1", "ham"});
  CHECK(c.texts == Strings{"buy\tnow", "hello", ""});
  CHECK_THROWS_WITH(pegasos::parse_tsv_corpus("spam\tx\nno tab here\n", "c.tsv", {}),
                    "c.tsv:2: expected LABEL<TAB>TEXT: the line has no tab");
  CHECK_THROWS_WITH(pegasos::parse_tsv_corpus("\tx\n", "c.tsv", {}), "c.tsv:1:1: empty label before the tab");
}

TEST_CASE("read_text_corpus: format by name, gzip, one folder per class", "[text][io]") {
  TempDir dir;
  const std::string jsonl = "{\"text\": \"a b\", \"label\": \"ham\"}\n{\"text\": \"c\", \"label\": \"spam\"}\n";
  write_gzip(dir.file("c.jsonl.gz"), jsonl);
  TextCorpus c = pegasos::read_text_corpus(dir.file("c.jsonl.gz"), {});
  CHECK(c.labels == Strings{"ham", "spam"});
  CHECK(c.source == dir.file("c.jsonl.gz"));
  write_text(dir.file("c.txt"), "ham\ta b\n");
  CHECK(pegasos::read_text_corpus(dir.file("c.txt"), {}).texts == Strings{"a b"});
  write_text(dir.file("c.csv"), "ham,a b\n");
  CHECK_THROWS_WITH(pegasos::read_text_corpus(dir.file("c.csv"), {}), Contains("cannot tell the text format"));
  CHECK_THROWS_WITH(pegasos::read_text_corpus(dir.file("missing"), {}), dir.file("missing") + ": no such file or directory");

  const std::string root = dir.file("mail");
  write_text(root + "/spam/2.eml", "win");
  write_text(root + "/ham/b.eml", "second");
  write_text(root + "/ham/a.eml", "first");
  write_text(root + "/ham/.DS_Store", "junk");
  write_text(root + "/.git/config", "junk");
  write_text(root + "/README", "not a document");
  c = pegasos::read_text_corpus(root, {});
  CHECK(c.labels == Strings{"ham", "ham", "spam"});
  CHECK(c.texts == Strings{"first", "second", "win"});
  // What was skipped is said: the loose file (hidden ones are not news).
  REQUIRE(c.notes.size() == 1);
  CHECK_THAT(c.notes[0], Contains("1 file at the top level, outside the class folders, skipped (README)"));
  fs::create_directories(root + "/phish");
  c = pegasos::read_text_corpus(root, {});
  REQUIRE(c.notes.size() == 2);
  CHECK(c.notes[0] == root + "/phish: an empty class folder (no documents): class 'phish' is not in the data");
  fs::remove(root + "/phish");
  // A broken link and a FIFO in a class folder: skipped, and said.
  fs::create_symlink(root + "/nowhere", root + "/spam/z-link");
  REQUIRE(::mkfifo((root + "/spam/y-fifo").c_str(), 0600) == 0);
  c = pegasos::read_text_corpus(root, {});
  CHECK(c.texts == Strings{"first", "second", "win"});
  REQUIRE(c.notes.size() == 2);
  CHECK(c.notes[0] == root + "/spam: 2 entries that are not regular files skipped (y-fifo, ...)");
  fs::remove(root + "/spam/y-fifo");
  c = pegasos::read_text_corpus(root, {});
  REQUIRE(c.notes.size() == 2);
  CHECK(c.notes[0] == root + "/spam: 1 entry that is not a regular file skipped (z-link (a broken link))");
  fs::remove(root + "/spam/z-link");
  write_text(dir.file("flat/a.txt"), "one");
  write_text(dir.file("flat/b.txt"), "two");
  pegasos::TextReadOptions flat;
  flat.require_labels = false;
  CHECK(pegasos::read_text_corpus(dir.file("flat"), flat).notes.empty());  // a flat folder: every file is read
  fs::create_directories(dir.file("empty/ham"));
  CHECK_THROWS_WITH(pegasos::read_text_corpus(dir.file("empty"), {}), Contains("no documents"));

  // Binary files (NUL bytes) are not documents: named, exit 2.
  write_text(root + "/ham/c.bin", std::string("\x7f" "ELF\x02\x01\x01\0\0\0", 10));
  CHECK_THROWS_AS(pegasos::read_text_corpus(root, {}), InputError);
  CHECK_THROWS_WITH(pegasos::read_text_corpus(root, {}), root + "/ham/c.bin: binary data (NUL bytes), not a text document");
  pegasos::TextReadOptions unlabelled;
  unlabelled.require_labels = false;
  CHECK_THROWS_WITH(pegasos::read_text_corpus(root + "/ham/c.bin", unlabelled), Contains("c.bin: binary data (NUL bytes)"));
  CHECK(pegasos::read_text_corpus(root + "/ham/a.eml", unlabelled).texts == Strings{"first"});  // one document
}

TEST_CASE("make_text_dataset sets classes and labels like the LIBSVM reader", "[text]") {
  TextFeaturizer f(raw_counts());
  const TextCorpus c{{"spam", "ham", "spam", ""}, {"buy now", "meeting", "win", "unlabeled"}, "c.jsonl", {}, {}};
  const pegasos::Dataset ds = pegasos::featurize_corpus(f, c);
  CHECK(ds.classes == Strings{"ham", "spam"});
  CHECK(ds.labels == std::vector<int>{1, 0, 1, -1});
  CHECK(ds.dimension == f.dimension());
  CHECK(ds.size() == 4);
  CHECK(ds.row(0).nnz == 2);
  CHECK(ds.source == "c.jsonl");

  const pegasos::Dataset numeric =
      pegasos::make_text_dataset(f.transform(Strings{"a", "b", "c"}), Strings{"+1", "-1", "1.0"}, f.dimension(), "n");
  CHECK(numeric.classes == Strings{"-1", "1"});
  CHECK(numeric.labels == std::vector<int>{1, 0, 1});
  CHECK_THROWS_WITH(pegasos::make_text_dataset(f.transform(Strings{"a"}), Strings{"nan"}, f.dimension(), "n"),
                    Contains("n: document 1:"));
}

// ---------------------------------------------------------------------------
// Robustness and determinism.

TEST_CASE("arbitrary bytes featurize without errors in every mode", "[text]") {
  pegasos::Rng rng(case_seed(5));
  Strings docs;
  for (int i = 0; i < 100; ++i) {
    std::string d(rng.below(500), '\0');
    for (char& c : d) c = static_cast<char>(rng.below(4) == 0 ? rng.below(256) : 'a' + rng.below(6));
    docs.push_back(std::move(d));
  }
  docs.push_back(std::string(1000, '\0'));
  docs.push_back("");
  for (TextMode mode : {TextMode::kHashing, TextMode::kVocabulary}) {
    TextOptions o;
    o.mode = mode;
    o.word_ngrams = 2;
    o.char_ngrams_min = 2;
    o.char_ngrams_max = 3;
    TextFeaturizer f(o);
    const SparseRows rows = f.fit_transform(docs);
    require_well_formed(rows, f.dimension());
    REQUIRE_NOTHROW(f.to_json().dump());  // vocabulary terms are valid UTF-8
  }
}

TEST_CASE("fit and transform are identical with 1 thread and with all cores", "[text]") {
  const Strings docs = random_docs(400, case_seed(6), 300);
  for (TextMode mode : {TextMode::kHashing, TextMode::kVocabulary}) {
    TextOptions o;
    o.mode = mode;
    o.word_ngrams = 2;
    o.max_features = mode == TextMode::kVocabulary ? 200 : 0;
    auto run = [&](int threads) {
      tbb::task_arena arena(threads);
      return arena.execute([&] {
        TextFeaturizer f(o);
        SparseRows rows = f.fit_transform(docs);
        return std::make_pair(f.to_json().dump(), std::move(rows));
      });
    };
    const auto one = run(1);
    const auto many = run(std::max(2, tbb::info::default_concurrency()));
    CHECK(one.first == many.first);
    require_identical(one.second, many.second);
    REQUIRE(one.second.size() == docs.size());
  }
}

}  // namespace
