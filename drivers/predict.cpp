#include "drivers/predict.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/errors.hpp"
#include "core/input_stream.hpp"
#include "core/output_file.hpp"
#include "drivers/any_model.hpp"
#include "drivers/data.hpp"
#include "drivers/model_input.hpp"
#include "io/model_json.hpp"
#include "io/model_sections_json.hpp"

namespace pegasos {
namespace {

// --id-field names a JSONL field: another input has none (it was taken
// silently as --ids).
void check_id_field(const PredictOptions& opt, InputKind kind, const std::string& name) {
  if (opt.id_field.empty() || kind == InputKind::kJsonl) return;
  throw ConfigError("--id-field " + opt.id_field + ": " + name + " is read as " + input_kind_name(kind) +
                    ", which has no fields; --id-field is for JSONL (use --ids for " +
                    (is_line_format(kind) ? "line numbers)" : "file names)"));
}

ModelReader reader_of(const AnyModel& model) {
  if (model.linear) return ModelReader(json_object_of(model.linear->data), model.features(), model.source);
  return ModelReader(json_object_of(model.kernel->data), nullptr, model.source);
}

// Remove row 0 (a CSV batch's repeated first line).
void drop_first_row(Dataset& ds) {
  const std::uint64_t n0 = ds.row_ptr[1];
  std::vector<std::uint32_t>& indices = ds.indices.own();
  std::vector<float>& values = ds.values.own();
  std::vector<std::uint64_t>& row_ptr = ds.row_ptr.own();
  indices.erase(indices.begin(), indices.begin() + static_cast<std::ptrdiff_t>(n0));
  values.erase(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(n0));
  row_ptr.erase(row_ptr.begin());
  for (auto& p : row_ptr) p -= n0;
  ds.labels.erase(ds.labels.begin());
}

class Predictor {
 public:
  Predictor(const AnyModel& model, OutputFile& out, bool ids, bool proba)
      : model_(model), out_(out), ids_(ids), proba_(proba), beyond_(model.input_dimension()) {}

  // Writes "[id TAB] class TAB score..." (or probabilities) per row.
  void write(const Dataset& data, const std::vector<std::string>& ids) {
    const std::vector<double> scores = model_.scores(data);
    const std::size_t K = static_cast<std::size_t>(model_.outputs()), C = model_.classes().size();
    std::string text;
    text.reserve(data.size() * (16 + 24 * K));
    char buf[64];
    std::vector<double> p(C);
    for (std::size_t i = 0; i < data.size(); ++i) {
      if (ids_) {
        // A document's id (a file name) is the first column: a tab or a line
        // break inside it would split the line (JSONL ids are checked where read).
        if (has_control_character(ids[i])) {
          throw InputError(data.source + ": the id of document " + std::to_string(rows_ + i + 1) +
                           " (its file name) contains a control character (tab, line break, ...), which would split "
                           "predict's columns; rename it, or predict without --ids");
        }
        text += ids[i] + '\t';
      }
      text += model_.classes()[static_cast<std::size_t>(model_.predict_class(&scores[i * K]))];
      if (proba_) model_.header().probabilities(&scores[i * K], p.data());
      for (std::size_t k = 0; k < K; ++k) {
        std::snprintf(buf, sizeof buf, "\t%.9g", proba_ ? p[K == 1 ? 1 : k] : scores[i * K + k]);
        text += buf;
      }
      text += '\n';
    }
    out_.write(text);
    rows_ += data.size();
    beyond_.count(data);
  }
  std::size_t rows() const { return rows_; }
  const FeaturesBeyond& beyond() const { return beyond_; }

 private:
  const AnyModel& model_;
  OutputFile& out_;
  bool ids_, proba_;
  std::size_t rows_ = 0;
  FeaturesBeyond beyond_;
};

// State of a line-format input read in batches.
struct LineStream {
  InputKind kind = InputKind::kLibsvm;
  bool started = false;     // a batch with rows was parsed
  std::string csv_first;    // CSV: the first row line (a header or data), repeated before later batches
  bool csv_header = false;  // ... and whether it was a header
};

// Parse and predict one batch of whole lines starting at line `first_line`.
void predict_batch(std::string_view piece, std::size_t first_line, LineStream& s, const ModelReader& reader,
                   const std::string& name, const PredictOptions& opt, Predictor& predictor) {
  const bool want_ids = opt.ids || !opt.id_field.empty();
  // The batch's row lines, counted once: whether it has rows, the CSV first
  // row, and (below) the lines that messages about a row name.
  std::vector<std::size_t> lines;
  if (count_rows(piece, s.kind, first_line, &lines) == 0) return;
  std::vector<std::string> ids;
  std::vector<std::string>* ids_out = want_ids ? &ids : nullptr;
  Dataset ds;
  if (s.kind == InputKind::kCsv && s.started) {
    const std::string text = s.csv_first + "\n" + std::string(piece);
    ds = reader.parse(text, s.kind, name, first_line - 1, opt.id_field, ids_out);
    if (!s.csv_header) {
      drop_first_row(ds);
      if (want_ids) ids.erase(ids.begin());
    }
  } else {
    ds = reader.parse(piece, s.kind, name, first_line, opt.id_field, ids_out);
    if (s.kind == InputKind::kCsv) {
      const std::size_t n = lines.size();
      const std::size_t at = lines.front() - first_line;  // the first row line
      std::size_t begin = 0;
      for (std::size_t l = 0; l < at; ++l) begin = piece.find('\n', begin) + 1;
      const std::size_t end = piece.find('\n', begin);
      s.csv_first = std::string(piece.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin));
      s.csv_header = ds.size() + 1 == n;
    }
  }
  s.started = true;
  // Messages about a row (a decision value that overflows) number it in the
  // whole input, with its line, not in this batch.
  ds.first_row = predictor.rows() + 1;
  if (lines.size() == ds.size() + 1) lines.erase(lines.begin());  // a CSV header
  if (lines.size() == ds.size()) ds.row_lines = std::move(lines);
  predictor.write(ds, ids);
}

// Read `path` in batches of whole lines and predict each as it comes.
void predict_lines(InputStream& in, const std::string& path, const ModelReader& reader, const PredictOptions& opt,
                   OutputFile& out, Predictor& predictor) {
  const bool eager = opt.line_buffered || out.interactive();
  LineStream s;
  std::string buf;
  std::size_t next_line = 1;
  bool kind_known = false;
  // buf[0, scanned) has been searched for line ends, the last of them ending
  // at last_end (0: none): a line longer than a batch is searched once, not
  // once per read (a 400 MB line took 11 s where a linear pass takes 0.3).
  std::size_t scanned = 0, last_end = 0;
  while (true) {
    // A batch is cut at the last line end once batch_bytes are buffered (a
    // longer line grows the batch).
    const std::size_t batch = std::max<std::size_t>(opt.batch_bytes, 1);
    const std::size_t want = buf.size() < batch ? batch - buf.size() : batch;
    const bool end = in.read(buf, want, eager) == 0;
    if (!kind_known) {
      s.kind = reader.kind(path, opt.format, buf);
      kind_known = true;
      check_id_field(opt, s.kind, in.name());
      if (!is_line_format(s.kind)) {  // one document on standard input: all of it
        throw InputError(in.name() + ": format " + opt.format + " needs a file or folder name, not a stream");
      }
    }
    // NUL bytes never occur in text (/dev/zero would grow one endless line).
    if (const void* nul = std::memchr(buf.data() + scanned, '\0', buf.size() - scanned)) {
      const auto at = static_cast<std::size_t>(static_cast<const char*>(nul) - buf.data());
      throw InputError(in.name() + ":" +
                       std::to_string(next_line + static_cast<std::size_t>(std::count(buf.begin(), buf.begin() + at, '\n'))) +
                       ": binary data (NUL bytes), not text");
    }
    std::size_t cut = buf.size();
    if (!end) {
      if (const void* nl = ::memrchr(buf.data() + scanned, '\n', buf.size() - scanned)) {
        last_end = static_cast<std::size_t>(static_cast<const char*>(nl) - buf.data()) + 1;
      }
      scanned = buf.size();
      cut = last_end;
      // CSV: the first batch must show a row after a possible header.
      if (s.kind == InputKind::kCsv && !s.started && count_rows({buf.data(), cut}, s.kind, 1, nullptr) < 2) cut = 0;
    }
    if (cut > 0) {
      const std::string_view piece(buf.data(), cut);
      predict_batch(piece, next_line, s, reader, in.name(), opt, predictor);
      next_line += static_cast<std::size_t>(std::count(piece.begin(), piece.end(), '\n'));
      buf.erase(0, cut);
      scanned = buf.size();  // the rest follows the last line end: none in it
      last_end = 0;
      if (eager) out.flush();
    }
    if (end) break;
  }
}

}  // namespace

void run_predict(const std::string& model_path, const std::string& data_path, const PredictOptions& opt) {
  AnyModel model = AnyModel::load(model_path, json_checks::ModelUse::kPredict);
  ModelHeader& header = model.header();
  if (opt.proba && !header.calibrated()) {
    throw InputError(model_path + ": --proba: the model has no calibrated probabilities (train it with --calibrate)");
  }
  if (opt.threshold) {
    if (!header.binary()) throw ConfigError("--threshold: a decision threshold is for binary models");
    header.threshold = *opt.threshold;
  }
  const ModelReader reader = reader_of(model);
  const bool ids = opt.ids || !opt.id_field.empty();
  std::vector<std::string> doc_ids;
  std::optional<Dataset> documents;
  if (!is_stream(data_path)) {
    const InputKind kind = reader.kind(data_path, opt.format, {});
    check_id_field(opt, kind, data_path);
    if (!is_line_format(kind)) documents = reader.read_documents(data_path, kind, &doc_ids);
  }
  OutputFile out(opt.output);
  Predictor predictor(model, out, ids, opt.proba);
  std::string input_name = data_path;
  if (documents) {
    predictor.write(*documents, doc_ids);
  } else {
    if (data_path != "-") note_plain_gz(data_path);
    InputStream in(data_path);
    input_name = in.name();
    predict_lines(in, data_path, reader, opt, out, predictor);
    if (predictor.rows() == 0) {
      throw InputError(in.name() + (reader.text_model() ? ": no documents (the file is empty or has only blank lines)"
                                                        : ": no examples (the file is empty or has only blank/comment lines)"));
    }
  }
  out.commit();
  std::fputs(predictor.beyond().note(input_name).c_str(), stderr);
}

}  // namespace pegasos
