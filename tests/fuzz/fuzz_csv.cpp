// libFuzzer target: the CSV reader on arbitrary bytes. The first byte picks
// the label column (first, last, second, or by header name "label").
#include <cmath>

#include "core/dataset.hpp"
#include "core/errors.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  pegasos_fuzz_single_thread();
  if (size == 0) return 0;
  const std::uint8_t flags = data[0];
  pegasos::ReadOptions options;
  switch (flags & 3) {
    case 0: options.label_column = 0; break;
    case 1: options.label_column = -1; break;
    case 2: options.label_column = 1; break;
    case 3: options.label_column_name = "label"; break;
  }
  try {
    pegasos::Dataset ds = pegasos::parse_csv(as_text(data + 1, size - 1), "fuzz.csv", options);
    if (flags & 4) ds.normalize_rows();
    for (std::size_t i = 0; i < ds.size(); ++i) {
      const pegasos::RowView r = ds.row(i);
      for (std::uint32_t j = 0; j < r.nnz; ++j) {
        if (r.indices[j] >= ds.dimension || (j > 0 && r.indices[j] <= r.indices[j - 1]) || !std::isfinite(r.values[j])) {
          __builtin_trap();
        }
      }
      if (r.label < 0 || r.label >= static_cast<int>(ds.classes.size())) __builtin_trap();
    }
  } catch (const pegasos::InputError&) {
  }
  return 0;
}
