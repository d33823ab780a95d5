// Streaming predict (drivers/predict.cpp): whatever the batch size, the
// predictions equal scoring the whole input read at once (AnyModel::read),
// ids are the line numbers of the rows (brute force here), and an error in a
// late batch names its line in the whole input.
#include <cstdio>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "core/random.hpp"
#include "drivers/any_model.hpp"
#include "drivers/api.hpp"
#include "drivers/predict.hpp"
#include "tests/test_util.hpp"

namespace {

using Catch::Contains;
using testutil::TempDir;
using testutil::read_text;

// What predict must print: the whole input read and scored at once.
std::string whole_predictions(const pegasos::api::Model& model, const std::string& data,
                              const std::vector<std::string>& ids = {}) {
  const pegasos::Dataset ds = model.read(data, false);
  const std::vector<double> scores = model.scores(ds);
  const std::size_t K = static_cast<std::size_t>(model.outputs());
  std::string out;
  char buf[64];
  for (std::size_t i = 0; i < ds.size(); ++i) {
    if (!ids.empty()) out += ids[i] + "\t";
    out += model.classes()[static_cast<std::size_t>(model.predict_class(&scores[i * K]))];
    for (std::size_t k = 0; k < K; ++k) {
      std::snprintf(buf, sizeof buf, "\t%.9g", scores[i * K + k]);
      out += buf;
    }
    out += "\n";
  }
  return out;
}

std::string predict_with_batch(const std::string& model, const std::string& data, std::size_t batch,
                               const TempDir& dir, bool ids = false, const std::string& id_field = "") {
  pegasos::PredictOptions o;
  o.output = dir.file("out.txt");
  o.batch_bytes = batch;
  o.ids = ids;
  o.id_field = id_field;
  pegasos::run_predict(model, data, o);
  return read_text(o.output);
}

// Rows with blank and comment lines between them; `lines` gets the 1-based
// line number of every row.
std::string libsvm_with_gaps(std::uint64_t seed, std::size_t n, std::vector<std::string>& lines) {
  pegasos::Rng rng(seed);
  std::string text = "# a comment first\n\n";
  std::size_t line = 3;
  char buf[128];
  for (std::size_t i = 0; i < n; ++i) {
    const bool pos = rng.below(2) == 1;
    std::snprintf(buf, sizeof buf, "%s 1:%.3f 2:%.3f %u:1\n", pos ? "+1" : "-1", (pos ? 1.0 : -1.0) + 0.3 * (rng.uniform() - 0.5),
                  (rng.uniform() - 0.5), 3 + static_cast<unsigned>(rng.below(5)));
    text += buf;
    lines.push_back(std::to_string(line++));
    if (rng.below(5) == 0) {
      text += rng.below(2) ? "\n" : "  # note\n";
      ++line;
    }
  }
  return text;
}

}  // namespace

TEST_CASE("predict in batches of any size equals the whole input scored at once", "[predict]") {
  const TempDir dir("stream");
  std::vector<std::string> lines;
  const std::string svm = dir.write("d.svm", libsvm_with_gaps(3, 300, lines));
  const pegasos::api::Settings settings = pegasos::api::Settings::load("", {"lambda=0.01"});
  pegasos::api::train(settings, svm).model.save(dir.file("m.json"));
  const pegasos::api::Model model = pegasos::api::Model::load(dir.file("m.json"));
  const std::string expected = whole_predictions(model, svm);
  for (std::size_t batch : {std::size_t{1}, std::size_t{7}, std::size_t{100}, std::size_t{4096}, std::size_t{8} << 20}) {
    CAPTURE(batch);
    CHECK(predict_with_batch(dir.file("m.json"), svm, batch, dir) == expected);
    CHECK(predict_with_batch(dir.file("m.json"), svm, batch, dir, true) == whole_predictions(model, svm, lines));
  }

  SECTION("CSV with and without a header: the header is read once, never predicted") {
    for (const bool header : {true, false}) {
      CAPTURE(header);
      std::string csv = header ? "label,a,b\n" : "";
      std::vector<std::string> csv_lines;
      pegasos::Rng rng(11);
      for (int i = 0; i < 200; ++i) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "%d,%.3f,%.3f\n", i % 2 ? 1 : -1, (i % 2 ? 1.0 : -1.0) + (rng.uniform() - 0.5), (rng.uniform() - 0.5));
        csv += buf;
        csv_lines.push_back(std::to_string(i + (header ? 2 : 1)));
      }
      const std::string path = dir.write(header ? "h.csv" : "n.csv", csv);
      pegasos::api::train(settings, path).model.save(dir.file("c.json"));
      const pegasos::api::Model cm = pegasos::api::Model::load(dir.file("c.json"));
      for (std::size_t batch : {std::size_t{1}, std::size_t{50}, std::size_t{8} << 20}) {
        CAPTURE(batch);
        CHECK(predict_with_batch(dir.file("c.json"), path, batch, dir, true) == whole_predictions(cm, path, csv_lines));
      }
    }
  }

  SECTION("an error in a late batch names its line in the whole input") {
    std::string bad = read_text(svm);
    bad += "+1 1:0.5 2:oops\n";
    const std::string path = dir.write("bad.svm", bad);
    const std::size_t line = static_cast<std::size_t>(std::count(bad.begin(), bad.end(), '\n'));
    CHECK_THROWS_WITH(predict_with_batch(dir.file("m.json"), path, 64, dir),
                      Contains("bad.svm:" + std::to_string(line) + ":"));
  }

  SECTION("a late row whose decision value overflows is named by its row and line in the whole input") {
    nlohmann::json m = nlohmann::json::parse(read_text(dir.file("m.json")));
    m["weights"][0][0] = 1e300;  // finite scores for the rows above, infinite for x_1 = 1e10
    dir.write("huge.json", m.dump());
    std::string bad = read_text(svm);
    bad += "\n# a late comment\n+1 1:1e10 2:0.5\n-1 1:0.5 2:0.5\n";
    const std::string path = dir.write("late.svm", bad);
    const std::size_t line = static_cast<std::size_t>(std::count(bad.begin(), bad.end(), '\n')) - 1;
    const std::string where = "late.svm: row 301 (line " + std::to_string(line) + "): the model's decision value is infinite";
    for (std::size_t batch : {std::size_t{1}, std::size_t{64}, std::size_t{1000}, std::size_t{8} << 20}) {
      CAPTURE(batch);
      CHECK_THROWS_WITH(predict_with_batch(dir.file("huge.json"), path, batch, dir), Contains(where));
    }
  }
}

TEST_CASE("predict streams raw text in batches: JSONL with ids, TSV, a folder and one document", "[predict]") {
  const TempDir dir("stream_text");
  std::string jsonl, tsv;
  std::vector<std::string> ids;
  const char* words[] = {"cheap pills now", "meeting at noon", "win money fast", "lunch with the team"};
  for (int i = 0; i < 120; ++i) {
    const bool spam = i % 2 == 0;
    const std::string text = std::string(words[(spam ? 0 : 1) + 2 * (i % 4 / 2)]) + " " + std::to_string(i % 7);
    jsonl += "{\"id\": \"doc-" + std::to_string(i) + "\", \"label\": \"" + (spam ? "spam" : "ham") + "\", \"text\": \"" + text + "\"}\n";
    if (i % 9 == 0) jsonl += "\n";
    tsv += std::string(spam ? "spam" : "ham") + "\t" + text + "\n";
    ids.push_back("doc-" + std::to_string(i));
  }
  const std::string data = dir.write("d.jsonl", jsonl);
  const pegasos::api::Settings settings = pegasos::api::Settings::load("", {"lambda=0.01"});
  pegasos::api::train(settings, data).model.save(dir.file("m.json"));
  const pegasos::api::Model model = pegasos::api::Model::load(dir.file("m.json"));
  const std::string expected = whole_predictions(model, data, ids);
  for (std::size_t batch : {std::size_t{1}, std::size_t{333}, std::size_t{8} << 20}) {
    CAPTURE(batch);
    CHECK(predict_with_batch(dir.file("m.json"), data, batch, dir, false, "id") == expected);
  }
  // The same texts as TSV, as a flat folder of files, and one file: the same scores.
  const std::string tsv_path = dir.write("d.tsv", tsv);
  const std::string no_ids = whole_predictions(model, data);
  CHECK(predict_with_batch(dir.file("m.json"), tsv_path, 100, dir) == no_ids);
  std::string folder_expected;
  std::size_t line = 0;
  for (int i = 0; i < 120; i += 40) {
    char name[32];
    std::snprintf(name, sizeof name, "mails/m%03d.eml", i);
    const std::size_t tab = tsv.find('\t', line);
    const std::size_t nl = tsv.find('\n', line);
    dir.write(name, tsv.substr(tab + 1, nl - tab - 1));
    for (int skip = 0; skip < 40; ++skip) line = tsv.find('\n', line) + 1;
    std::size_t at = 0;
    for (int r = 0; r < i; ++r) at = no_ids.find('\n', at) + 1;
    folder_expected += std::string(name + 6) + "\t" + no_ids.substr(at, no_ids.find('\n', at) - at + 1);
  }
  CHECK(predict_with_batch(dir.file("m.json"), dir.file("mails"), 100, dir, true) == folder_expected);
  CHECK(predict_with_batch(dir.file("m.json"), dir.file("mails/m040.eml"), 100, dir) ==
        folder_expected.substr(folder_expected.find('\n') + 1 + 9, folder_expected.find('\n', folder_expected.find('\n') + 1) - folder_expected.find('\n') - 9));
  CHECK_THROWS_WITH(predict_with_batch(dir.file("m.json"), dir.write("e.jsonl", "\n\n"), 100, dir), Contains("no documents"));
}
