// Warm starts (init_model): a run from an earlier model's state reaches the
// cold run's objective, deterministically; mismatched models are refused
// (exit 2 naming the model file and the field), through the real binary.
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/solver.hpp"
#include "drivers/any_model.hpp"
#include "drivers/api.hpp"
#include "drivers/duals.hpp"
#include "drivers/experiment.hpp"
#include "drivers/warm_start.hpp"
#include "io/model_json.hpp"
#include "objectives/hinge.hpp"
#include "objectives/multiclass_hinge.hpp"
#include "objectives/weighted_hinge.hpp"
#include "tests/fixtures.hpp"
#include "tests/test_util.hpp"

namespace {

using namespace pegasos;
using Catch::Contains;

WarmStart warm_from(const TrainResult& r, std::uint64_t steps) {
  WarmStart w;
  w.weights = r.weights;
  w.bias = r.bias;
  w.steps = steps;
  return w;
}

EngineSettings automatic(Solver solver, double lambda) {
  EngineSettings s;
  s.solver = solver;
  s.lambda = lambda;
  return s;
}

// Both certified, and within the tolerance of each other (each is within
// tolerance·P of the same optimum).
void check_same_optimum(const TrainResult& cold, const TrainResult& warm, double tolerance) {
  REQUIRE(cold.converged);
  REQUIRE(warm.converged);
  CHECK(std::abs(warm.objective - cold.objective) <= tolerance * cold.objective);
  CHECK(warm.dual_objective <= cold.objective * (1 + 1e-12));
  CHECK(cold.dual_objective <= warm.objective * (1 + 1e-12));
}


// The first n rows of `all` (yesterday's data, when `all` is today's).
Dataset first_rows(const Dataset& all, std::size_t n) {
  std::vector<std::size_t> rows(n);
  std::iota(rows.begin(), rows.end(), std::size_t{0});
  return subset(all, rows);
}

}  // namespace

TEST_CASE("warm start from the optimum on the same data: SDCA, binary", "[warm]") {
  const Dataset ds = fixtures::gaussian(400, 20, 3, 0.8);
  const EngineSettings s = automatic(Solver::kSdca, 1e-2);
  const TrainResult cold = train_with_solver(ds, Hinge(1), s);
  const WarmStart w = warm_from(cold, cold.iterations);
  const TrainResult warm = train_with_solver(ds, Hinge(1), s, {}, &w);
  check_same_optimum(cold, warm, s.tolerance);
  // The dual point rebuilt from the optimum's margins is within the
  // tolerance already: the first exact check (after min_epochs) certifies it.
  INFO("cold passes " << cold.epochs << ", warm " << warm.epochs);
  CHECK(warm.epochs <= 3.0);
  CHECK(warm.epochs < cold.epochs / 2);
  // Determinism: the same seed gives the same weights.
  const TrainResult again = train_with_solver(ds, Hinge(1), s, {}, &w);
  CHECK(testutil::bits(again.weights) == testutil::bits(warm.weights));
}

TEST_CASE("warm start from an earlier day: SDCA reaches the cold objective", "[warm]") {
  const Dataset all = fixtures::gaussian(600, 20, 5, 0.8);
  const Dataset day1 = first_rows(all, 500);
  const EngineSettings s = automatic(Solver::kSdca, 1e-3);
  const TrainResult yesterday = train_with_solver(day1, Hinge(1), s);
  const TrainResult cold = train_with_solver(all, Hinge(1), s);
  const WarmStart w = warm_from(yesterday, yesterday.iterations);
  const TrainResult warm = train_with_solver(all, Hinge(1), s, {}, &w);
  check_same_optimum(cold, warm, s.tolerance);
}

TEST_CASE("warm start: Crammer-Singer SDCA and Pegasos reach the cold objective", "[warm]") {
  const Dataset ds = fixtures::blobs(300, 6, 3, 9, 0.9);
  const EngineSettings s = automatic(Solver::kSdca, 1e-2);
  const MulticlassHinge cs(3);
  const TrainResult cold = train_with_solver(ds, cs, s);
  const WarmStart w = warm_from(cold, cold.iterations);
  check_same_optimum(cold, train_with_solver(ds, cs, s, {}, &w), s.tolerance);

  // Pegasos from its own earlier model: at its step count the schedule's
  // steps are small, the iterate stays near the optimum and is certified.
  const EngineSettings p = automatic(Solver::kPegasos, 1e-1);
  const Dataset bin = fixtures::gaussian(300, 10, 4, 0.9);
  const TrainResult pcold = train_with_solver(bin, Hinge(1), p);
  const WarmStart pw = warm_from(pcold, pcold.iterations);
  const TrainResult pwarm = train_with_solver(bin, Hinge(1), p, {}, &pw);
  check_same_optimum(pcold, pwarm, p.tolerance);
  CHECK(pwarm.epochs <= pcold.epochs);
  const TrainResult pagain = train_with_solver(bin, Hinge(1), p, {}, &pw);
  CHECK(testutil::bits(pagain.weights) == testutil::bits(pwarm.weights));
}

TEST_CASE("warm start: Pegasos from an earlier day takes no longer than training from zero", "[warm]") {
  // Yesterday's run took 42 epochs (λ = 0.01 on 1800 rows); today adds 600
  // rows from a shifted distribution. At yesterday's whole step count the
  // schedule would weigh its rows 42 epochs against today's: 176 epochs where
  // a cold run takes 14 (the warm start at most 4 epochs' worth: 16).
  const EngineSettings p = automatic(Solver::kPegasos, 1e-2);
  const Dataset day1 = fixtures::gaussian(1800, 20, 12, 0.8, 0.1);
  const Dataset shifted = fixtures::gaussian(600, 20, 13, 0.8, 0.3);
  Dataset all = day1;
  for (std::size_t i = 0; i < shifted.size(); ++i) {
    const RowView x = shifted.row(i);
    all.append_row(std::span<const std::uint32_t>(x.indices, x.nnz), std::span<const float>(x.values, x.nnz),
                   x.label);
  }
  const TrainResult yesterday = train_with_solver(day1, Hinge(1), p);
  const TrainResult cold = train_with_solver(all, Hinge(1), p);
  const WarmStart w = warm_from(yesterday, yesterday.iterations);
  const TrainResult warm = train_with_solver(all, Hinge(1), p, {}, &w);
  INFO("day 1 " << yesterday.epochs << " epochs, cold " << cold.epochs << ", warm " << warm.epochs);
  check_same_optimum(cold, warm, p.tolerance);
  CHECK(warm.epochs <= 1.5 * cold.epochs);
}

namespace {

std::string rows(std::uint64_t seed, std::size_t n, const char* pos, const char* neg, int extra_index = 0) {
  Rng rng(seed);
  std::string s;
  char buf[200];
  for (std::size_t i = 0; i < n; ++i) {
    const bool p = rng.below(2) == 1;
    std::snprintf(buf, sizeof buf, "%s 1:%.5f 2:%.5f 3:%.5f", p ? pos : neg, (p ? 1 : -1) * (0.2 + rng.uniform()),
                  rng.uniform() - 0.5, rng.uniform() - 0.5);
    s += buf;
    if (extra_index > 0 && i == 0) s += " " + std::to_string(extra_index) + ":1";
    s += "\n";
  }
  return s;
}

}  // namespace

TEST_CASE("train --init-model: warm-started model, summary, mismatches exit 2", "[warm][cli]") {
  testutil::TempDir dir("warm");
  const std::string day1 = dir.write("day1.svm", rows(1, 200, "spam", "ham"));
  const std::string all = dir.write("all.svm", rows(1, 200, "spam", "ham") + rows(2, 40, "spam", "ham"));
  const std::string old = dir.file("old.json");
  REQUIRE(testutil::pegasos_run(dir, "train --set lambda=0.01 '" + day1 + "' '" + old + "'").code == 0);

  const testutil::Run warm = testutil::pegasos_run(dir, "train --set lambda=0.01 --init-model '" + old + "' '" + all + "' '" + dir.file("new.json") + "'");
  REQUIRE(warm.code == 0);
  CHECK_THAT(warm.err, Contains("warm-started from " + old + ", stored duals for "));
  CHECK_THAT(warm.err, Contains(" of 240 rows)"));
  const nlohmann::json model = nlohmann::json::parse(testutil::read_text(dir.file("new.json")));
  CHECK(model["training"]["warm_start"] == old);
  CHECK(model["training"]["converged"] == true);
  const nlohmann::json before = nlohmann::json::parse(testutil::read_text(old));
  CHECK(model["training"]["schedule_steps"].get<std::uint64_t>() ==
        before["training"]["iterations"].get<std::uint64_t>() + model["training"]["iterations"].get<std::uint64_t>());
  CHECK(model["settings"]["init_model"] == old);
  CHECK_FALSE(before["settings"].contains("init_model"));  // a cold model echoes its settings as before
  // Determinism: the same seed gives the same file (timings are not in it).
  REQUIRE(testutil::pegasos_run(dir, "train --set lambda=0.01 --set init_model='\"" + old + "\"' '" + all + "' '" + dir.file("again.json") + "'").code == 0);
  CHECK(testutil::read_text(dir.file("again.json")) == testutil::read_text(dir.file("new.json")));

  const auto refused = [&](const std::string& args, const std::string& data, const std::string& field) {
    const testutil::Run r = testutil::pegasos_run(dir, "train " + args + " --init-model '" + old + "' '" + data + "' '" + dir.file("x.json") + "'");
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains(field));
  };
  refused("", dir.write("labels.svm", rows(3, 50, "a", "b")), old + ": classes:");
  refused("", dir.write("wide.svm", rows(4, 50, "spam", "ham", 9)), old + ": dimension:");
  refused("--set objective=ova", all, old + ": objective:");
  refused("--set bias=none", all, old + ": bias_mode:");
  refused("--set normalize=l2", all, old + ": normalize:");
  refused("--set objective=kernel_hinge", all, "init_model: warm start is for the linear objectives");
  refused("", dir.write("text.jsonl", "{\"text\": \"buy now\", \"label\": \"spam\"}\n{\"text\": \"hello\", \"label\": \"ham\"}\n"),
          old + ": features:");
  refused("", dir.file("missing.svm"), "missing.svm");
}

TEST_CASE("train --init-model: one-vs-all continues per class", "[warm][cli]") {
  testutil::TempDir dir("warm-ova");
  std::string three;
  Rng rng(7);
  for (int i = 0; i < 240; ++i) {
    const int k = static_cast<int>(rng.below(3));
    char buf[120];
    std::snprintf(buf, sizeof buf, "%d 1:%.4f 2:%.4f 3:%.4f\n", k + 1, (k == 0) + 0.3 * rng.uniform(),
                  (k == 1) + 0.3 * rng.uniform(), (k == 2) + 0.3 * rng.uniform());
    three += buf;
  }
  const std::string data = dir.write("three.svm", three);
  for (const char* objective : {"ova", "multiclass_hinge"}) {
    const std::string sets = std::string("--set objective=") + objective + " --set lambda=0.01 ";
    REQUIRE(testutil::pegasos_run(dir, "train " + sets + "'" + data + "' '" + dir.file("old.json") + "'").code == 0);
    REQUIRE(testutil::pegasos_run(dir, "train " + sets + "--init-model '" + dir.file("old.json") + "' '" + data + "' '" + dir.file("new.json") + "'").code == 0);
    const auto cold = nlohmann::json::parse(testutil::read_text(dir.file("old.json")))["training"];
    const auto warm = nlohmann::json::parse(testutil::read_text(dir.file("new.json")))["training"];
    INFO(objective);
    CHECK(warm["converged"] == true);
    CHECK(std::abs(warm["objective"].get<double>() - cold["objective"].get<double>()) <=
          cold["tolerance"].get<double>() * cold["objective"].get<double>());
  }
}

TEST_CASE("api: warm start on rows in memory, and a kernel model refused", "[warm]") {
  testutil::TempDir dir("warm-api");
  const std::string old = dir.file("old.json");
  const Dataset day1 = fixtures::gaussian(200, 8, 11, 0.9);
  pegasos::api::train(pegasos::api::Settings::load("", {"lambda=0.01"}), day1).save(old);
  const Dataset all = fixtures::gaussian(240, 8, 11, 0.9);
  const pegasos::api::Model warm =
      pegasos::api::train(pegasos::api::Settings::load("", {"lambda=0.01", "init_model=\"" + old + "\""}), all);
  const nlohmann::json training = warm.any().training();
  CHECK(training["warm_start"] == old);
  CHECK(training["converged"] == true);
  const pegasos::api::Model cold = pegasos::api::train(pegasos::api::Settings::load("", {"lambda=0.01"}), all);
  CHECK(std::abs(training["objective"].get<double>() - cold.any().training()["objective"].get<double>()) <=
        cold.any().training()["tolerance"].get<double>() * cold.any().training()["objective"].get<double>());

  const std::string kernel = dir.file("kernel.json");
  pegasos::api::train(pegasos::api::Settings::load("", {"objective=kernel_hinge", "epochs=1"}), day1).save(kernel);
  CHECK_THROWS_WITH(
      pegasos::api::train(pegasos::api::Settings::load("", {"lambda=0.01", "init_model=\"" + kernel + "\""}), all),
      Contains(kernel + ": a kernel model"));
}

// Stored dual variables (the model's `duals` section): what a warm start
// resumes SDCA from.
TEST_CASE("stored duals: round trip, and a warm start on the same data certifies in <= 2 passes", "[warm][duals]") {
  testutil::TempDir dir("warm-duals");
  const Dataset ds = fixtures::gaussian(500, 20, 21, 0.8);
  const auto settings = [](std::vector<std::string> extra) {
    extra.push_back("lambda=1e-3");
    return pegasos::api::Settings::load("", extra);
  };
  const pegasos::api::Model cold = pegasos::api::train(settings({}), ds);
  const std::string old = dir.file("old.json");
  cold.save(old);
  const Model& in_memory = *cold.any().linear;
  REQUIRE(in_memory.duals.has_value());
  const StoredDuals& stored = *in_memory.duals;
  CHECK(stored.outputs == 1);
  CHECK(!stored.rows.empty());
  CHECK(stored.rows.size() < ds.size());  // only the support vectors
  CHECK(stored.alpha.size() == stored.rows.size());
  for (const double a : stored.alpha) CHECK((a > 0.0 && a <= 1.0));
  // load → the same values, bit for bit (and the same file again).
  const Model loaded = load_model(old);
  REQUIRE(loaded.duals.has_value());
  CHECK(loaded.duals->rows == stored.rows);
  CHECK(testutil::bits(loaded.duals->alpha) == testutil::bits(stored.alpha));
  CHECK(model_to_json(loaded) == testutil::read_text(old));
  // Every stored row is found in the same data again.
  std::size_t matched = 0;
  const std::vector<double> fractions = match_duals(*loaded.duals, ds, -1, matched);
  CHECK(matched == stored.rows.size());

  const pegasos::api::Model warm = pegasos::api::train(settings({"init_model=\"" + old + "\""}), ds);
  const nlohmann::json t = warm.any().training(), c = cold.any().training();
  INFO("cold passes " << c["epochs"] << ", warm " << t["epochs"]);
  CHECK(t["converged"] == true);
  CHECK(t["epochs"].get<double>() <= 2.0);
  CHECK(std::abs(t["objective"].get<double>() - c["objective"].get<double>()) <= c["tolerance"].get<double>() * c["objective"].get<double>());

  // keep_duals false: no section; the warm start falls back to the margins.
  const pegasos::api::Model plain = pegasos::api::train(settings({"keep_duals=false"}), ds);
  CHECK_FALSE(plain.any().linear->duals.has_value());
  plain.save(dir.file("plain.json"));
  const pegasos::api::Model fallback = pegasos::api::train(settings({"init_model=\"" + dir.file("plain.json") + "\""}), ds);
  CHECK(fallback.any().training()["converged"] == true);
}

TEST_CASE("stored duals: one-vs-all and Crammer-Singer store K values per row and warm-start", "[warm][duals]") {
  testutil::TempDir dir("warm-duals-k");
  const Dataset ds = fixtures::blobs(300, 6, 3, 9, 0.9);
  for (const char* objective : {"ova", "multiclass_hinge"}) {
    const auto settings = [&](std::vector<std::string> extra) {
      extra.push_back("lambda=1e-2");
      extra.push_back(std::string("objective=") + objective);
      return pegasos::api::Settings::load("", extra);
    };
    const pegasos::api::Model cold = pegasos::api::train(settings({}), ds);
    INFO(objective);
    REQUIRE(cold.any().linear->duals.has_value());
    CHECK(cold.any().linear->duals->outputs == 3);
    CHECK(cold.any().linear->duals->alpha.size() == 3 * cold.any().linear->duals->rows.size());
    cold.save(dir.file("old.json"));
    const pegasos::api::Model warm = pegasos::api::train(settings({"init_model=\"" + dir.file("old.json") + "\""}), ds);
    const nlohmann::json t = warm.any().training(), c = cold.any().training();
    CHECK(t["converged"] == true);
    CHECK(t["epochs"].get<double>() <= 2.0);
    CHECK(std::abs(t["objective"].get<double>() - c["objective"].get<double>()) <= c["tolerance"].get<double>() * c["objective"].get<double>());
  }
}

TEST_CASE("stored duals: a row hashes the same however it is read again", "[warm][duals]") {
  testutil::TempDir dir("warm-hash");
  // LIBSVM: the same line at another position of another file, with other spacing.
  const std::string a = dir.write("a.svm", "1 1:0.5 3:-2.25 7:1e-3\n-1 2:1\n");
  const std::string b = dir.write("b.svm", "-1 4:1\n-1 2:1\n+1  1:0.5 3:-2.25   7:0.001\n1 1:0.5 3:-2.25 7:1e-3\n");
  const pegasos::api::Model numeric = pegasos::api::train(pegasos::api::Settings::load("", {"lambda=0.1"}), a).model;
  const Dataset da = numeric.read(a, true), db = numeric.read(b, true);
  const auto hash = [](const Dataset& d, std::size_t i) { return row_hash(d.row(i), d.classes[static_cast<std::size_t>(d.row(i).label)]); };
  CHECK(hash(da, 0) == hash(db, 2));
  CHECK(hash(da, 0) == hash(db, 3));
  CHECK(hash(da, 1) == hash(db, 1));
  CHECK(hash(da, 0) != hash(da, 1));
  CHECK(row_hash(da.row(0), "-1") != hash(da, 0));  // the label is part of the content

  // Raw text: the same document featurised twice with the model's featurizer,
  // in files of other documents (day 1 and day 1 + 2).
  const std::string day1 = dir.write("d1.jsonl",
                                     "{\"text\": \"cheap pills buy now\", \"label\": \"spam\"}\n"
                                     "{\"text\": \"meeting at noon tomorrow\", \"label\": \"ham\"}\n");
  const std::string day2 = dir.write("d2.jsonl",
                                     "{\"text\": \"lunch on friday\", \"label\": \"ham\"}\n"
                                     "{\"text\": \"meeting at noon tomorrow\", \"label\": \"ham\"}\n"
                                     "{\"text\": \"cheap pills buy now\", \"label\": \"spam\"}\n");
  const pegasos::api::Model text = pegasos::api::train(pegasos::api::Settings::load("", {"lambda=0.1"}), day1).model;
  const Dataset t1 = text.read(day1, true), t2 = text.read(day2, true), again = text.read(day1, true);
  CHECK(hash(t1, 0) == hash(t2, 2));
  CHECK(hash(t1, 1) == hash(t2, 1));
  CHECK(hash(t1, 0) == hash(again, 0));
  CHECK(hash(t1, 0) != hash(t1, 1));
}

TEST_CASE("stored duals: rows hashed on a thread of their own, or before training, give the same entries", "[warm][duals]") {
  // Duplicated rows (the same content twice) share an entry, the mean of their fractions.
  Dataset ds = fixtures::gaussian(3000, 12, 5, 0.7);
  std::vector<std::size_t> rows(ds.size());
  std::iota(rows.begin(), rows.end(), std::size_t{0});
  for (std::size_t i = 0; i < 500; ++i) rows.push_back(i * 3);
  ds = subset(ds, rows);
  std::vector<double> fraction(ds.size());
  for (std::size_t i = 0; i < fraction.size(); ++i) fraction[i] = (i % 7 == 0) ? 0.0 : static_cast<double>(i % 11) / 10;
  std::string note;
  const std::optional<StoredDuals> inline_hashes = collect_duals(ds, fraction, 1, note);
  RowHashJob job(ds, true), later(ds, false), known(row_hashes(ds));
  const std::optional<StoredDuals> background = collect_duals(ds, fraction, 1, note, &job);
  const std::optional<StoredDuals> deferred = collect_duals(ds, fraction, 1, note, &later);
  const std::optional<StoredDuals> given = collect_duals(ds, fraction, 1, note, &known);
  REQUIRE(inline_hashes.has_value());
  REQUIRE(background.has_value());
  REQUIRE(deferred.has_value());
  CHECK(inline_hashes->rows.size() < ds.size() - 400);  // shared and zero entries left out
  CHECK(background->rows == inline_hashes->rows);
  CHECK(testutil::bits(background->alpha) == testutil::bits(inline_hashes->alpha));
  CHECK(deferred->rows == inline_hashes->rows);
  CHECK(testutil::bits(deferred->alpha) == testutil::bits(inline_hashes->alpha));
  REQUIRE(given.has_value());
  CHECK(given->rows == inline_hashes->rows);
  CHECK(testutil::bits(given->alpha) == testutil::bits(inline_hashes->alpha));
  // Against a brute-force count: one entry per distinct row with a non-zero mean.
  std::map<std::uint64_t, std::pair<double, int>> sums;
  for (std::size_t i = 0; i < ds.size(); ++i) {
    auto& e = sums[row_hash(ds.row(i), ds.classes[static_cast<std::size_t>(ds.row(i).label)])];
    e.first += fraction[i];
    ++e.second;
  }
  std::size_t nonzero = 0;
  for (const auto& [h, e] : sums) nonzero += e.first != 0.0 ? 1 : 0;
  CHECK(background->rows.size() == nonzero);
}

TEST_CASE("stored duals: a corrupt duals section is refused where it is read, exit 2 naming the field", "[warm][duals][cli]") {
  testutil::TempDir dir("warm-duals-bad");
  const std::string data = dir.write("data.svm", rows(1, 200, "spam", "ham"));
  const std::string old = dir.file("old.json");
  REQUIRE(testutil::pegasos_run(dir, "train --set lambda=0.01 '" + data + "' '" + old + "'").code == 0);
  const nlohmann::json good = nlohmann::json::parse(testutil::read_text(old));
  REQUIRE(good.contains("duals"));
  REQUIRE(good["duals"]["rows"].size() >= 2);
  const testutil::Run predicted = testutil::pegasos_run(dir, "predict '" + old + "' '" + data + "'");
  REQUIRE(predicted.code == 0);
  const auto refused = [&](const std::function<void(nlohmann::json&)>& corrupt, const std::string& field) {
    nlohmann::json j = good;
    corrupt(j["duals"]);
    testutil::write_text(dir.file("bad.json"), j.dump(1));
    for (const std::string& command :
         {"train --init-model '" + dir.file("bad.json") + "' '" + data + "' '" + dir.file("x.json") + "'",
          "inspect '" + dir.file("bad.json") + "'"}) {
      const testutil::Run r = testutil::pegasos_run(dir, command);
      INFO(command << "\n" << r.err);
      CHECK(r.code == 2);
      CHECK_THAT(r.err, Contains(dir.file("bad.json") + ": /duals" + field));
    }
    // predict (and eval) read only what scoring needs: the same predictions.
    const testutil::Run r = testutil::pegasos_run(dir, "predict '" + dir.file("bad.json") + "' '" + data + "'");
    CHECK(r.code == 0);
    CHECK(r.out == predicted.out);
  };
  refused([](nlohmann::json& d) { d["hash"] = "md5"; }, "/hash");
  refused([](nlohmann::json& d) { d["outputs"] = 2; }, "/outputs");
  refused([](nlohmann::json& d) { d["rows"][0] = "xyz"; }, "/rows/0");
  refused([](nlohmann::json& d) { d["rows"][1] = d["rows"][0]; }, "/rows/1");
  refused([](nlohmann::json& d) { d["alpha"][0] = 1.5; }, "/alpha/0");
  refused([](nlohmann::json& d) { d["alpha"][1] = "x"; }, "/alpha/1");
  refused([](nlohmann::json& d) { d["alpha"].erase(0); }, "/alpha");
  refused([](nlohmann::json& d) { d.erase("rows"); }, "/rows");
  refused([](nlohmann::json& d) { d = 3; }, ": expected an object");
}

TEST_CASE("stored duals: one more day with 1% new rows takes fewer passes than training from zero", "[warm][duals]") {
  testutil::TempDir dir("warm-day2");
  const Dataset all = fixtures::gaussian(1000, 20, 23, 0.8);
  const Dataset day1 = first_rows(all, 990);
  const auto settings = [](std::vector<std::string> extra) {
    extra.push_back("lambda=1e-3");
    return pegasos::api::Settings::load("", extra);
  };
  const std::string old = dir.file("yesterday.json");
  pegasos::api::train(settings({}), day1).save(old);
  const nlohmann::json cold = pegasos::api::train(settings({}), all).any().training();
  const nlohmann::json warm = pegasos::api::train(settings({"init_model=\"" + old + "\""}), all).any().training();
  INFO("cold passes " << cold["epochs"] << ", warm " << warm["epochs"]);
  REQUIRE(cold["converged"] == true);
  REQUIRE(warm["converged"] == true);
  CHECK(warm["epochs"].get<double>() < cold["epochs"].get<double>());
  CHECK(std::abs(warm["objective"].get<double>() - cold["objective"].get<double>()) <=
        cold["tolerance"].get<double>() * cold["objective"].get<double>());
}

TEST_CASE("stored duals: rows that share a hash are counted, and further copies start as new rows", "[warm][duals]") {
  // 300 rows, the first 60 twice: an entry per distinct support vector, with
  // the number of training rows that share it.
  const Dataset base = fixtures::gaussian(300, 12, 31, 0.8);
  std::vector<std::size_t> twice(300);
  std::iota(twice.begin(), twice.end(), std::size_t{0});
  for (std::size_t i = 0; i < 60; ++i) twice.push_back(i);
  const Dataset ds = subset(base, twice);
  const auto settings = [](std::vector<std::string> extra) {
    extra.push_back("lambda=1e-3");
    return pegasos::api::Settings::load("", extra);
  };
  testutil::TempDir dir("warm-copies");
  const std::string old = dir.file("old.json");
  pegasos::api::train(settings({}), ds).save(old);
  const Model loaded = load_model(old);
  REQUIRE(loaded.duals.has_value());
  const StoredDuals& d = *loaded.duals;
  REQUIRE(d.copies.size() == d.rows.size());  // some support vector is among the repeated rows
  CHECK(model_to_json(loaded) == testutil::read_text(old));  // the counts read back and write the same text
  // Brute force: each entry's count is the number of rows with its hash.
  const std::vector<std::uint64_t> hash = row_hashes(ds);
  std::map<std::uint64_t, std::uint32_t> count;
  for (const std::uint64_t h : hash) ++count[h];
  std::size_t shared = 0;
  for (std::size_t e = 0; e < d.rows.size(); ++e) {
    CHECK(d.copies[e] == count[d.rows[e]]);
    shared += d.copies[e] > 1;
  }
  CHECK(shared > 0);
  // Today's data has a third copy of each repeated row: it starts at 0 like
  // any new row, so w(α) is yesterday's (every duplicate taking the entry
  // counted those rows' α once more).
  for (std::size_t i = 0; i < 60; ++i) twice.push_back(i);
  const Dataset today = subset(base, twice);
  std::size_t matched = 0, expected = 0;
  const std::vector<std::ptrdiff_t> entries = dual_entries(d, today, matched);
  for (const std::uint32_t c : d.copies) expected += c;
  CHECK(matched == expected);
  for (std::size_t i = 360; i < 420; ++i) CHECK(entries[i] < 0);
  // Without counts (a file from before them) every copy gets the entry.
  StoredDuals legacy = d;
  legacy.copies.clear();
  std::size_t legacy_matched = 0;
  dual_entries(legacy, today, legacy_matched);
  CHECK(legacy_matched > matched);
  // The counts survive a save and load, and a corrupt count is refused.
  nlohmann::json j = nlohmann::json::parse(testutil::read_text(old));
  REQUIRE(j["duals"].contains("copies"));
  j["duals"]["copies"][0] = 0;
  testutil::write_text(dir.file("bad.json"), j.dump(1));
  const testutil::Run r = testutil::pegasos_run(dir, "inspect '" + dir.file("bad.json") + "'");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains(dir.file("bad.json") + ": /duals/copies/0"));
}

TEST_CASE("stored duals: a warm start with another lambda, n or class cost keeps each row's coefficient", "[warm][duals]") {
  // Yesterday: n = 100, λ = 0.01, class costs {1, 2}; today: n = 200, the
  // same λ, costs {1, 4}. Binary w = (1/(λn)) Σ α_i y_i x_i with α_i = f_i c_i:
  // a row keeps its coefficient f·c/(λn) when f_today = f·(c_old/c_new)·(λ'n'/(λn)).
  Dataset today;
  today.classes = {"a", "b"};
  const std::uint32_t idx[] = {0};
  for (std::size_t i = 0; i < 200; ++i) {
    const float v[] = {static_cast<float>(i + 1)};
    today.append_row(idx, v, i % 2 == 0 ? 0 : 1);
  }
  today.dimension = 1;
  Model old;
  old.objective = "weighted_hinge";
  old.classes = today.classes;
  old.dimension = 1;
  old.weights = {0.0};
  old.bias = {0.0};
  old.lambda = 0.01;
  old.training.examples = 100;
  old.training.class_cost = std::vector<double>{1.0, 2.0};
  const std::vector<std::uint64_t> hash = row_hashes(today);
  // Rows 0 and 2 (class a) at 0.3 and 0.7, row 1 (class b) at 0.4.
  std::vector<std::pair<std::uint64_t, double>> entries = {{hash[0], 0.3}, {hash[2], 0.7}, {hash[1], 0.4}};
  std::sort(entries.begin(), entries.end());
  StoredDuals d;
  for (const auto& [h, f] : entries) {
    d.rows.push_back(h);
    d.alpha.push_back(f);
  }
  old.duals = d;
  const std::vector<double> carry = dual_carry_factors(old, 0.01, today, {1.0, 4.0});
  REQUIRE(carry.size() == 2);
  CHECK(carry[0] == Approx(2.0));  // (1/1)·(0.01·200)/(0.01·100)
  CHECK(carry[1] == Approx(1.0));  // (2/4)·2
  const WarmStart w = warm_start_of(old, today, -1, nullptr, &carry);
  REQUIRE(w.stored_alpha.size() == 200);
  CHECK(w.stored_alpha[0] == Approx(0.6));
  CHECK(w.stored_alpha[2] == Approx(1.4));  // carried as is: alpha_from_stored clips it (clip_stored_alpha)
  CHECK(w.stored_alpha[1] == Approx(0.4));
  CHECK(std::isnan(w.stored_alpha[3]));  // a new row
  // The unclipped rows' coefficients, yesterday's and today's.
  CHECK(0.6 * 1.0 / (0.01 * 200) == Approx(0.3 * 1.0 / (0.01 * 100)));
  CHECK(0.4 * 4.0 / (0.01 * 200) == Approx(0.4 * 2.0 / (0.01 * 100)));
  // Without the old model's n there is nothing to carry: the fractions stay.
  old.training.examples.reset();
  CHECK(dual_carry_factors(old, 0.01, today, {1.0, 4.0}).empty());
  CHECK(warm_start_of(old, today, -1, nullptr, nullptr).stored_alpha[0] == 0.3);
}

TEST_CASE("stored duals: mass clipped off rows whose bound shrank goes to the free rows of their sign", "[warm][duals]") {
  Dataset d;
  d.classes = {"neg", "pos"};
  const std::uint32_t idx[] = {0};
  const float v[] = {1.0f};
  const int labels[] = {1, 1, 1, 0, 0, 0, 1};
  for (int label : labels) d.append_row(idx, v, label);
  d.dimension = 1;
  const WeightedHinge objective(1, {1.0, 1.0}, 1.0);
  const std::vector<double> bound(7, 1.0);
  const auto signed_sums = [&](const std::vector<double>& a) {
    double pos = 0.0, neg = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) (labels[i] == 1 ? pos : neg) += a[i];
    return std::pair<double, double>{pos, neg};
  };
  SECTION("one round") {
    // Row 0 carried past its bound; rows 1, 2 free positives; row 3 a
    // negative at its bound, row 4 free, row 5 at 0; row 6 a positive at 0.
    std::vector<double> a = {1.3, 0.5, 0.25, 1.0, 0.2, 0.0, 0.0};
    const auto before = signed_sums(a);
    clip_stored_alpha(d, objective, a, bound, 1.0);
    CHECK(a[0] == 1.0);
    CHECK(a[1] == Approx(0.5 * 1.4));  // 0.3 lost over 0.75 of free mass: × 1.4
    CHECK(a[2] == Approx(0.25 * 1.4));
    CHECK(a[3] == 1.0);
    CHECK(a[4] == 0.2);  // nothing was clipped on the negative side
    CHECK(a[5] == 0.0);
    CHECK(a[6] == 0.0);  // rows at 0 stay there
    CHECK(signed_sums(a).first == Approx(before.first));
    CHECK(signed_sums(a).second == Approx(before.second));
  }
  SECTION("what the free rows cannot take comes off the other sign") {
    // Positives lose 0.5 and have no free row; the negatives (1.0 + 0.25)
    // give up 0.5 in proportion: × 0.6.
    std::vector<double> a = {1.5, 1.0, 0.0, 1.0, 0.25, 0.0, 0.0};
    const auto before = signed_sums(a);
    clip_stored_alpha(d, objective, a, bound, 1.0);
    CHECK(a[0] == 1.0);
    CHECK(a[1] == 1.0);
    CHECK(a[3] == Approx(0.6));
    CHECK(a[4] == Approx(0.15));
    CHECK(signed_sums(a).first - signed_sums(a).second == Approx(before.first - before.second));
  }
  SECTION("without an intercept the rows are only clipped") {
    std::vector<double> a = {1.3, 0.5, 0.25, 1.0, 0.2, 0.0, 0.0};
    clip_stored_alpha(d, objective, a, bound, 0.0);
    CHECK(a == std::vector<double>{1.0, 0.5, 0.25, 1.0, 0.2, 0.0, 0.0});
  }
  SECTION("a free row lifted to its bound passes the rest on") {
    std::vector<double> a = {1.5, 0.9, 0.1, 0.0, 0.0, 0.0, 0.0};
    const double before = signed_sums(a).first;
    clip_stored_alpha(d, objective, a, bound, 1.0);
    CHECK(a[0] == 1.0);
    CHECK(a[1] == 1.0);
    CHECK(a[2] == Approx(0.5));
    CHECK(signed_sums(a).first == Approx(before));
  }
}

TEST_CASE("stored duals: a day of one class keeps the warm point's intercept (balanced weights)", "[warm][duals]") {
  // Day 1: noisy data, balanced class weights, bias feature 1; day 2 adds
  // 10% rows of the negative class only, so the negative cost falls relative
  // to λn and day 1's negative rows at their bound do not fit under it. The
  // warm dual point must keep w_old's intercept and objective; without giving
  // the clipped mass back (the fractions clipped at 1) it does not.
  const Dataset all = fixtures::gaussian(1400, 10, 5, 1.0, 0.3);
  std::vector<std::size_t> first, extra;
  for (std::size_t i = 0; i < all.size(); ++i) (i < 1000 ? first : extra).push_back(i);
  std::vector<std::size_t> today_rows = first;
  for (std::size_t i : extra) {
    if (all.labels[i] == 0 && today_rows.size() < 1100) today_rows.push_back(i);
  }
  const Dataset day1 = subset(all, first), day2 = subset(all, today_rows);
  const auto balanced = [](const Dataset& ds) {
    double n1 = 0;
    for (std::size_t i = 0; i < ds.size(); ++i) n1 += ds.labels[i] == 1;
    const double n = static_cast<double>(ds.size());
    return std::vector<double>{n / (2 * (n - n1)), n / (2 * n1)};
  };
  const auto mean_cost = [](const Dataset& ds, const std::vector<double>& c) {
    double m = 0;
    for (std::size_t i = 0; i < ds.size(); ++i) m += c[static_cast<std::size_t>(ds.labels[i])];
    return m / static_cast<double>(ds.size());
  };
  const std::vector<double> c1 = balanced(day1), c2 = balanced(day2);
  const WeightedHinge o1(1, c1, mean_cost(day1, c1)), o2(1, c2, mean_cost(day2, c2));
  EngineSettings s = automatic(Solver::kSdca, 1e-3);
  s.tolerance = 1e-6;
  s.bias = BiasMode::kFeature;
  s.bias_feature_value = 1.0;
  const TrainResult r1 = train_sdca(day1, o1, s);
  REQUIRE(r1.converged);
  const std::vector<double> f1 = box_fractions(day1, o1, s.lambda, r1.alpha);
  // Carried as the driver does: f · (c_old / c_new) · (λ n_2) / (λ n_1).
  const double ratio = static_cast<double>(day2.size()) / static_cast<double>(day1.size());
  std::vector<double> stored(day2.size(), std::numeric_limits<double>::quiet_NaN());
  std::size_t over = 0;
  for (std::size_t i = 0; i < day1.size(); ++i) {
    const auto k = static_cast<std::size_t>(day1.labels[i]);
    stored[i] = f1[i] * (c1[k] / c2[k]) * ratio;
    over += stored[i] > 1.0;
  }
  REQUIRE(over > 10);  // the case this is about: rows at their bound on day 1 that no longer fit
  const auto start_point = [&](const std::vector<double>& fractions, std::vector<double>& w, double& b) {
    const std::vector<double> a = alpha_from_stored(day2, o2, s.lambda, 1.0, fractions);
    const double lambda_n = s.lambda * static_cast<double>(day2.size());
    w.assign(day2.dimension, 0.0);
    b = 0.0;
    for (std::size_t i = 0; i < day2.size(); ++i) {
      const RowView x = day2.row(i);
      const double coef = a[i] * std::copysign(1.0, o2.signed_cost(x)) / lambda_n;
      for (std::uint32_t j = 0; j < x.nnz; ++j) w[x.indices[j]] += coef * x.values[j];
      b += coef;
    }
  };
  std::vector<double> w;
  double b = 0.0;
  start_point(stored, w, b);
  // Day 1's w(α) (its model holds the best multiple of it, θ*·w(α), where that certified).
  double b1 = 0.0;
  for (std::size_t i = 0; i < day1.size(); ++i) {
    b1 += r1.alpha[i] * std::copysign(1.0, o1.signed_cost(day1.row(i))) / (s.lambda * static_cast<double>(day1.size()));
  }
  REQUIRE(std::abs(b1 - r1.bias[0]) <= 1e-3 * std::abs(r1.bias[0]));
  const double p_old = primal_objective(day2, o2, s, r1.weights, r1.bias);
  const double p_start = primal_objective(day2, o2, s, w, {b});
  INFO("old intercept " << b1 << ", warm point's " << b << "; P(w_old) " << p_old << ", P(w(α)) " << p_start);
  CHECK(std::abs(b - b1) <= 1e-9 * (1.0 + std::abs(b1)));
  CHECK(p_start <= 1.02 * p_old);
  // The fractions clipped into the box first (the warm point before this
  // change) lose the intercept.
  std::vector<double> clipped = stored;
  for (double& f : clipped) f = std::min(f, 1.0);
  std::vector<double> w_clipped;
  double b_clipped = 0.0;
  start_point(clipped, w_clipped, b_clipped);
  CHECK(std::abs(b_clipped - b1) > 100 * std::abs(b - b1) + 1e-3);
  CHECK(primal_objective(day2, o2, s, w_clipped, {b_clipped}) > p_start);
}

TEST_CASE("warm start: the first pass visits only the rows off a satisfied bound", "[warm][duals]") {
  // Rows at α = 0 on or beyond the margin and rows at α = c inside it are
  // left out until the first unshrink; the count is recomputed here from
  // w(α) summed as the solver sums it (row order, the same steps).
  const Dataset ds = fixtures::gaussian(600, 10, 17, 1.0, 0.4);
  EngineSettings s = automatic(Solver::kSdca, 1e-2);
  s.bias = BiasMode::kFeature;
  s.bias_feature_value = 1.0;
  const Hinge objective(1);
  const TrainResult cold = train_sdca(ds, objective, s);
  REQUIRE(cold.converged);
  WarmStart start;
  start.weights = cold.weights;
  start.bias = cold.bias;
  const double lambda_n = s.lambda * static_cast<double>(ds.size());
  std::vector<double> w(ds.dimension, 0.0);
  double wb = 0.0;
  for (std::size_t i = 0; i < ds.size(); ++i) {
    if (cold.alpha[i] == 0.0) continue;
    const RowView x = ds.row(i);
    const double step = cold.alpha[i] * std::copysign(1.0, objective.signed_cost(x)) / lambda_n;
    for (std::uint32_t j = 0; j < x.nnz; ++j) w[x.indices[j]] += step * x.values[j];
    wb += step;
  }
  std::size_t off_bound = 0, at_bound = 0;
  for (std::size_t i = 0; i < ds.size(); ++i) {
    const RowView x = ds.row(i);
    double score = wb;
    for (std::uint32_t j = 0; j < x.nnz; ++j) score += static_cast<double>(x.values[j]) * w[x.indices[j]];
    const double c = std::abs(objective.signed_cost(x)), g = 1.0 - std::copysign(1.0, objective.signed_cost(x)) * score;
    const bool out = (cold.alpha[i] == 0.0 && g <= 0.0) || (cold.alpha[i] == c && g >= 0.0);
    (out ? at_bound : off_bound) += 1;
  }
  REQUIRE(at_bound > ds.size() / 2);  // most rows sit at a satisfied bound at the optimum
  std::uint64_t first_pass = 0;
  const std::function<bool(const EpochInfo&)> on_epoch = [&](const EpochInfo& info) {
    if (info.epoch == 1) first_pass = info.iterations;
    return true;
  };
  const TrainResult warm = BinarySdca<Hinge>(ds, objective, s, on_epoch, &cold.alpha, &start).run();
  CHECK(first_pass == off_bound);
  check_same_optimum(cold, warm, s.tolerance);
}
