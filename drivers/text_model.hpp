// Text models from parts, and back: a numeric linear model trained on the
// rows of a fitted text featurizer (the Python door's Pipeline(TextVectorizer,
// PegasosClassifier), README § Python) joined with that featurizer makes the
// model file `pegasos train` writes on raw text with the same settings — the
// featurizer stored as `features`, the `features` setting echoed in
// `settings`, the reader settings (`data`: format, text_field, label_field,
// normalize) those the classifier was trained with — so `pegasos predict`
// reads JSONL, TSV, folders and single documents with it.
#pragma once

#include <nlohmann/json.hpp>

#include "drivers/any_model.hpp"
#include "text/featurizer.hpp"

namespace pegasos {

// `numeric` (a linear model without a featurizer) with `featurizer` inside.
// `features_setting` is the `features` setting as a user writes it (an object
// of options, or null for the defaults), echoed in the model's settings; it
// must describe the featurizer's options. When the model's settings already
// echo an equivalent `features` object (a model taken apart by
// detach_text_featurizer), that echo is kept. Throws InputError when the
// parts do not fit: a kernel model, a model that has a featurizer already, an
// unfitted featurizer, a dimension other than the featurizer's, a model whose
// reader settings read numeric data (format libsvm / csv), a setting that is
// not the featurizer's options.
AnyModel attach_text_featurizer(const AnyModel& numeric, const TextFeaturizer& featurizer,
                                const nlohmann::json& features_setting);

// The numeric model inside a text model (the featurizer removed; the settings
// and reader settings kept). A numeric model comes back as it is.
AnyModel detach_text_featurizer(const AnyModel& model);

}  // namespace pegasos
