#include "drivers/text_model.hpp"

#include <string>

#include "core/errors.hpp"
#include "io/model_json.hpp"
#include "io/model_sections_json.hpp"
#include "text/options.hpp"

namespace pegasos {
namespace {

// The options a `features` setting stands for (null: the defaults), as JSON.
nlohmann::json options_of_setting(const nlohmann::json& setting) {
  if (setting.is_null()) return text_options_to_json(TextOptions{});
  if (!setting.is_object()) throw InputError("features: expected an object of text featurisation settings or null");
  return text_options_to_json(text_options_from_json(setting, "features"));
}

}  // namespace

AnyModel attach_text_featurizer(const AnyModel& numeric, const TextFeaturizer& featurizer,
                                const nlohmann::json& features_setting) {
  if (!numeric.linear) {
    throw InputError("a kernel model cannot hold a text featurizer (kernel objectives train on numeric features only)");
  }
  const Model& m = *numeric.linear;
  if (!m.features.empty()) throw InputError("the model holds a text featurizer already");
  if (featurizer.needs_fit() && !featurizer.fitted()) throw InputError("the text featurizer is not fitted");
  const std::uint32_t input_dimension = m.feature_map ? m.feature_map->input_dimension : m.dimension;
  if (input_dimension != featurizer.dimension()) {
    throw InputError("the classifier was trained on " + std::to_string(input_dimension) +
                     " features but the text featurizer makes " + std::to_string(featurizer.dimension()) +
                     ": it was not trained on this featurizer's rows");
  }
  nlohmann::json data = json_object_of(m.data);
  bool known = false;
  const std::string format = data.value("format", "auto");
  const DataFormat read_as = parse_data_format(format, &known);
  if (!known || read_as == DataFormat::kLibsvm || read_as == DataFormat::kCsv) {
    throw InputError("format: the classifier's settings read data as '" + format +
                     "'; a text model reads raw text (format auto, jsonl, text_tsv or text_dir)");
  }
  const nlohmann::json options = text_options_to_json(featurizer.options());
  if (options_of_setting(features_setting) != options) {
    throw InputError("features: the setting " + features_setting.dump() +
                     " is not the text featurizer's options " + options.dump() +
                     " (were its parameters changed after it was fitted?)");
  }
  nlohmann::json settings = json_object_of(m.settings);
  const auto echoed = settings.find("features");
  bool keep_echo = false;
  if (echoed != settings.end() && echoed->is_object()) {
    try {
      keep_echo = options_of_setting(*echoed) == options;
    } catch (const InputError&) {  // an echo this pegasos cannot read: replaced
    }
  }
  if (!keep_echo) settings["features"] = features_setting;
  AnyModel out = numeric;
  out.linear->settings = json_object_text(settings);
  out.linear->features = features_text(featurizer.to_json());
  return out;
}

AnyModel detach_text_featurizer(const AnyModel& model) {
  AnyModel out = model;
  if (out.linear) out.linear->features.clear();
  return out;
}

}  // namespace pegasos
