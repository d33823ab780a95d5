// A fast JSON reader for model files and JSONL documents: JSON text to the
// same nlohmann::json value nlohmann::json::parse gives, for valid JSON.
//
// Model files are mostly long arrays of numbers (weights, dual variables)
// and, for hashed text, of short strings (the bucket terms); JSONL corpora
// are long strings. nlohmann's lexer copies every number's characters into a
// token string and converts it with strtod, and appends strings a character
// at a time: a 5 MB hashed spam model took about 0.1 s to parse here, more
// than its warm-started retraining, and reading SpamAssassin's 4702 messages
// was a fifth of a `train`. This reader scans numbers in place (integers
// by hand, others with fast_float, which rounds correctly as strtod does, so
// every double is the same) and strings a run of plain bytes at a time.
//
// It builds exactly what nlohmann's DOM parser builds: the same value types
// (a number without fraction or exponent is number_unsigned when it has no
// sign, number_integer when negative, and number_float where it does not fit
// 64 bits, as nlohmann's lexer decides), a later duplicate key replacing an
// earlier one, strings validated as UTF-8 by the same rules (RFC 3629) and
// \u escapes decoded with their surrogate pairs. It does not report errors:
// on anything that is not valid JSON, or that nlohmann would refuse (a float
// that overflows to infinity), it returns nothing, and the caller parses the
// text with nlohmann for the message (io/json_checks.hpp parse_model_file,
// text/corpus.cpp).
// Nesting is bounded by the caller (core/json_nesting.hpp checks it first).
#pragma once

#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

namespace pegasos::json_fast {

// Which object members to leave out, as nlohmann's parser callback would on a
// key event: `depth` is the number of containers open, the key's object
// included (1 for the top-level object's keys).
using SkipKey = bool (*)(int depth, std::string_view key);

std::optional<nlohmann::json> parse(std::string_view text, SkipKey skip = nullptr);

// parse()'s value, else nlohmann::json::parse's of the same text, `skip`
// acting as its parser callback on key events: the value either way, and
// nlohmann's exceptions (parse_error with its byte, out_of_range) for what
// the fast reader declined as invalid.
nlohmann::json parse_or_throw(std::string_view text, SkipKey skip = nullptr);

}  // namespace pegasos::json_fast
