// libFuzzer target: model files. Whatever model_from_json accepts must score
// a row without reading out of bounds, write back (model_to_json) and load
// again to the same weights. And the fast model-file reader (core/json_fast.hpp)
// must decline what nlohmann refuses and give nlohmann's value (the same text
// written back) where both accept.
#include <cstring>
#include <vector>

#include "core/errors.hpp"
#include "core/model.hpp"
#include "core/json_nesting.hpp"
#include "core/json_fast.hpp"
#include "io/model_json.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  pegasos_fuzz_single_thread();
  // Loading allocates dimension × outputs doubles whatever the file's size
  // (the weights are dense in memory); a few bytes can ask for gigabytes.
  // That is a known limit, not what this target looks for: skip such inputs.
  const auto j = nlohmann::json::parse(as_text(data, size), nullptr, /*allow_exceptions=*/false);
  // The fast reader's callers bound the nesting first (json_nesting), so does this.
  if (!pegasos::json_nesting::too_deep(as_text(data, size))) {
    if (const auto fast = pegasos::json_fast::parse(as_text(data, size))) {
      // Declining valid text is allowed (nlohmann then reads it); accepting
      // invalid text, or another value, is not. dump() tells unsigned,
      // integer and float numbers apart and writes doubles exactly.
      if (j.is_discarded() || fast->dump() != j.dump()) __builtin_trap();
    }
    // The scoring reader's skipped members, against nlohmann's callback.
    using Event = nlohmann::json::parse_event_t;
    const nlohmann::json::parser_callback_t keep = [](int depth, Event event, nlohmann::json& parsed) {
      if (event != Event::key) return true;
      if (depth == 1) return parsed != "duals";
      return depth != 2 || parsed != "bucket_terms";
    };
    const pegasos::json_fast::SkipKey skip = [](int depth, std::string_view key) {
      return (depth == 1 && key == "duals") || (depth == 2 && key == "bucket_terms");
    };
    if (const auto fast = pegasos::json_fast::parse(as_text(data, size), skip)) {
      const auto kept = nlohmann::json::parse(as_text(data, size), keep, /*allow_exceptions=*/false);
      if (kept.is_discarded() || fast->dump() != kept.dump()) __builtin_trap();
    }
  }
  if (j.is_object()) {
    const auto dim = j.find("dimension"), out = j.find("outputs");
    if (dim != j.end() && out != j.end() && dim->is_number_unsigned() && out->is_number_unsigned() &&
        dim->get<double>() * out->get<double>() > double(1 << 24)) {
      return 0;
    }
  }
  pegasos::Model m;
  try {
    m = pegasos::model_from_json(std::string(as_text(data, size)), "fuzz.json");
  } catch (const pegasos::InputError&) {
    return 0;
  }
  // A row touching the first features and one beyond the dimension.
  const std::uint32_t idx[3] = {0, 1, m.dimension};
  const float val[3] = {1.0f, -2.0f, 3.0f};
  const pegasos::RowView row{val, idx, 3, -1, 0};
  std::vector<double> scores(static_cast<std::size_t>(m.outputs));
  m.scores(row, scores.data());
  const int predicted = m.predict_class(scores.data());
  if (predicted < 0 || static_cast<std::size_t>(predicted) >= m.classes.size()) __builtin_trap();
  const pegasos::Model again = pegasos::model_from_json(pegasos::model_to_json(m), "again.json");  // must not throw
  if (again.weights != m.weights || again.bias != m.bias || again.classes != m.classes) __builtin_trap();
  return 0;
}
