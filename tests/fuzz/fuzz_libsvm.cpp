// libFuzzer target: the LIBSVM/SVMlight reader on arbitrary bytes.
// The first byte picks reader options (labels required or not, a small
// max_feature_index, row normalisation); the rest is the file.
#include <cassert>
#include <cmath>

#include "core/dataset.hpp"
#include "core/errors.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  pegasos_fuzz_single_thread();
  if (size == 0) return 0;
  const std::uint8_t flags = data[0];
  pegasos::ReadOptions options;
  options.require_labels = (flags & 1) == 0;
  if (flags & 2) options.max_feature_index = 1000;
  if (flags & 4) options.max_feature_index = (std::uint64_t{1} << 32) - 1;
  try {
    pegasos::Dataset ds = pegasos::parse_libsvm(as_text(data + 1, size - 1), "fuzz.svm", options);
    if (flags & 8) ds.normalize_rows();
    // Invariants every consumer relies on.
    assert(ds.row_ptr.size() == ds.size() + 1);
    for (std::size_t i = 0; i < ds.size(); ++i) {
      const pegasos::RowView r = ds.row(i);
      for (std::uint32_t j = 0; j < r.nnz; ++j) {
        if (r.indices[j] >= ds.dimension || (j > 0 && r.indices[j] <= r.indices[j - 1]) || !std::isfinite(r.values[j])) {
          __builtin_trap();
        }
      }
      if (r.label >= static_cast<int>(ds.classes.size())) __builtin_trap();
    }
  } catch (const pegasos::InputError&) {
  }
  return 0;
}
