#include "drivers/experiment/plots.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "core/output_file.hpp"
#include "drivers/experiment/common.hpp"

namespace pegasos::experiment_detail {
namespace {

namespace fs = std::filesystem;

const char* kPlotHeader =
    "# Written by `pegasos run`; plot with: gnuplot %s\n"
    "if (!exists(\"prefix\")) prefix = \"\"\n"
    "terms = \" \" . GPVAL_TERMINALS . \" \"\n"
    "if (strstrt(terms, \" pngcairo \") > 0) {\n"
    "  set terminal pngcairo size %d,%d noenhanced font \",10\"; ext = \".png\"\n"
    "} else {\n"
    "  if (strstrt(terms, \" png \") > 0) { set terminal png size %d,%d noenhanced; ext = \".png\" } "
    "else { set terminal svg size %d,%d noenhanced; ext = \".svg\" }\n"
    "}\n"
    "set grid\nset key outside right top\n";

std::string header(const std::string& script, int width = 900, int height = 600) {
  char buf[1024];
  std::snprintf(buf, sizeof buf, kPlotHeader, script.c_str(), width, height, width, height, width, height);
  return buf;
}

// A logarithmic x axis over [lo, hi] with one labelled tick on each power of
// ten ("1e-05", "0.0001", ...; minor ticks between), so that tick labels never
// run into each other.
std::string log_x_axis(double lo, double hi) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "set logscale x 10\nset xtics %g, 10 format \"%%g\"\nset mxtics 10\nset xrange [%.10g:%.10g]\n",
                std::pow(10.0, std::floor(std::log10(lo))), lo, hi);
  return buf;
}

std::string gp_string(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}

std::string num(double v) {
  if (std::isnan(v)) return "NaN";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

// Which runs to draw traces for: the final/test runs of repeat 0 (else the
// cv runs of repeat 0, fold 0), at most kMaxLines.
constexpr std::size_t kMaxLines = 12;

}  // namespace

void trace_plots(const std::vector<json>& runs, PlotSet& out) {
  std::vector<const json*> chosen;
  for (const char* phase : {"final", "test", "cv"}) {
    for (const json& r : runs) {
      if (r["phase"] == phase && r["repeat"] == 0 && (r["fold"].is_null() || r["fold"] == 0) && r.contains("trace") &&
          !r["trace"].empty() && chosen.size() < kMaxLines) {
        chosen.push_back(&r);
      }
    }
    if (!chosen.empty()) break;
  }
  if (chosen.empty()) return;
  std::string dat = "# epoch iterations objective test_error; one block per run\n";
  bool any_error = false;  // an error curve (not only the final point) to draw
  for (const json* r : chosen) {
    dat += "# run " + number_text((*r)["id"]) + ": " + params_text((*r)["params"]) + "\n";
    std::size_t errors = 0;
    for (const json& t : (*r)["trace"]) {
      const bool has = t.contains("test_error");
      errors += has;
      any_error = any_error || errors >= 2;
      dat += number_text(t["epoch"]) + " " + number_text(t["iterations"]) + " " + num(t["objective"].get<double>()) +
             " " + (has ? num(t["test_error"].get<double>()) : std::string("NaN")) + "\n";
    }
    dat += "\n\n";
  }
  out.files.emplace_back("trace.dat", dat);
  auto lines = [&](const std::string& columns) {
    std::string s;
    for (std::size_t i = 0; i < chosen.size(); ++i) {
      s += (i ? ", \\\n     '' " : "'trace.dat' ") + std::string("index ") + std::to_string(i) + " using " + columns +
           " with linespoints title " + gp_string(params_text((*chosen[i])["params"]));
    }
    return s + "\n";
  };
  std::string gp = header("trace.gp");
  gp +=
      "set output prefix . \"trace_objective\" . ext\nset multiplot layout 1,2 title \"training objective (output "
      "iterate)\"\n"
      "set logscale y\nset xlabel \"epoch\"\nset ylabel \"objective\"\nunset key\nplot " +
      lines("1:3") + "set xlabel \"iterations\"\nset logscale x\nset key outside bottom center horizontal\nplot " +
      lines("2:3") + "unset multiplot\nunset logscale\n";
  PlotFile pf{"trace.gp", {"trace_objective"}};
  if (any_error) {
    gp +=
        "set output prefix . \"trace_test_error\" . ext\nset title \"error on the evaluation set\"\nset xlabel "
        "\"epoch\"\n"
        "set ylabel \"error\"\nset key outside right top\nplot " +
        lines("1:4");
    pf.images.push_back("trace_test_error");
  }
  out.files.emplace_back("trace.gp", gp);
  out.scripts.push_back(pf);
}

namespace {

// A swept setting as an x axis: its distinct values in grid order.
struct SweepAxis {
  std::string key;
  std::vector<json> values;
  bool numeric = true;
};

// One line per combination of the other swept settings (at most kMaxLines):
// the summary groups of `phase` on each.
struct SweepLines {
  std::vector<std::string> labels;
  std::map<std::string, std::vector<const json*>> lines;
};

SweepLines sweep_lines(const Experiment& e, const json& summary, const char* phase, const std::string& key) {
  SweepLines out;
  std::vector<std::string>& labels = out.labels;
  std::map<std::string, std::vector<const json*>>& lines = out.lines;
  for (const json& s : summary) {
    if (s["phase"] != phase) continue;
    json others = s["params"];
    others.erase(key);
    if (e.zip.contains(key)) {  // zipped settings move together: one line for all of them
      for (const auto& [z, unused] : e.zip.items()) others.erase(z);
    }
    const std::string label = others.empty() ? key : params_text(others);
    if (!lines.count(label)) labels.push_back(label);
    lines[label].push_back(&s);
  }
  if (labels.size() > kMaxLines) labels.resize(kMaxLines);
  return out;
}

// sweep_KEY.dat: x (the value, or its position when not numeric), mean and
// std of each metric, the value as a label; one block per line.
std::string sweep_data(const SweepAxis& axis, const std::vector<std::string>& metrics, const char* phase,
                       const SweepLines& sweep) {
  const std::string& key = axis.key;
  const std::vector<json>& values = axis.values;
  const bool numeric = axis.numeric;
  std::string dat = "# " + key + " (x), then mean and std of:";
  for (const auto& m : metrics) dat += " " + m;
  dat += " over the " + std::string(phase) + " runs; label\n";
  for (const std::string& label : sweep.labels) {
    dat += "# " + label + "\n";
    for (const json* s : sweep.lines.at(label)) {
      const json& v = (*s)["params"][key];
      const std::size_t pos = static_cast<std::size_t>(std::find(values.begin(), values.end(), v) - values.begin());
      dat += numeric ? num(v.get<double>()) : std::to_string(pos);
      for (const auto& m : metrics)
        dat += " " + num(metric_of((*s)["mean"], m)) + " " + num(metric_of((*s)["std"], m));
      dat += " " + gp_string(value_text(v)) + "\n";
    }
    dat += "\n\n";
  }
  return dat;
}

// sweep_KEY.gp: one image per metric, error bars over repeats (and folds).
void sweep_script(const SweepAxis& axis, const std::vector<std::string>& metrics, const char* phase,
                  const std::vector<std::string>& labels, PlotSet& out) {
  const std::string& key = axis.key;
  const std::vector<json>& values = axis.values;
  const bool numeric = axis.numeric;
  bool logx = numeric;
  double lo = INFINITY, hi = -INFINITY;
  for (const json& v : values) {
    if (!numeric) break;
    lo = std::min(lo, v.get<double>());
    hi = std::max(hi, v.get<double>());
  }
  logx = numeric && lo > 0 && hi / lo >= 20;
  const std::string base = "sweep_" + key;
  std::string gp = header(base + ".gp");
  gp += "set xlabel " + gp_string(key) + "\n";
  if (logx) {  // decades as ticks; the range hugs the values (not the decades around them)
    gp += log_x_axis(lo / 1.5, hi * 1.5);
  } else if (numeric) {
    gp += "set offsets graph 0.03, graph 0.03, 0, 0\n";  // keep end points off the border
  }
  if (!numeric) gp += "set xrange [-0.5:" + std::to_string(values.size()) + "-0.5]\n";
  PlotFile pf{base + ".gp", {}};
  for (std::size_t m = 0; m < metrics.size(); ++m) {
    const std::string image = base + "_" + metrics[m];
    pf.images.push_back(image);
    gp += "set output prefix . " + gp_string(image) + " . ext\n";
    gp += "set title " +
          gp_string(metrics[m] + " vs " + key + " (" + phase + " runs; mean ± std over " +
                    (std::string(phase) == "cv" ? "folds and repeats" : "repeats") + ")") +
          "\n";
    gp += "set ylabel " + gp_string(metrics[m]) + "\nplot ";
    const std::string ycol = std::to_string(2 + 2 * m), ecol = std::to_string(3 + 2 * m);
    const std::string label_col = std::to_string(2 + 2 * metrics.size());
    for (std::size_t i = 0; i < labels.size(); ++i) {
      gp += (i ? ", \\\n     '' " : gp_string(base + ".dat") + " ") + "index " + std::to_string(i) +
            " using 1:" + ycol + ":" + ecol + (numeric ? "" : ":xtic(" + label_col + ")") +
            " with yerrorlines title " + gp_string(labels[i]);
    }
    gp += "\n";
  }
  out.files.emplace_back(base + ".gp", gp);
  out.scripts.push_back(pf);
}

}  // namespace

void sweep_plots(const Experiment& e, const json& summary, PlotSet& out) {
  const char* phase = "cv";
  for (const json& s : summary) {
    if (s["phase"] == "test") phase = "test";
  }
  const std::vector<std::string> metrics = e.rank_metric == "objective"
                                               ? std::vector<std::string>{"objective"}
                                               : std::vector<std::string>{"objective", e.rank_metric};
  bool zip_categorical_done = false;  // zipped text settings share one x axis: plot the first
  for (const std::string& key : e.swept_keys) {
    SweepAxis axis{key, {}, true};
    for (const GridPoint& p : e.points) {
      const json& v = p.params[key];
      if (std::find(axis.values.begin(), axis.values.end(), v) == axis.values.end()) axis.values.push_back(v);
      axis.numeric = axis.numeric && v.is_number();
    }
    if (axis.values.size() < 2) continue;
    if (!axis.numeric && e.zip.contains(key)) {
      if (zip_categorical_done) continue;
      zip_categorical_done = true;
    }
    const SweepLines sweep = sweep_lines(e, summary, phase, key);
    out.files.emplace_back("sweep_" + key + ".dat", sweep_data(axis, metrics, phase, sweep));
    sweep_script(axis, metrics, phase, sweep.labels, out);
  }
}

// ROC and precision-recall curves of the best model's test scores (binary).
void curve_plots(const std::vector<double>& scores, const std::vector<int>& labels, PlotSet& out) {
  std::vector<std::size_t> order;
  std::size_t P = 0, N = 0;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] < 0) continue;
    order.push_back(i);
    (labels[i] == 1 ? P : N)++;
  }
  if (P == 0 || N == 0) return;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  std::vector<std::array<double, 3>> points{{0.0, 0.0, 1.0}};  // fpr, tpr, precision
  std::size_t tp = 0, fp = 0;
  for (std::size_t r = 0; r < order.size(); ++r) {
    (labels[order[r]] == 1 ? tp : fp)++;
    if (r + 1 < order.size() && scores[order[r + 1]] == scores[order[r]]) continue;  // ties: one point
    points.push_back({static_cast<double>(fp) / N, static_cast<double>(tp) / P, static_cast<double>(tp) / (tp + fp)});
  }
  constexpr std::size_t kMaxPoints = 2000;
  const std::size_t stride = std::max<std::size_t>(1, points.size() / kMaxPoints);
  std::string roc = "# false_positive_rate true_positive_rate(recall) precision\n";
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (i % stride != 0 && i + 1 != points.size()) continue;
    roc += num(points[i][0]) + " " + num(points[i][1]) + " " + num(points[i][2]) + "\n";
  }
  // The model's own decisions (score > 0): its operating point on both curves.
  std::size_t tp0 = 0, fp0 = 0;
  for (std::size_t i : order) {
    if (scores[i] > 0) (labels[i] == 1 ? tp0 : fp0)++;
  }
  const double op_fpr = static_cast<double>(fp0) / N, op_tpr = static_cast<double>(tp0) / P;
  const double op_precision = tp0 + fp0 ? static_cast<double>(tp0) / (tp0 + fp0) : 1.0;
  roc += "\n\n# operating point (score > 0): false_positive_rate true_positive_rate precision\n" + num(op_fpr) + " " +
         num(op_tpr) + " " + num(op_precision) + "\n";
  out.files.emplace_back("curves.dat", roc);
  char op_title[160];
  std::snprintf(op_title, sizeof op_title, "score > 0: FPR %.3g, recall %.3g, precision %.3g", op_fpr, op_tpr,
                op_precision);
  // FPR on a log axis (the region of a few false positives in a thousand is
  // what a filter is tuned in); it starts at the decade below 1/N (FPR 0 has
  // no place on it).
  const double fpr_floor = std::pow(10.0, std::floor(std::log10(1.0 / static_cast<double>(N))));
  std::string gp = header("curves.gp", 800, 700);
  gp += "set key inside bottom right box opaque\nset yrange [0:1.02]\n"
        "set output prefix . \"roc\" . ext\nset title \"ROC, best model on the test set (log FPR axis)\"\n" +
        log_x_axis(fpr_floor, 1.0) +
        "set xlabel \"false positive rate\"\nset ylabel \"true positive rate (recall)\"\n"
        "plot 'curves.dat' index 0 using ($1 > 0 ? $1 : NaN):2 with steps lw 2 title \"ROC\", "
        "x with lines dashtype 2 title \"chance\", \\\n"
        "     '' index 1 using 1:2 with points pt 7 ps 2 title " + gp_string(op_title) + "\n"
        "unset logscale x\nset xtics autofreq format \"% h\"\nset mxtics default\nset xrange [0:1]\n"
        "set output prefix . \"precision_recall\" . ext\nset title \"precision-recall, best model on the test set\"\n"
        "set xlabel \"recall\"\nset ylabel \"precision\"\nset key inside bottom left box opaque\n"
        "plot 'curves.dat' index 0 using 2:3 with lines lw 2 title \"precision-recall\", \\\n"
        "     '' index 1 using 2:3 with points pt 7 ps 2 title " + gp_string(op_title) + "\n";
  out.files.emplace_back("curves.gp", gp);
  out.scripts.push_back({"curves.gp", {"roc", "precision_recall"}});
}

// A class name as a tick label: at most 18 characters, its start and its end
// (names often differ only at the end: category_07, category_08).
std::string tick_label(const std::string& name) {
  return name.size() <= 18 ? name : name.substr(0, 8) + "~" + name.substr(name.size() - 9);
}

// Confusion matrix heatmap: colour is the share of the true class (rows sum
// to 1, so small classes read as well as large ones); counts are printed in
// the cells while they fit (up to 30 classes; empty cells stay blank); the
// canvas grows with the number of classes and the predicted labels are
// rotated, so up to 50 classes stay readable.
void confusion_plot(const Metrics& m, const std::vector<std::string>& classes, PlotSet& out) {
  const std::size_t K = m.confusion.size();
  if (K < 3) return;
  std::string dat = "# predicted true fraction_of_true_class count\n";
  for (std::size_t i = 0; i < K; ++i) {
    std::size_t row = 0;
    for (std::size_t v : m.confusion[i]) row += v;
    for (std::size_t j = 0; j < K; ++j) {
      dat += std::to_string(j) + " " + std::to_string(i) + " " +
             num(row ? static_cast<double>(m.confusion[i][j]) / static_cast<double>(row) : 0.0) + " " +
             std::to_string(m.confusion[i][j]) + "\n";
    }
    dat += "\n";
  }
  out.files.emplace_back("confusion.dat", dat);
  std::string tics;
  for (std::size_t k = 0; k < K; ++k) tics += (k ? ", " : "") + gp_string(tick_label(classes[k])) + " " + std::to_string(k);
  const int side = static_cast<int>(std::clamp<std::size_t>(300 + 22 * K, 700, 1500));
  const int tic_font = K <= 15 ? 10 : K <= 30 ? 8 : 7;
  const int count_font = K <= 10 ? 10 : K <= 20 ? 8 : 6;
  std::string gp = header("confusion.gp", side + 150, side);
  gp += "unset key\nunset grid\nset size ratio -1\nset output prefix . \"confusion\" . ext\n"
        "set title \"confusion matrix, best model on the test set (colour: share of the true class)\"\n"
        "set xlabel \"predicted\"\nset ylabel \"true\"\n"
        "set xtics (" + tics + ") rotate by 60 right font \"," + std::to_string(tic_font) + "\"\n"
        "set ytics (" + tics + ") font \"," + std::to_string(tic_font) + "\"\n"
        "set xrange [-0.5:" + std::to_string(K) + "-0.5]\nset yrange [" + std::to_string(K) + "-0.5:-0.5]\n"
        "set cbrange [0:1]\nset cblabel \"share of the true class\"\n"
        "set palette defined (0 \"white\", 0.5 \"#6baed6\", 1 \"#08306b\")\n"
        "plot 'confusion.dat' using 1:2:3 with image";
  if (K <= 30) {
    gp += ", \\\n     '' using 1:2:($4 > 0 ? sprintf(\"%d\", $4) : \"\"):($3 > 0.5 ? 0xffffff : 0) with labels tc rgb "
          "variable font \"," + std::to_string(count_font) + "\"";
  }
  gp += "\n";
  out.files.emplace_back("confusion.gp", gp);
  out.scripts.push_back({"confusion.gp", {"confusion"}});
}

namespace {

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// The gnuplot program to run, or "" when there is none.
std::string find_program(const std::string& name) {
  if (name.empty()) return "";
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  std::size_t begin = 0;
  while (begin <= dirs.size()) {
    const std::size_t end = std::min(dirs.find(':', begin), dirs.size());
    const std::string candidate = (end > begin ? dirs.substr(begin, end - begin) : std::string(".")) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    begin = end + 1;
  }
  return "";
}

}  // namespace

// Writes the plot files; renders them when gnuplot is there. Returns the images made.
std::vector<std::string> write_plots(const PlotSet& plots, const std::string& dir, const std::string& gnuplot,
                                     bool quiet) {
  std::vector<std::string> images;
  // plots/ belongs to the runner: drop what an earlier run drew so no stale image survives.
  std::error_code ec;
  if (fs::is_directory(dir, ec)) {
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      const std::string ext = entry.path().extension().string();
      if (ext == ".png" || ext == ".svg" || ext == ".gp" || ext == ".dat") fs::remove(entry.path(), ec);
    }
  }
  if (plots.scripts.empty()) return images;
  make_output_directory(dir);
  for (const auto& [name, content] : plots.files) write_output((fs::path(dir) / name).string(), content);
  const std::string program = find_program(gnuplot);
  // A folder named -res would be read by cd as an option.
  const std::string cd_dir = shell_quote(!dir.empty() && dir[0] == '-' ? "./" + dir : dir);
  if (program.empty()) {
    if (!quiet) {
      std::fprintf(stderr,
                   "gnuplot not found (Debian package gnuplot-nox): the plot scripts are in %s; draw them with\n"
                   "  cd %s && for f in *.gp; do gnuplot \"$f\"; done\n",
                   dir.c_str(), cd_dir.c_str());
    }
    return images;
  }
  for (const PlotFile& p : plots.scripts) {
    // -P: the folder is entered as named; a logical cd joins it to $PWD,
    // which fails under a working directory deeper than PATH_MAX.
    const std::string command = "cd -P " + cd_dir + " && " + shell_quote(program) + " -e \"prefix='.tmp-'\" " +
                                shell_quote(p.script) + " >/dev/null 2>.tmp-gnuplot.log";
    const int status = std::system(command.c_str());
    for (const std::string& image : p.images) {
      bool made = false;
      for (const char* ext : {".png", ".svg"}) {
        const fs::path tmp = fs::path(dir) / (".tmp-" + image + ext);
        if (status == 0 && fs::exists(tmp) && fs::file_size(tmp) > 0) {
          fs::rename(tmp, fs::path(dir) / (image + ext));
          images.push_back((fs::path(dir) / (image + ext)).string());
          made = true;
        } else {
          std::error_code ec;
          fs::remove(tmp, ec);
        }
      }
      if (!made && !quiet) {
        std::fprintf(stderr, "warning: gnuplot did not draw %s from %s/%s (messages in %s/.tmp-gnuplot.log)\n",
                     image.c_str(), dir.c_str(), p.script.c_str(), dir.c_str());
      }
    }
  }
  if (!images.empty()) fs::remove(fs::path(dir) / ".tmp-gnuplot.log", ec);
  return images;
}

}  // namespace pegasos::experiment_detail
