// What a model's operating point (drivers/fit.hpp: lambda "auto",
// calibration, the stored threshold) means to the commands that show it:
// the lines `pegasos train` prints after training, and what `pegasos eval`
// adds to its report.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dataset.hpp"
#include "drivers/any_model.hpp"

namespace pegasos {

// "lambda auto: ...", "calibrated: ...", "threshold: ..." lines (each ending
// in '\n'); empty for a model without them.
std::string fit_summary(const AnyModel& model);

// eval on labelled `data` (labels in the model's classes) with the model's
// `scores`: with probabilities, log-loss and Brier score (and those of a plain
// sigmoid of the raw score, for comparison); with a stored threshold, the
// false-positive rate, recall and precision it gives here. Appends to the
// text report and the JSON report.
void report_operating_point(const AnyModel& model, const Dataset& data, const std::vector<double>& scores,
                            std::string& text, nlohmann::json& report);

}  // namespace pegasos
