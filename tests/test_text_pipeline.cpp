// Raw text end to end: training on text equals training on the exported
// LIBSVM features, and the CLI keeps text and numeric models apart.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/engine.hpp"
#include "core/model.hpp"
#include "drivers/any_model.hpp"
#include "drivers/config.hpp"
#include "drivers/data.hpp"
#include "drivers/registry.hpp"
#include "io/model_json.hpp"
#include "tests/test_util.hpp"

using namespace pegasos;

namespace {

using testutil::TempDir;
using testutil::write_text;
using testutil::bits;

std::string corpus_jsonl(int n, unsigned seed) {
  // Two classes with different vocabularies plus shared noise words.
  const char* spam_words[] = {"free", "money", "winner", "offer", "click", "cash"};
  const char* ham_words[] = {"meeting", "project", "report", "lunch", "review", "code"};
  const char* noise[] = {"the", "a", "today", "please", "thanks", "and"};
  std::string out;
  unsigned s = seed;
  auto next = [&] { return s = s * 1103515245u + 12345u, (s >> 16) & 0x7fff; };
  for (int i = 0; i < n; ++i) {
    const bool spam = next() % 3 == 0;
    std::string text = "Subject: note " + std::to_string(i) + "\\n\\n";  // JSON-escaped blank line
    for (int w = 0; w < 12; ++w) {
      const unsigned r = next();
      text += (r % 4 == 0 ? noise[r % 6] : (spam ? spam_words : ham_words)[r % 6]);
      text += ' ';
    }
    out += std::string("{\"label\": \"") + (spam ? "spam" : "ham") + "\", \"text\": \"" + text + "\"}\n";
  }
  return out;
}

// ctest runs test cases as parallel processes: one stderr file per process.
std::string stderr_path() {
  static const std::string path = "/tmp/pegasos-textpipe-stderr-" + std::to_string(::getpid());
  static const struct Cleanup {
    ~Cleanup() { std::remove(path.c_str()); }
  } cleanup;
  return path;
}

int run(const std::string& cmd) {
  const int status = std::system((cmd + " 2>" + stderr_path()).c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

std::string last_stderr() {
  std::ifstream f(stderr_path());
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("training on raw text equals training on its exported LIBSVM features", "[text]") {
  const TempDir tmp("textpipe");
  const std::string dir = tmp.path();
  write_text(dir + "/train.jsonl", corpus_jsonl(300, 7));
  const TrainConfig c = config_from_json({{"features", {{"mode", "vocabulary"}, {"word_ngrams", 2}}}, {"epochs", 5}},
                                         "test");
  TrainingData text = load_training_data(c, dir + "/train.jsonl");
  REQUIRE(text.data.size() == 300);

  // Export the featurised rows as LIBSVM text (round-trip float formatting).
  std::string svm;
  char buf[64];
  for (std::size_t i = 0; i < text.data.size(); ++i) {
    svm += text.data.classes[static_cast<std::size_t>(text.data.labels[i])];
    const RowView x = text.data.row(i);
    for (std::uint32_t j = 0; j < x.nnz; ++j) {
      std::snprintf(buf, sizeof buf, " %u:%.9g", x.indices[j] + 1, static_cast<double>(x.values[j]));
      svm += buf;
    }
    svm += '\n';
  }
  Dataset numeric = parse_libsvm(svm, "exported.svm", ReadOptions{});
  numeric.dimension = text.data.dimension;  // the featurizer's dimension (unused trailing terms)
  REQUIRE(numeric.values == text.data.values);
  REQUIRE(numeric.indices == text.data.indices);
  REQUIRE(numeric.labels == text.data.labels);

  const Model from_text = train_model(c, text.data, {});
  const TrainConfig plain = config_from_json({{"epochs", 5}}, "test");
  const Model from_numeric = train_model(plain, numeric, {});
  CHECK(from_text.weights == from_numeric.weights);
  CHECK(from_text.bias == from_numeric.bias);
}

TEST_CASE("the CLI trains and predicts on raw text and keeps text and numeric models apart", "[text][cli]") {
  const TempDir tmp("textpipe");
  const std::string dir = tmp.path();
  const std::string bin = PEGASOS_BINARY;
  write_text(dir + "/train.jsonl", corpus_jsonl(400, 11));
  write_text(dir + "/test.jsonl", corpus_jsonl(100, 12));
  write_text(dir + "/numeric.svm", "1 1:0.5 2:1\n-1 1:-0.5 3:1\n");
  REQUIRE(run(bin + " train -q --set positive_label=spam " + dir + "/train.jsonl " + dir + "/m.json") == 0);
  REQUIRE(run(bin + " eval " + dir + "/m.json " + dir + "/test.jsonl --json " + dir + "/e.json > /dev/null") == 0);
  std::ifstream e(dir + "/e.json");
  const nlohmann::json report = nlohmann::json::parse(e);
  CHECK(report["accuracy"].get<double>() > 0.95);
  CHECK(report["positive_class"] == "spam");
  REQUIRE(run(bin + " predict " + dir + "/m.json " + dir + "/test.jsonl -o " + dir + "/p.tsv") == 0);
  std::ifstream p(dir + "/p.tsv");
  std::string line;
  std::getline(p, line);
  CHECK((line.rfind("spam\t", 0) == 0 || line.rfind("ham\t", 0) == 0));

  CHECK(run(bin + " predict " + dir + "/m.json " + dir + "/numeric.svm") == 2);
  CHECK_THAT(last_stderr(), Catch::Contains("trained on raw text"));
  REQUIRE(run(bin + " train -q " + dir + "/numeric.svm " + dir + "/n.json") == 0);
  CHECK(run(bin + " predict " + dir + "/n.json " + dir + "/test.jsonl") == 2);
  CHECK_THAT(last_stderr(), Catch::Contains("numeric features"));
  CHECK(run(bin + " train -q --set 'features={\"mode\":\"vocabulary\"}' " + dir + "/numeric.svm " + dir + "/x.json") == 2);
  CHECK_THAT(last_stderr(), Catch::Contains("features"));
  // Kernels need numeric features: refused before the text is read.
  CHECK(run(bin + " train -q --set objective=kernel_hinge " + dir + "/train.jsonl " + dir + "/k.json") == 2);
  CHECK_THAT(last_stderr(), Catch::Contains("kernel_hinge") && Catch::Contains("raw text"));
  // A bad JSONL line is reported with its line number.
  write_text(dir + "/bad.jsonl", "{\"label\": \"ham\", \"text\": \"hello\"}\n{\"label\": \"spam\", \"text\": 42}\n");
  CHECK(run(bin + " train -q " + dir + "/bad.jsonl " + dir + "/b.json") == 2);
  CHECK_THAT(last_stderr(), Catch::Contains("bad.jsonl:2"));
}

TEST_CASE("pegasos featurize writes the rows train sees, and test rows with the model's featurizer", "[text][cli]") {
  const TempDir tmp("featurize");
  const std::string dir = tmp.path();
  const std::string bin = PEGASOS_BINARY;
  write_text(dir + "/train.jsonl", corpus_jsonl(200, 21));
  write_text(dir + "/test.jsonl", corpus_jsonl(50, 22));
  const std::string features = " --set 'features={\"mode\":\"vocabulary\",\"word_ngrams\":2}'";
  REQUIRE(run(bin + " featurize" + features + " " + dir + "/train.jsonl " + dir + "/train.svm") == 0);
  CHECK_THAT(last_stderr(), Catch::Contains("ham -> -1") && Catch::Contains("spam -> +1"));

  // The exported file holds exactly the rows training sees (values bit for bit).
  const TrainConfig c = config_from_json({{"features", {{"mode", "vocabulary"}, {"word_ngrams", 2}}}}, "test");
  const TrainingData text = load_training_data(c, dir + "/train.jsonl");
  const Dataset exported = read_dataset(dir + "/train.svm", ReadOptions{});
  REQUIRE(exported.size() == text.data.size());
  CHECK(exported.indices == text.data.indices);
  CHECK(bits(exported.values) == bits(text.data.values));
  CHECK(exported.classes == std::vector<std::string>{"-1", "1"});
  CHECK(exported.labels == text.data.labels);

  // Test data through a model's featurizer: terms unseen in training are dropped.
  REQUIRE(run(bin + " train -q" + features + " " + dir + "/train.jsonl " + dir + "/m.json") == 0);
  REQUIRE(run(bin + " featurize -q --model " + dir + "/m.json " + dir + "/test.jsonl " + dir + "/test.svm") == 0);
  const Model m = load_model(dir + "/m.json");
  const Dataset test = read_dataset(dir + "/test.svm", ReadOptions{});
  CHECK(test.size() == 50);
  CHECK(test.dimension <= m.dimension);
  const Dataset direct = load_data_for_model(m, dir + "/test.jsonl", true);
  CHECK(test.indices == direct.indices);
  CHECK(bits(test.values) == bits(direct.values));

  // Both a model and settings: refused.
  CHECK(run(bin + " featurize --model " + dir + "/m.json --set lambda=1 " + dir + "/test.jsonl " + dir + "/x.svm") == 2);
  CHECK_THAT(last_stderr(), Catch::Contains("--model"));
}

TEST_CASE("predict and eval read a text model for scoring: the same scores without the sections they skip", "[text][cli]") {
  const TempDir tmp("scoring-read");
  const std::string dir = tmp.path();
  const std::string bin = PEGASOS_BINARY;
  write_text(dir + "/train.jsonl", corpus_jsonl(300, 31));
  write_text(dir + "/test.jsonl", corpus_jsonl(80, 32));
  REQUIRE(run(bin + " train -q --set positive_label=spam " + dir + "/train.jsonl " + dir + "/m.json") == 0);
  std::ifstream in(dir + "/m.json");
  nlohmann::json model = nlohmann::json::parse(in);
  REQUIRE(model["features"].contains("bucket_terms"));
  REQUIRE(model.contains("duals"));

  // Scores through the full read (the library) and through the CLI's scoring read.
  const AnyModel full = AnyModel::load(dir + "/m.json");
  const AnyModel scoring = AnyModel::load(dir + "/m.json", json_checks::ModelUse::kScoring);
  CHECK(full.linear->duals.has_value());
  CHECK_FALSE(scoring.linear->duals.has_value());
  CHECK(scoring.linear->weights == full.linear->weights);
  CHECK(scoring.features() == [&] { nlohmann::json f = model["features"]; f.erase("bucket_terms"); return f; }());
  const Dataset data = full.read(dir + "/test.jsonl", true);
  const Dataset again = scoring.read(dir + "/test.jsonl", true);
  CHECK(data.indices == again.indices);
  CHECK(bits(data.values) == bits(again.values));
  CHECK(bits(full.scores(data)) == bits(scoring.scores(again)));
  CHECK_THROWS_AS(scoring.save(dir + "/never.json"), std::logic_error);  // it lacks sections

  // A model whose featurizer text changes reads the new one, not the file's JSON.
  AnyModel copy = full;
  copy.linear->features.clear();
  CHECK(copy.features().is_null());
  CHECK(full.features().contains("bucket_terms"));

  // The skipped sections are not read: corrupt, predict and eval still work, inspect refuses.
  REQUIRE(run(bin + " predict " + dir + "/m.json " + dir + "/test.jsonl -o " + dir + "/p.tsv") == 0);
  model["features"]["bucket_terms"]["buckets"][0] = "x";
  model["duals"]["alpha"][0] = "y";
  write_text(dir + "/bad.json", model.dump(1));
  REQUIRE(run(bin + " predict " + dir + "/bad.json " + dir + "/test.jsonl -o " + dir + "/q.tsv") == 0);
  CHECK(testutil::read_text(dir + "/p.tsv") == testutil::read_text(dir + "/q.tsv"));
  CHECK(run(bin + " eval " + dir + "/bad.json " + dir + "/test.jsonl > /dev/null") == 0);
  CHECK(run(bin + " inspect " + dir + "/bad.json > /dev/null") == 2);
  CHECK_THAT(last_stderr(), Catch::Contains("bad.json: /duals/alpha/0"));
  model["duals"]["alpha"][0] = 0.0;
  write_text(dir + "/bad.json", model.dump(1));
  CHECK(run(bin + " inspect " + dir + "/bad.json > /dev/null") == 2);
  CHECK_THAT(last_stderr(), Catch::Contains("bad.json: /features/bucket_terms"));
}
