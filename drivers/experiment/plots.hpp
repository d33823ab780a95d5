// Plots: gnuplot scripts + data files in DIR/plots. Each script writes
// prefix + NAME + ext (png with pngcairo/png, else svg); the runner passes a
// temporary prefix and renames the images so they appear atomically.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/metrics.hpp"
#include "drivers/experiment.hpp"

namespace pegasos::experiment_detail {

struct PlotFile {
  std::string script;               // name.gp
  std::vector<std::string> images;  // output base names
};

struct PlotSet {
  std::vector<PlotFile> scripts;
  std::vector<std::pair<std::string, std::string>> files;  // name -> content
};

// Objective (and error) traces of up to 12 runs: the final/test runs of
// repeat 0, else the cv runs of repeat 0, fold 0.
void trace_plots(const std::vector<nlohmann::json>& runs, PlotSet& out);

// Metric vs each swept setting, mean ± std over repeats (and folds).
void sweep_plots(const Experiment& e, const nlohmann::json& summary, PlotSet& out);

// ROC and precision-recall curves of the best model's test scores (binary).
void curve_plots(const std::vector<double>& scores, const std::vector<int>& labels, PlotSet& out);

// Confusion matrix heatmap (colour: fraction of the true class; text: count).
void confusion_plot(const Metrics& m, const std::vector<std::string>& classes, PlotSet& out);

// Writes the plot files; renders them when gnuplot is there. Returns the images made.
std::vector<std::string> write_plots(const PlotSet& plots, const std::string& dir, const std::string& gnuplot,
                                     bool quiet);

}  // namespace pegasos::experiment_detail
