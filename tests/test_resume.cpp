// `pegasos run` survives interruption: every finished run is appended to
// OUTPUT/runs.jsonl, and `--resume` runs only what is missing. The acceptance
// test kills the real binary with SIGKILL mid-way; the unit tests check the
// journal's rules (another spec or other data is refused, a cut-off last line
// is ignored and its run redone, a damaged earlier line is refused, a run
// without --resume starts over).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include <functional>
#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "drivers/experiment.hpp"
#include "drivers/experiment/journal.hpp"
#include "tests/fixtures.hpp"
#include "tests/test_util.hpp"

namespace {

using Catch::Contains;
using nlohmann::json;
namespace fs = std::filesystem;
using testutil::read_text;
using testutil::TempDir;
using testutil::write_text;
using namespace pegasos;

// A generated dataset as LIBSVM text.
std::string svm_text(const Dataset& ds) {
  std::ostringstream out;
  for (std::size_t i = 0; i < ds.size(); ++i) {
    out << ds.classes[static_cast<std::size_t>(ds.labels[i])];
    const RowView x = ds.row(i);
    for (std::uint32_t j = 0; j < x.nnz; ++j) out << ' ' << x.indices[j] + 1 << ':' << x.values[j];
    out << '\n';
  }
  return out.str();
}

// cv with selection and traces: every kind of run and record the journal must restore.
json small_experiment() {
  return json::parse(R"({
    "data": {"train": "train.svm", "test": "test.svm", "folds": 3, "stratified": true},
    "config": {"epochs": 3},
    "grid": {"lambda": [1e-1, 1e-2, 1e-3]},
    "repeats": 2,
    "select": {"metric": "balanced_accuracy"},
    "trace_every": 1,
    "plots": false
  })");
}
constexpr std::size_t kSmallRuns = 3 * 2 * 3 + 2;  // cv runs, then the selected point's final runs

Experiment write_experiment(const TempDir& dir, const json& j, std::size_t rows = 200) {
  if (!fs::exists(dir.file("train.svm"))) {
    write_text(dir.file("train.svm"), svm_text(fixtures::gaussian(rows, 8, 21)));
    write_text(dir.file("test.svm"), svm_text(fixtures::gaussian(rows / 2, 8, 22)));
  }
  write_text(dir.file("exp.json"), j.dump(2));
  return load_experiment(dir.file("exp.json"));
}

RunOptions options(const std::string& output, bool resume) {
  RunOptions o;
  o.output_dir = output;
  o.quiet = true;
  o.gnuplot = "";
  o.resume = resume;
  return o;
}

std::vector<std::string> lines_of(const std::string& path) {
  std::vector<std::string> lines;
  std::istringstream in(read_text(path));
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The run ids of a journal's lines after the header (each must parse).
std::vector<std::size_t> journal_ids(const std::string& path) {
  std::vector<std::size_t> ids;
  const std::vector<std::string> lines = lines_of(path);
  for (std::size_t i = 1; i < lines.size(); ++i) ids.push_back(json::parse(lines[i])["id"].get<std::size_t>());
  return ids;
}

void check_each_run_once(const std::string& journal, std::size_t runs) {
  const std::vector<std::size_t> ids = journal_ids(journal);
  CHECK(ids.size() == runs);
  CHECK(std::set<std::size_t>(ids.begin(), ids.end()).size() == runs);
  CHECK(*std::max_element(ids.begin(), ids.end()) == runs - 1);
}

TEST_CASE("journal: one line per finished run, --resume of a complete journal runs nothing and changes nothing",
          "[experiment][resume]") {
  TempDir dir;
  const Experiment e = write_experiment(dir, small_experiment());
  const json a = run_experiment(e, options(dir.file("out"), false));
  const std::string journal = dir.file("out/runs.jsonl");
  const json header = json::parse(lines_of(journal).front());
  CHECK(header["pegasos_run_journal"] == 1);
  CHECK(header["fingerprint"].get<std::string>().size() == 16);
  check_each_run_once(journal, kSmallRuns);
  CHECK(a["timing"]["restored_runs"] == 0);
  const std::string no_timing = read_text(dir.file("out/results_no_timing.json"));

  const json b = run_experiment(e, options(dir.file("out"), true));
  CHECK(b["timing"]["restored_runs"] == kSmallRuns);
  CHECK(without_timing(b) == without_timing(a));
  CHECK(b["runs"] == a["runs"]);  // restored records keep their own timings
  CHECK(read_text(dir.file("out/results_no_timing.json")) == no_timing);
  check_each_run_once(journal, kSmallRuns);

  // Without --resume: a new journal replaces it and every run runs again.
  const json c = run_experiment(e, options(dir.file("out"), false));
  CHECK(c["timing"]["restored_runs"] == 0);
  check_each_run_once(journal, kSmallRuns);
  CHECK(read_text(dir.file("out/results_no_timing.json")) == no_timing);
}

TEST_CASE("journal: metric blocks (max_fpr's at_max_fpr) are restored, not taken for damage", "[experiment][resume]") {
  TempDir dir;
  json j = small_experiment();
  j["max_fpr"] = 0.1;
  const Experiment e = write_experiment(dir, j);
  const json a = run_experiment(e, options(dir.file("out"), false));
  REQUIRE(a["runs"][0]["metrics"]["at_max_fpr"].is_object());
  const json b = run_experiment(e, options(dir.file("out"), true));
  CHECK(b["timing"]["restored_runs"] == kSmallRuns);
  CHECK(without_timing(b) == without_timing(a));
}

TEST_CASE("journal: a restored best run that trains differently now is refused as input, not an internal error",
          "[experiment][resume]") {
  // As from a journal another pegasos build wrote: same experiment and data
  // (same fingerprint), but the best run's recorded result is not what this
  // build trains. Its retraining must not be reported as non-deterministic
  // training (exit 1).
  TempDir dir;
  const Experiment e = write_experiment(dir, small_experiment());
  const json a = run_experiment(e, options(dir.file("out"), false));
  const std::size_t best = a["best"]["run"].get<std::size_t>();
  const std::string journal = dir.file("out/runs.jsonl");
  std::string edited;
  bool found = false;
  for (const std::string& line : lines_of(journal)) {
    json r = json::parse(line);
    if (r.contains("id") && r["id"] == best) {
      r["training"]["iterations"] = r["training"]["iterations"].get<std::uint64_t>() + 1;
      found = true;
    }
    edited += r.dump() + "\n";
  }
  REQUIRE(found);
  write_text(journal, edited);
  CHECK_THROWS_AS(run_experiment(e, options(dir.file("out"), true)), ConfigError);  // exit code 2
  CHECK_THROWS_WITH(run_experiment(e, options(dir.file("out"), true)),
                    Contains("runs.jsonl") && Contains("run " + std::to_string(best)) &&
                        Contains("another pegasos build") && Contains("without --resume"));
  // Without --resume it starts over and succeeds.
  const json c = run_experiment(e, options(dir.file("out"), false));
  CHECK(without_timing(c) == without_timing(a));
}

TEST_CASE("journal: --resume refuses a journal of another experiment or other data", "[experiment][resume]") {
  TempDir dir;
  run_experiment(write_experiment(dir, small_experiment()), options(dir.file("out"), false));
  const std::string journal = dir.file("out/runs.jsonl");
  const std::string before = read_text(journal);

  json changed = small_experiment();
  changed["grid"]["lambda"][2] = 1e-4;
  const Experiment other = write_experiment(dir, changed);
  CHECK_THROWS_WITH(run_experiment(other, options(dir.file("out"), true)),
                    Contains("runs.jsonl") && Contains("different experiment or data"));
  CHECK_THROWS_AS(run_experiment(other, options(dir.file("out"), true)), ConfigError);  // exit code 2
  CHECK(read_text(journal) == before);

  // Same experiment file, other data.
  const Experiment same = write_experiment(dir, small_experiment());
  write_text(dir.file("test.svm"), svm_text(fixtures::gaussian(100, 8, 23)));
  CHECK_THROWS_WITH(run_experiment(same, options(dir.file("out"), true)), Contains("different experiment or data"));
  CHECK(read_text(journal) == before);
}

TEST_CASE("journal: a cut-off last line is ignored and its run redone, a damaged earlier line is refused",
          "[experiment][resume]") {
  TempDir dir;
  const Experiment e = write_experiment(dir, small_experiment());
  const json full = run_experiment(e, options(dir.file("out"), false));
  const std::string journal = dir.file("out/runs.jsonl");
  std::vector<std::string> lines = lines_of(journal);
  REQUIRE(lines.size() == kSmallRuns + 1);
  const std::size_t cut_id = json::parse(lines.back())["id"].get<std::size_t>();

  // Killed in the middle of writing the last run's line.
  std::string text;
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) text += lines[i] + "\n";
  write_text(journal, text + lines.back().substr(0, lines.back().size() / 2));
  const json resumed = run_experiment(e, options(dir.file("out"), true));
  CHECK(resumed["timing"]["restored_runs"] == kSmallRuns - 1);
  CHECK(without_timing(resumed) == without_timing(full));
  check_each_run_once(journal, kSmallRuns);
  CHECK(journal_ids(journal).back() == cut_id);  // redone, appended on a line of its own

  // A damaged line that is not the last one cannot come from a kill: refused.
  lines = lines_of(journal);
  lines[3] = lines[3].substr(0, 20);
  text.clear();
  for (const auto& l : lines) text += l + "\n";
  write_text(journal, text);
  CHECK_THROWS_WITH(run_experiment(e, options(dir.file("out"), true)), Contains("line 4 is damaged"));

  // A line that parses but lacks a field the results read, or holds the wrong
  // type, is damaged too (a missing "training" once hung the results).
  lines = lines_of(journal);
  const json good = json::parse(lines[1]);
  const std::vector<std::function<void(json&)>> edits = {
      [](json& r) { r.erase("training"); },           [](json& r) { r.erase("timing"); },
      [](json& r) { r.erase("params"); },             [](json& r) { r["metrics"] = "x"; },
      [](json& r) { r["training"] = "x"; },           [](json& r) { r["metrics"]["accuracy"] = "abc"; },
      [](json& r) { r["training"]["epochs"] = "3"; }, [](json& r) { r["timing"]["train_seconds"] = nullptr; },
      [](json& r) { r["point"] = -1; },               [](json& r) { r["fold"] = "0"; },
      [](json& r) { r["metrics"].erase("balanced_accuracy"); }, [](json& r) { r["metrics"].erase("eval_objective"); }};
  for (std::size_t k = 0; k < edits.size(); ++k) {
    INFO("edit " << k);
    json r = good;
    edits[k](r);
    text.clear();
    for (std::size_t i = 0; i < lines.size(); ++i) text += (i == 1 ? r.dump() : lines[i]) + "\n";
    write_text(journal, text);
    CHECK_THROWS_AS(run_experiment(e, options(dir.file("out"), true)), ConfigError);  // exit 2
    CHECK_THROWS_WITH(run_experiment(e, options(dir.file("out"), true)), Contains("line 2 is damaged"));
  }

  // A complete last line (newline and all) that does not read was not cut off
  // by a kill: refused, also as the only line (a foreign file), never deleted.
  lines = lines_of(journal);
  text.clear();
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) text += lines[i] + "\n";
  write_text(journal, text + "{\"foo\": 1}\n");
  CHECK_THROWS_WITH(run_experiment(e, options(dir.file("out"), true)), Contains("is damaged"));
  for (const std::string& foreign : {std::string("garbage\n"), std::string("{\"foo\":1}\n")}) {
    write_text(journal, foreign);
    CHECK_THROWS_AS(run_experiment(e, options(dir.file("out"), true)), ConfigError);
    CHECK(lines_of(journal).size() == 1);  // left as it was
  }
  // Only a first line cut off before its newline counts as a kill's.
  write_text(journal, lines[0].substr(0, lines[0].size() / 2));
  CHECK(run_experiment(e, options(dir.file("out"), true))["timing"]["restored_runs"] == 0);
  check_each_run_once(journal, kSmallRuns);

  // An empty journal (killed before the header was in place): everything runs.
  write_text(journal, "");
  CHECK(run_experiment(e, options(dir.file("out"), true))["timing"]["restored_runs"] == 0);
  check_each_run_once(journal, kSmallRuns);
}

TEST_CASE("journal: a second run into a folder that a run is writing to is refused", "[experiment][resume]") {
  TempDir dir;
  const Experiment e = write_experiment(dir, small_experiment());
  fs::create_directories(dir.file("out"));
  {
    const experiment_detail::RunJournal holder(dir.file("out/runs.jsonl"), "0123456789abcdef", "other", 1, false, true);
    CHECK_THROWS_WITH(run_experiment(e, options(dir.file("out"), true)), Contains("another pegasos run"));
    CHECK_THROWS_AS(run_experiment(e, options(dir.file("out"), false)), InputError);  // exit code 2
  }
  // Released with its holder; the holder's journal is of another fingerprint.
  CHECK_THROWS_WITH(run_experiment(e, options(dir.file("out"), true)), Contains("different experiment or data"));
  CHECK(run_experiment(e, options(dir.file("out"), false))["runs"].size() == kSmallRuns);
}

// ---------------------------------------------------------------------------
// The real binary, killed with SIGKILL mid-way and resumed.

using testutil::q;

// Starts `pegasos run EXPERIMENT --output OUT` (stdout/stderr to files in `dir`); returns its pid.
pid_t start_run(const TempDir& dir, const std::string& experiment, const std::string& out) {
  const std::string command = "exec " + q(PEGASOS_BINARY) + " run " + q(experiment) + " --output " + q(out) + " >" +
                              q(dir.file("killed.out")) + " 2>" + q(dir.file("killed.err")) + " </dev/null";
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return pid;
}

std::size_t complete_lines(const std::string& path) {
  const std::string text = read_text(path);
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

int run_cli(const TempDir& dir, const std::string& args) {
  const std::string command = q(PEGASOS_BINARY) + " run " + args + " >" + q(dir.file("cli.out")) + " 2>" +
                              q(dir.file("cli.err")) + " </dev/null";
  const int status = std::system(command.c_str());
  REQUIRE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

TEST_CASE("pegasos run killed with SIGKILL, then --resume: the results of an uninterrupted run, no run repeated",
          "[experiment][resume][cli]") {
  TempDir dir;
  // 4 points x 3 repeats x 3 folds + 3 final runs, one at a time: about a second (2-core machine).
  json j = small_experiment();
  j["config"] = {{"epochs", 100}, {"threads", 1}, {"solver", "pegasos"}};
  j["grid"] = {{"lambda", {1e-1, 1e-2, 1e-3, 1e-4}}};
  j["repeats"] = 3;
  write_experiment(dir, j, 3000);
  const std::size_t total = 4 * 3 * 3 + 3;
  const std::string journal = dir.file("out/runs.jsonl");

  const pid_t pid = start_run(dir, dir.file("exp.json"), dir.file("out"));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  std::size_t seen = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    seen = fs::exists(journal) ? complete_lines(journal) : 0;
    if (seen >= 4) break;  // the header and a few runs
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  REQUIRE(seen >= 4);
  REQUIRE(seen < total + 1);  // else the experiment is too short to interrupt
  ::kill(pid, SIGKILL);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFSIGNALED(status));
  REQUIRE(!fs::exists(dir.file("out/results.json")));
  const std::size_t done = complete_lines(journal) - 1;  // runs may have finished before the kill landed
  INFO("runs finished before the kill: " << done);
  REQUIRE(done < total);

  REQUIRE(run_cli(dir, q(dir.file("exp.json")) + " --output " + q(dir.file("out")) + " --resume") == 0);
  const std::string err = read_text(dir.file("cli.err"));
  CHECK_THAT(err,
             Contains("resuming: " + std::to_string(done) + " of " + std::to_string(total) + " runs already done"));
  CHECK_THAT(err, Contains("best accuracy: lambda="));
  check_each_run_once(journal, total);

  REQUIRE(run_cli(dir, q(dir.file("exp.json")) + " --quiet --output " + q(dir.file("uninterrupted"))) == 0);
  CHECK(read_text(dir.file("cli.err")).empty());
  const json resumed = json::parse(read_text(dir.file("out/results.json")));
  const json uninterrupted = json::parse(read_text(dir.file("uninterrupted/results.json")));
  CHECK(resumed["timing"]["restored_runs"] == done);
  INFO("uninterrupted: " << uninterrupted["timing"]["runs_seconds"] << " s");
  CHECK(without_timing(resumed) == without_timing(uninterrupted));
  CHECK(read_text(dir.file("out/results_no_timing.json")) ==
        read_text(dir.file("uninterrupted/results_no_timing.json")));
  CHECK(read_text(dir.file("out/best_model.json")) == read_text(dir.file("uninterrupted/best_model.json")));

  // A journal of another spec: exit 2, nothing mixed.
  j["grid"]["lambda"][3] = 1e-5;
  write_text(dir.file("other.json"), j.dump());
  const std::string before = read_text(journal);
  CHECK(run_cli(dir, q(dir.file("other.json")) + " --output " + q(dir.file("out")) + " --resume") == 2);
  CHECK_THAT(read_text(dir.file("cli.err")), Contains("different experiment or data"));
  CHECK(read_text(journal) == before);
}

}  // namespace
