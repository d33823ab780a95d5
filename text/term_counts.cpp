#include "text/term_counts.hpp"

#include <algorithm>
#include <limits>

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include "core/errors.hpp"

namespace pegasos::text_detail {

TermCounts count_terms(std::span<const std::string> docs, const TextOptions& o) {
  const std::size_t n = docs.size();
  tbb::enumerable_thread_specific<TermCounts> locals;
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, kDocsPerBlock), [&](const auto& r) {
    TermCounts& L = locals.local();
    for (std::size_t i = r.begin(); i < r.end(); ++i) {
      L.s.tokens.clear();
      tokenize_prepared(prepare_text(docs[i], o, L.s.text), o, L.s.tokens);
      for_each_term(o, L.s, [&](std::string_view t) {
        const auto [id, inserted] = L.table.insert(t, term_hash(t));
        if (inserted) {
          L.df.push_back(0);
          L.cf.push_back(0);
          L.last_doc.push_back(std::numeric_limits<std::uint64_t>::max());
        }
        ++L.cf[id];
        if (L.last_doc[id] != i) {
          L.last_doc[id] = i;
          ++L.df[id];
        }
      });
    }
  });
  std::vector<TermCounts*> parts;
  for (TermCounts& L : locals) parts.push_back(&L);
  if (parts.empty()) throw InputError("text featurizer: no documents to fit");
  std::sort(parts.begin(), parts.end(),
            [](const TermCounts* a, const TermCounts* b) { return a->table.size() > b->table.size(); });
  TermCounts& all = *parts[0];
  for (std::size_t p = 1; p < parts.size(); ++p) {
    TermCounts& other = *parts[p];
    for (std::uint32_t id = 0; id < other.table.size(); ++id) {
      const auto [gid, inserted] = all.table.insert(other.table.term(id), other.table.hash(id));
      if (inserted) {
        all.df.push_back(0);
        all.cf.push_back(0);
      }
      all.df[gid] += other.df[id];
      all.cf[gid] += other.cf[id];
    }
    other = TermCounts{};
  }
  std::vector<std::uint64_t>().swap(all.last_doc);
  return std::move(all);
}

}  // namespace pegasos::text_detail
