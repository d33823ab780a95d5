// The journal of `pegasos run`: OUTPUT/runs.jsonl, so that a killed or
// crashed experiment loses no finished run. Line 1 is a header naming the
// fingerprint of the experiment and its data; every further line is one
// finished run's record (results.json's "runs" entry, timings included),
// appended and fsync'ed as the run completes, in completion order.
// `pegasos run --resume` reads it back and runs only what is missing.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "drivers/experiment/load.hpp"

namespace pegasos::experiment_detail {

// 16 hex digits (XXH3) over everything a run's record depends on: the
// experiment as run (`experiment_record`, results.json's "experiment", without
// the experiment file's own path) and the content of the data (training and
// test rows, labels and classes, the folds, the fitted featurizer, the
// transfer source models).
std::string experiment_fingerprint(const nlohmann::json& experiment_record, const LoadedData& data);

class RunJournal {
 public:
  // Locks the folder of `path` against a second `pegasos run` (InputError if
  // one holds it), then:
  //  - resume: reads the journal (if any). A damaged last line (a run cut off
  //    mid-write) is ignored and cut off; that run runs again. ConfigError
  //    (exit 2) for a journal of another fingerprint, a damaged line before the
  //    last, or a run recorded twice. No journal, or an empty one: a new one.
  //  - otherwise: a new journal replaces any earlier one (a note on stderr says
  //    how many runs it held).
  // `total` runs make up the experiment: a journal run with a larger id is an error.
  RunJournal(const std::string& path, const std::string& fingerprint, const std::string& name, std::size_t total,
             bool resume, bool quiet);
  ~RunJournal();
  RunJournal(const RunJournal&) = delete;
  RunJournal& operator=(const RunJournal&) = delete;

  // The runs read back (resume), by id.
  const std::map<std::size_t, nlohmann::json>& restored() const { return restored_; }
  // Appends `record` as one line and fsyncs it. Thread-safe.
  void append(const nlohmann::json& record);
  const std::string& path() const { return path_; }

 private:
  // A journal with only the header; `note_replacement`: say on stderr (even
  // when quiet) that an existing one, and how many runs, is discarded.
  void start_new(const std::string& fingerprint, const std::string& name, bool note_replacement);
  void read_back(const std::string& fingerprint, const std::string& name, std::size_t total, bool quiet);
  void open_for_append();

  std::string path_;
  int fd_ = -1;       // the journal, O_APPEND
  int lock_fd_ = -1;  // its folder, flock'ed
  std::mutex mutex_;
  std::map<std::size_t, nlohmann::json> restored_;
};

}  // namespace pegasos::experiment_detail
