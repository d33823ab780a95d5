// The CSV / TSV reader: parse_csv (core/dataset.hpp).
#include <cctype>
#include <fast_float/fast_float.h>

#include <algorithm>
#include <cstring>
#include <string_view>
#include <unordered_map>

#include "core/dataset.hpp"
#include "core/errors.hpp"
#include "core/parse_chunks.hpp"

namespace pegasos {
namespace {

using namespace reader_detail;

struct CsvLayout {
  char delimiter = ',';
  std::size_t fields = 0;        // fields per row
  std::size_t label_field = 0;   // which field is the label
  bool has_label = true;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
  return s;
}

// A field that opens a quote and does not close it: RFC 4180 quoting of a
// delimiter inside a field ("b,c"), which this reader does not do (it would
// split the field and then blame the count of fields or a value).
bool opens_unclosed_quote(std::string_view trimmed) {
  return !trimmed.empty() && (trimmed.front() == '"' || trimmed.back() == '"');
}
std::string unclosed_quote_message(std::string_view field, char delimiter) {
  const std::string shown(field.substr(0, 40));
  const std::string d = delimiter == '\t' ? "tab" : std::string("'") + delimiter + "'";
  return "field " + quote(shown) + " has an unclosed quote (the " + d +
         " delimiter inside a quoted field?): quoting a delimiter is not supported; remove it from names and values";
}

void parse_csv_line(const char* line, const char* end, Chunk& c, const CsvLayout& layout) {
  const char* p = line;
  while (p < end && is_space(*p)) ++p;
  if (p == end) return;  // blank line: skipped
  p = line;
  std::size_t field = 0;
  std::uint32_t feature = 0;
  int label = -1;
  while (true) {
    const char* start = p;
    // Fields are a few bytes: a plain loop beats a memchr call per field.
    const char* stop = p;
    while (stop < end && *stop != layout.delimiter) ++stop;
    const bool last = stop == end;
    const std::size_t column = static_cast<std::size_t>(start - line) + 1;
    if (field >= layout.fields) {
      throw ParseFailure{column, "too many fields: expected " + std::to_string(layout.fields)};
    }
    std::string_view tok(start, static_cast<std::size_t>(stop - start));
    if (!tok.empty() && (is_space(tok.front()) || is_space(tok.back()) || tok.front() == '"' || tok.back() == '"')) {
      tok = trim(tok);
      if (opens_unclosed_quote(tok)) throw ParseFailure{column, unclosed_quote_message(tok, layout.delimiter)};
    }
    if (layout.has_label && field == layout.label_field) {
      if (tok.empty()) throw ParseFailure{column, "missing label (empty field " + std::to_string(field + 1) + ")"};
      try {
        label = c.label_id(tok);
      } catch (const InputError& e) {
        throw ParseFailure{column, e.what()};
      }
    } else {
      if (tok.empty()) {
        throw ParseFailure{column, "empty field " + std::to_string(field + 1) + " (missing value)"};
      }
      // The common plain decimal inline; '+', exponents, long digits and
      // errors through parse_value, which reads plain decimals the same way.
      const char* tok_end = tok.data() + tok.size();
      const char* after = nullptr;
      float v = 0;
      if (tok.front() == '+' || !parse_simple_decimal(tok.data(), tok_end, v, &after) || after != tok_end) {
        v = parse_value(tok.data(), tok_end, column);
      }
      if (v != 0.0f) {
        c.indices.push_back(feature);
        c.values.push_back(v);
      }
      ++feature;
    }
    ++field;
    if (last) break;
    p = stop + 1;
  }
  if (field != layout.fields) {
    throw ParseFailure{static_cast<std::size_t>(end - line) + 1,
                       "expected " + std::to_string(layout.fields) + " fields, found " + std::to_string(field)};
  }
  c.max_index = std::max<std::uint64_t>(c.max_index, feature);
  c.labels.push_back(label);
  c.row_ends.push_back(c.indices.size());
}

// A list of names for a message: "a, b, c", the first few of a long list.
std::string name_list(const std::vector<std::string>& names) {
  std::string out;
  const std::size_t shown = std::min<std::size_t>(names.size(), 8);
  for (std::size_t i = 0; i < shown; ++i) out += (i ? ", " : "") + names[i];
  if (shown < names.size()) out += ", ... (" + std::to_string(names.size()) + " features)";
  return out;
}

// The feature columns of a file read for a model against the model's
// (ReadOptions::model_feature_names / model_features). `names`: the file's
// feature column names when it has a header, else empty.
void check_model_columns(const std::string& at, const std::vector<std::string_view>& names, std::size_t features,
                         const std::vector<std::string>& model_names, std::uint32_t model_features) {
  if (!names.empty() && !model_names.empty()) {
    for (const std::string& m : model_names) {
      if (std::find(names.begin(), names.end(), m) == names.end()) {
        throw InputError(at + ": the model's feature column '" + m + "' is not in the header (the model's features: " +
                         name_list(model_names) + ")");
      }
    }
    for (std::string_view n : names) {
      if (std::find(model_names.begin(), model_names.end(), n) == model_names.end()) {
        throw InputError(at + ": column '" + std::string(n) + "' is not one of the model's features (" +
                         name_list(model_names) + "); remove it");
      }
    }
    for (std::size_t j = 0; j < names.size() && j < model_names.size(); ++j) {
      if (names[j] != model_names[j]) {
        throw InputError(at + ": the feature columns are in another order than the model's: feature " +
                         std::to_string(j + 1) + " is '" + std::string(names[j]) + "' here and '" + model_names[j] +
                         "' in the model (its order: " + name_list(model_names) + ")");
      }
    }
    // Same names, same order, but a name twice: counted below.
  }
  if (features != model_features) {
    throw InputError(at + ": " + std::to_string(features) + " feature column" + (features == 1 ? "" : "s") +
                     ", but the model was trained on " + std::to_string(model_features) +
                     (model_names.empty() ? "" : " (" + name_list(model_names) + ")"));
  }
}

// Where the label is, whether the first row is a header, and (read for a
// model: ReadOptions::model_feature_names / model_features) whether the file
// has no label column and its feature columns are the model's. `header`: the
// first row's fields; `at`: its location for messages. Returns whether the
// first row is a header.
bool place_label(const std::vector<std::string_view>& header, const ReadOptions& options, const std::string& at,
                 CsvLayout& layout) {
  const std::uint32_t model_features =
      options.model_features ? options.model_features : static_cast<std::uint32_t>(options.model_feature_names.size());
  bool is_header = false;
  if (!options.label_column_name.empty()) {
    auto it = std::find(header.begin(), header.end(), options.label_column_name);
    if (it != header.end()) {
      layout.label_field = static_cast<std::size_t>(it - header.begin());
    } else if (!options.require_labels && model_features != 0 && layout.fields == model_features) {
      layout.has_label = false;  // the model's features alone: unlabelled rows
    } else {
      throw InputError(at + ": no column named '" + options.label_column_name + "' in the header");
    }
    is_header = true;
  } else {
    long lc = options.label_column;
    if (lc < 0) lc += static_cast<long>(layout.fields);
    if (lc < 0 || lc >= static_cast<long>(layout.fields)) {
      throw InputError(at + ": label_column " + std::to_string(options.label_column) +
                       " is outside the " + std::to_string(layout.fields) + " fields of the first row");
    }
    layout.label_field = static_cast<std::size_t>(lc);
    // A first row whose fields are not all numbers is a header (the label
    // field's value may be a class name).
    for (std::size_t f = 0; f < header.size(); ++f) {
      if (f == layout.label_field) continue;
      const char* end = header[f].data() + header[f].size();
      float v;
      auto r = fast_float::from_chars(skip_plus(header[f].data(), end), end, v);
      if (header[f].empty() || r.ptr != end) is_header = true;
    }
    // Read for a model: exactly its feature columns and no label column
    // (by the header's names, or by the count without a header).
    const bool only_features =
        model_features != 0 && layout.fields == model_features &&
        (is_header ? std::equal(header.begin(), header.end(), options.model_feature_names.begin(),
                                options.model_feature_names.end())
                   : true);
    if (only_features) {
      if (options.require_labels) {
        throw InputError(at + ": " + std::to_string(layout.fields) +
                         " fields, the model's feature columns and no label column (labels are needed here; "
                         "`predict` reads unlabelled rows)");
      }
      layout.has_label = false;
    }
  }
  if (is_header) {  // names identify the columns (a model checks its data's by name): each once
    std::unordered_map<std::string_view, std::size_t> first;
    for (std::size_t f = 0; f < header.size(); ++f) {
      const auto [it, fresh] = first.emplace(header[f], f);
      if (!fresh) {
        throw InputError(at + ": column name '" + std::string(header[f]) + "' appears twice in the header (columns " +
                         std::to_string(it->second + 1) + " and " + std::to_string(f + 1) + ")");
      }
    }
  }
  if (model_features != 0) {
    const std::size_t features = layout.fields - (layout.has_label ? 1 : 0);
    std::vector<std::string_view> names;
    if (is_header) {
      for (std::size_t f = 0; f < header.size(); ++f) {
        if (!layout.has_label || f != layout.label_field) names.push_back(header[f]);
      }
    }
    check_model_columns(at, names, features, options.model_feature_names, model_features);
  }
  return is_header;
}

// A header name that usually holds the class: label, class, target, y, ...
bool looks_like_label_name(std::string_view name) {
  std::string lower;
  for (const char ch : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  for (const char* known : {"label", "labels", "class", "classes", "target", "y", "category", "outcome", "response"}) {
    if (lower == known) return true;
  }
  return false;
}

}  // namespace

Dataset parse_csv(std::string_view text, const std::string& name, const ReadOptions& options) {
  text = strip_bom(text);
  refuse_unsupported_compression(text, name);
  if (looks_binary(text)) throw InputError(name + ": binary data (NUL bytes), not a CSV text file");
  // Skip leading blank lines; the first non-blank line fixes the layout.
  std::size_t line_no = options.first_line;
  while (!text.empty()) {
    std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (!trim(line).empty()) break;
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
  }
  if (text.empty()) throw InputError(name + ": no examples (the file is empty)");
  std::string_view first = text.substr(0, text.find('\n'));
  if (!first.empty() && first.back() == '\r') first.remove_suffix(1);

  CsvLayout layout;
  if (first.find(',') == std::string_view::npos) {
    if (first.find('\t') != std::string_view::npos) layout.delimiter = '\t';
    else if (first.find(';') != std::string_view::npos) layout.delimiter = ';';
  }
  std::vector<std::string_view> header;
  for (std::size_t pos = 0;;) {
    std::size_t d = first.find(layout.delimiter, pos);
    header.push_back(trim(first.substr(pos, d == std::string_view::npos ? std::string_view::npos : d - pos)));
    if (opens_unclosed_quote(header.back())) {
      throw InputError(location(name, line_no, pos + 1) + ": " + unclosed_quote_message(header.back(), layout.delimiter));
    }
    if (d == std::string_view::npos) break;
    pos = d + 1;
  }
  layout.fields = header.size();
  if (layout.fields < 2) {
    throw InputError(location(name, line_no) + ": a CSV row needs a label and at least one feature, found " +
                     std::to_string(layout.fields) + " field");
  }
  const bool is_header = place_label(header, options, location(name, line_no), layout);
  if (is_header) {
    std::size_t nl = text.find('\n');
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
  }
  Dataset data;
  try {
    data = parse_chunks(text, name, line_no, [&](const char* b, const char* e, Chunk& c) {
      parse_csv_line(b, e, c, layout);
    }, /*colon_per_value=*/false, NoFastLine(), options.text_is_file_mapping);
  } catch (const InputError& e) {
    // Words where numbers belong, with a header that names a label column
    // other than the one read: say which column the labels came from.
    const std::string what = e.what();
    if (what.find("is not a number") == std::string::npos) throw;
    for (std::size_t f = 0; is_header && layout.has_label && f < header.size(); ++f) {
      if (f == layout.label_field || !looks_like_label_name(header[f])) continue;
      throw InputError(what + " (the labels are read from column " + std::to_string(layout.label_field) + ", '" +
                       std::string(header[layout.label_field]) + "'; for the header's '" + std::string(header[f]) +
                       "': --set label_column=" + std::string(header[f]) + ")");
    }
    // Two tab-separated fields with words in the second: a LABEL<TAB>TEXT file.
    if (layout.delimiter == '\t' && layout.fields == 2) {
      throw InputError(what + " (if each line is LABEL<TAB>TEXT, read it as raw text with --set format=text_tsv)");
    }
    throw;
  }
  if (is_header) {
    for (std::size_t f = 0; f < header.size(); ++f) {
      if (!layout.has_label || f != layout.label_field) data.feature_names.emplace_back(header[f]);
    }
  }
  data.csv_features = static_cast<std::uint32_t>(layout.fields - (layout.has_label ? 1 : 0));
  return data;
}

}  // namespace pegasos
