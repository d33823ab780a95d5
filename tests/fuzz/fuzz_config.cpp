// libFuzzer target: a training configuration file. The bytes go through the
// same JSON parse as `pegasos train --config` (comments allowed), then
// config_from_json; inputs without a '{' are also tried as one `--set`
// override. JSON syntax errors and InputError/ConfigError are expected.
#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "drivers/config.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  pegasos_fuzz_single_thread();
  const std::string_view text = as_text(data, size);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text, nullptr, true, /*ignore_comments=*/true);
  } catch (const nlohmann::json::exception&) {  // what load_train_config turns into ConfigError
    j = nlohmann::json::object();
    try {
      auto [key, value] = pegasos::parse_override(std::string(text));
      j[key] = value;
    } catch (const pegasos::InputError&) {
      return 0;
    }
  }
  try {
    const pegasos::TrainConfig c = pegasos::config_from_json(j, "fuzz.json");
    (void)c.resolved.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } catch (const pegasos::InputError&) {
  }
  return 0;
}
