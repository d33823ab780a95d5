// libFuzzer target: the raw-text corpus readers (text/corpus.hpp: JSONL and
// TSV) and the hashing featurizer on what they accept. Extend it when the
// text API grows (vocabulary mode, directory corpora).
#include "core/errors.hpp"
#include "tests/fuzz/fuzz_common.hpp"
#include "text/corpus.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  pegasos_fuzz_single_thread();
  if (size == 0) return 0;
  const std::uint8_t flags = data[0];
  pegasos::TextReadOptions options;
  options.require_labels = (flags & 1) == 0;
  const std::string_view bytes = as_text(data + 1, size - 1);
  try {
    const pegasos::TextCorpus corpus = (flags & 2) ? pegasos::parse_tsv_corpus(bytes, "fuzz.tsv", options)
                                                   : pegasos::parse_jsonl_corpus(bytes, "fuzz.jsonl", options);
    if (corpus.labels.size() != corpus.texts.size()) __builtin_trap();
    pegasos::TextOptions text_options;
    text_options.hash_bits = 12;
    text_options.idf = (flags & 4) != 0;
    text_options.char_ngrams_min = (flags & 8) ? 2 : 0;
    text_options.char_ngrams_max = (flags & 8) ? 4 : 0;
    pegasos::TextFeaturizer featurizer(text_options);
    if (featurizer.needs_fit()) featurizer.fit(corpus.texts);
    const pegasos::Dataset ds = pegasos::featurize_corpus(featurizer, corpus);
    if (ds.size() != corpus.size()) __builtin_trap();
  } catch (const pegasos::InputError&) {
  }
  return 0;
}
