// Raw text end to end: training on text equals training on the exported
// LIBSVM features, and the CLI keeps text and numeric models apart.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/engine.hpp"
#include "core/model.hpp"
#include "drivers/any_model.hpp"
#include "drivers/config.hpp"
#include "drivers/data.hpp"
#include "drivers/inspect.hpp"
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

TEST_CASE("predict reads hashed models in the compact form: bit-identical scores, a fraction of the memory", "[text]") {
  const TempDir tmp("compact-read");
  const std::string dir = tmp.path();
  const std::string bin = PEGASOS_BINARY;
  // Four classes of words, 2^20 hash buckets (the default featurisation): a
  // dense form of 4·2^20 weights, at the compact read's floor.
  const char* words[4][5] = {{"alpha", "beta", "gamma", "delta", "eps"},
                             {"red", "green", "blue", "cyan", "pink"},
                             {"oak", "elm", "ash", "fir", "yew"},
                             {"cod", "eel", "ray", "koi", "gar"}};
  std::string train, test;
  unsigned s = 5;
  auto next = [&] { return s = s * 1103515245u + 12345u, (s >> 16) & 0x7fff; };
  for (int i = 0; i < 240; ++i) {
    const int c = static_cast<int>(next() % 4);
    std::string text;
    for (int w = 0; w < 8; ++w) text += std::string(words[next() % 4 == 0 ? next() % 4 : c][next() % 5]) + " ";
    if (i % 7 == 0) text += "unseen" + std::to_string(i) + " ";  // test rows: words the model never saw
    (i < 180 ? train : test) += "{\"label\": \"c" + std::to_string(c) + "\", \"text\": \"" + text + "\"}\n";
  }
  write_text(dir + "/train.jsonl", train);
  write_text(dir + "/test.jsonl", test);
  REQUIRE(run(bin + " train -q --set objective=ova " + dir + "/train.jsonl " + dir + "/m.json") == 0);
  const AnyModel dense = AnyModel::load(dir + "/m.json", json_checks::ModelUse::kScoring);
  const AnyModel compact = AnyModel::load(dir + "/m.json", json_checks::ModelUse::kPredict);
  const std::size_t K = 4;
  REQUIRE(dense.linear->dimension == (1u << 20));
  REQUIRE(dense.linear->outputs == 4);
  REQUIRE(std::uint64_t{dense.linear->dimension} * K == Model::kCompactMinWeights);
  CHECK(dense.linear->weight_rows.empty());
  CHECK(dense.linear->weights.size() == (std::size_t{1} << 20) * K);
  // The compact rows: exactly the features with a weight in some class, in order.
  std::vector<std::uint32_t> used;
  for (std::uint32_t j = 0; j < dense.linear->dimension; ++j) {
    bool any = false;
    for (std::size_t k = 0; k < K; ++k) any = any || dense.linear->weights[j * K + k] != 0.0;
    if (any) used.push_back(j);
  }
  REQUIRE_FALSE(used.empty());
  CHECK(compact.linear->weight_rows == used);
  CHECK(compact.linear->weights.size() == used.size() * K);
  CHECK(compact.linear->weight_squared_norm() == dense.linear->weight_squared_norm());
  const Dataset data = dense.read(dir + "/test.jsonl", true);
  CHECK(bits(compact.scores(data)) == bits(dense.scores(data)));
  // The CLI's predict output equals the dense model's scores.
  REQUIRE(run(bin + " predict " + dir + "/m.json " + dir + "/test.jsonl -o " + dir + "/p.tsv") == 0);
  std::ostringstream want;
  const std::vector<double> sc = dense.scores(data);
  char buf[64];
  for (std::size_t i = 0; i < data.size(); ++i) {
    want << dense.classes()[static_cast<std::size_t>(dense.predict_class(&sc[i * K]))];
    for (std::size_t k = 0; k < K; ++k) {
      std::snprintf(buf, sizeof buf, "\t%.9g", sc[i * K + k]);
      want << buf;
    }
    want << "\n";
  }
  CHECK(testutil::read_text(dir + "/p.tsv") == want.str());
  // eval reads it compact too: the objective is the dense form's, to the bit,
  // from the API and from the CLI's --json.
  const double dense_objective = dense.objective(data);
  CHECK(bits(std::vector<double>{compact.objective(data)}) == bits(std::vector<double>{dense_objective}));
  REQUIRE(run(bin + " eval -j " + dir + "/e.json " + dir + "/m.json " + dir + "/test.jsonl > /dev/null") == 0);
  CHECK(nlohmann::json::parse(testutil::read_text(dir + "/e.json"))["objective"].get<double>() == dense_objective);
  // inspect reads it compact as well: the same report as from the dense form.
  const AnyModel full = AnyModel::load(dir + "/m.json");
  const AnyModel for_inspect = AnyModel::load(dir + "/m.json", json_checks::ModelUse::kInspect);
  REQUIRE(full.linear->weight_rows.empty());
  REQUIRE_FALSE(for_inspect.linear->weight_rows.empty());
  pegasos::InspectOptions all_features;
  all_features.top = 1u << 21;
  CHECK(pegasos::inspect_report(for_inspect, "m.json", all_features) == pegasos::inspect_report(full, "m.json", all_features));
  CHECK(pegasos::inspect_report(for_inspect, "m.json", {}) == pegasos::inspect_report(full, "m.json", {}));

  // By hand: a −0 bias and a row of features the model lacks (the dense form's
  // v·0 turns −0 into +0), one beyond the dimension, a negative value.
  const std::string hand = R"({"format_version": 1, "kind": "linear", "objective": "ova", "classes": ["a", "b", "c"],
    "dimension": 2097152, "outputs": 3, "bias_mode": "feature", "bias": [-0.0, 0.25, -0.0],
    "weights": [{"indices": [3, 70000], "values": [1.5, -2.0]}, {"indices": [70000, 131072], "values": [0.5, 4.0]},
                {"indices": [], "values": []}]})";
  write_text(dir + "/hand.json", hand);
  const AnyModel hd = AnyModel::load(dir + "/hand.json", json_checks::ModelUse::kScoring);
  const AnyModel hc = AnyModel::load(dir + "/hand.json", json_checks::ModelUse::kPredict);
  CHECK(hc.linear->weight_rows == std::vector<std::uint32_t>{2, 69999, 131071});
  Dataset rows;
  rows.dimension = 3000000;
  rows.classes = {"a", "b", "c"};
  const auto add = [&](std::vector<std::uint32_t> idx, std::vector<float> val, int label) {
    rows.append_row(idx, val, label);
  };
  add({5}, {1.0f}, 0);                             // a feature without weights: +0 from −0
  add({2, 69999, 2500000}, {-3.0f, 0.5f, 9.0f}, 0);  // beyond the dimension: ignored
  add({100, 131071}, {-1.0f, 2.0f}, 1);
  const std::vector<double> a = hd.scores(rows), b = hc.scores(rows);
  CHECK(bits(a) == bits(b));
  CHECK_FALSE(std::signbit(a[0]));  // row 0, class a: −0 + 1·0
  CHECK(std::signbit(hd.linear->bias[2]));
  // Under the floor (3·2^17 weights) predict keeps the dense form.
  std::string small = hand;
  small.replace(small.find("2097152"), 7, "131072");
  write_text(dir + "/small.json", small);
  CHECK(AnyModel::load(dir + "/small.json", json_checks::ModelUse::kPredict).linear->weight_rows.empty());
  // A model without a single weight (every class stored empty) is read dense: bias only.
  std::string empty = hand;
  empty.replace(empty.find("\"weights\""), std::string::npos,
                "\"weights\": [{\"indices\": [], \"values\": []}, {\"indices\": [], \"values\": []}, "
                "{\"indices\": [], \"values\": []}]}");
  write_text(dir + "/empty.json", empty);
  const AnyModel ez = AnyModel::load(dir + "/empty.json", json_checks::ModelUse::kPredict);
  CHECK(ez.linear->weight_rows.empty());
  CHECK(ez.linear->weights.size() == std::size_t{2097152} * 3);
  CHECK(bits(ez.scores(rows)) == bits(AnyModel::load(dir + "/empty.json", json_checks::ModelUse::kScoring).scores(rows)));
  // A corrupt compact-read file names its field as the dense read does.
  write_text(dir + "/bad.json", std::string(hand).replace(hand.find("[3, 70000]"), 10, "[70000, 3]"));
  CHECK(run(bin + " predict " + dir + "/bad.json " + dir + "/test.jsonl > /dev/null") == 2);
  CHECK_THAT(last_stderr(), Catch::Contains("bad.json") && Catch::Contains("/weights/0/indices/1"));
}
