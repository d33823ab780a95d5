// An experiment's "prepare" command is named when one of its inputs is missing.
#include <string>

#include <catch2/catch.hpp>

#include "test_util.hpp"

using testutil::pegasos_run;
using testutil::q;
using testutil::Run;
using testutil::TempDir;

TEST_CASE("a missing experiment input names the experiment's prepare command", "[experiment][prepare]") {
  TempDir dir("prepare");
  const std::string spec = dir.file("e.json");
  testutil::write_text(spec, R"({"prepare": "bash scripts/experiment_data.sh e", "data": {"train": "no_train.svm",
                                 "test": "no_test.svm"}, "config": {}})");
  const Run r = pegasos_run(dir, "run " + q(spec));
  CHECK(r.code == 2);
  CHECK(r.err.find("data/train: no such file") != std::string::npos);
  CHECK(r.err.find("; make it with: bash scripts/experiment_data.sh e") != std::string::npos);

  testutil::write_text(spec, R"({"data": {"train": "no_train.svm", "test": "no_test.svm"}, "config": {}})");
  const Run plain = pegasos_run(dir, "run " + q(spec));
  CHECK(plain.code == 2);
  CHECK(plain.err.find("make it with") == std::string::npos);

  testutil::write_text(spec, R"({"prepare": 1, "data": {"train": "t.svm", "test": "t.svm"}, "config": {}})");
  const Run bad = pegasos_run(dir, "run " + q(spec));
  CHECK(bad.code == 2);
  CHECK(bad.err.find("prepare: expected the command") != std::string::npos);
}

TEST_CASE("every bundled experiment that needs data outside the repository names its prepare command",
          "[experiment][prepare]") {
  for (const char* name : {"fmnist_kernel_rbf", "fmnist_ova_vs_multiclass", "fmnist_small", "spam_domain_a",
                           "spam_transfer"}) {
    const std::string text = testutil::read_text(std::string(PEGASOS_SOURCE_DIR) + "/configs/experiments/" + name + ".json");
    CHECK(text.find("\"prepare\": \"bash scripts/experiment_data.sh " + std::string(name) + "\"") != std::string::npos);
  }
}
