#include "drivers/experiment/journal.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>
#include <vector>

#include "core/output_file.hpp"
#include "core/errors.hpp"
#include "core/json_nesting.hpp"
#include "io/model_json.hpp"

namespace pegasos::experiment_detail {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int kJournalVersion = 1;

template <class T>
void hash_vector(XXH3_state_t* state, const T& v) {  // a std::vector or a Buffer
  const std::uint64_t n = v.size();
  XXH3_64bits_update(state, &n, sizeof n);
  if (!v.empty()) XXH3_64bits_update(state, v.data(), v.size() * sizeof(v[0]));
}

void hash_text(XXH3_state_t* state, std::string_view s) {
  const std::uint64_t n = s.size();
  XXH3_64bits_update(state, &n, sizeof n);
  XXH3_64bits_update(state, s.data(), s.size());
}

void hash_dataset(XXH3_state_t* state, const Dataset& d) {
  hash_vector(state, d.row_ptr);
  hash_vector(state, d.indices);
  hash_vector(state, d.values);
  hash_vector(state, d.labels);
  for (const auto& c : d.classes) hash_text(state, c);
  XXH3_64bits_update(state, &d.dimension, sizeof d.dimension);
}

[[noreturn]] void system_fail(const std::string& path, const std::string& what) {
  throw InputError(path + ": " + what + ": " + std::strerror(errno));
}

// A run's metrics: numbers, null (a metric that does not apply) or a block
// of them (at_max_fpr: threshold, false_positive_rate, ...).
// The metrics every evaluated run records (run.cpp's evaluate(); roc_auc and
// the max-FPR ones only where they apply): a record without one is damaged
// (its results.csv cell came out empty).
bool metrics_record(const json& j) {
  if (!j.is_object()) return false;
  for (const char* always : {"accuracy", "error", "balanced_accuracy", "macro_f1", "weighted_f1", "objective",
                             "eval_objective"}) {
    if (!j.contains(always)) return false;
  }
  for (const auto& [key, v] : j.items()) {
    if (v.is_object()) {
      for (const auto& [inner, x] : v.items()) {
        if (!(x.is_number() || x.is_null())) return false;
      }
    } else if (!(v.is_number() || v.is_null())) {
      return false;
    }
  }
  return true;
}

// A run's line: an object with the keys that place it and every field the
// results and the summary read, each of its type. A line that parses but lacks
// one (or holds a string where a number belongs) is damaged, never copied into
// results.json (a missing "training" once hung the CSV).
bool is_run_record(const json& j) {
  if (!j.is_object()) return false;
  const auto unsigned_at = [&](const char* key) { return j.contains(key) && j[key].is_number_unsigned(); };
  if (!(unsigned_at("id") && unsigned_at("point") && unsigned_at("repeat") && j.contains("seed") &&
        j["seed"].is_number() && j.contains("phase") && j["phase"].is_string() && j.contains("fold") &&
        (j["fold"].is_null() || j["fold"].is_number_unsigned()))) {
    return false;
  }
  if (!(j.contains("params") && j["params"].is_object() && j.contains("metrics") && metrics_record(j["metrics"]) &&
        j.contains("timing") && j["timing"].is_object() && j["timing"].contains("train_seconds") &&
        j["timing"]["train_seconds"].is_number())) {
    return false;
  }
  if (!j.contains("training") || !j["training"].is_object()) return false;
  const json& t = j["training"];
  return t.contains("iterations") && t["iterations"].is_number() && t.contains("epochs") && t["epochs"].is_number();
}

bool is_header(const json& j) {
  return j.is_object() && j.value("pegasos_run_journal", 0) == kJournalVersion && j.contains("fingerprint") &&
         j["fingerprint"].is_string();
}

struct Contents {
  json header;  // null: none (empty file, or only a damaged first line)
  std::vector<json> runs;
  std::uint64_t valid_bytes = 0;  // the complete, well-formed lines
  bool damaged_tail = false;      // the last line was cut off or unreadable
};

// Reads the journal's lines. Only the last line may be damaged, and only as a
// write that a kill or crash interrupted (no newline at its end): it is left
// out; any other damaged line throws.
Contents read_contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) system_fail(path, "cannot read the journal");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  Contents c;
  std::size_t pos = 0, line_number = 0;
  while (pos < text.size()) {
    const std::size_t newline = text.find('\n', pos);
    const std::size_t end = newline == std::string::npos ? text.size() : newline;
    const std::size_t next = newline == std::string::npos ? text.size() : newline + 1;
    ++line_number;
    const std::string_view line = std::string_view(text).substr(pos, end - pos);
    const json j = json_nesting::too_deep(line) ? json(json::value_t::discarded) : json::parse(line, nullptr, false);
    const bool ok =
        newline != std::string::npos && !j.is_discarded() && (line_number == 1 ? is_header(j) : is_run_record(j));
    if (!ok) {
      // A write cut off by a kill ends before its newline: a complete line
      // (or one followed by more) that does not read is not that.
      if (next < text.size() || newline != std::string::npos) {
        throw ConfigError(path + ": line " + std::to_string(line_number) +
                          " is damaged (only the last line can be cut off by a kill); not a journal of pegasos run? "
                          "Run without --resume to start over");
      }
      c.damaged_tail = true;
      break;
    }
    if (line_number == 1) {
      c.header = j;
    } else {
      c.runs.push_back(j);
    }
    c.valid_bytes = next;
    pos = next;
  }
  return c;
}

void write_all(int fd, const std::string& text, const std::string& path) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) system_fail(path, "cannot append to the journal");
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) system_fail(path, "cannot fsync the journal");
}

}  // namespace

std::string experiment_fingerprint(const json& experiment_record, const LoadedData& data) {
  json spec = experiment_record;
  spec.erase("file");  // moving the experiment file changes no run
  XXH3_state_t* state = XXH3_createState();
  if (state == nullptr) throw std::bad_alloc();
  XXH3_64bits_reset(state);
  hash_text(state, "pegasos run journal " + std::to_string(kJournalVersion));
  hash_text(state, spec.dump());
  hash_dataset(state, data.pool);
  hash_text(state, data.test ? "test" : "no test");
  if (data.test) hash_dataset(state, *data.test);
  hash_vector(state, data.fold_of);
  hash_text(state, data.features.dump());
  for (const auto& [path, model] : data.sources) {
    hash_text(state, path);
    hash_text(state, model_to_json(*model));
  }
  const XXH64_hash_t h = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

RunJournal::RunJournal(const std::string& path, const std::string& fingerprint, const std::string& name,
                       std::size_t total, bool resume, bool quiet)
    : path_(path) {
  const std::string folder = fs::path(path).parent_path().empty() ? "." : fs::path(path).parent_path().string();
  lock_fd_ = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (lock_fd_ < 0) system_fail(folder, "cannot open the results folder");
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(lock_fd_);
    throw InputError(folder + ": another pegasos run is writing to this results folder");
  }
  try {
    if (resume && fs::exists(path)) {
      read_back(fingerprint, name, total, quiet);
    } else {
      if (resume && !quiet) {
        std::fprintf(stderr, "resuming: no journal %s; running all %zu runs\n", path.c_str(), total);
      }
      start_new(fingerprint, name, true);
    }
    open_for_append();
    // The journal's name in the folder is durable too (a new journal was renamed into place).
    if (::fsync(lock_fd_) != 0) system_fail(folder, "cannot fsync the results folder");
  } catch (...) {
    if (fd_ >= 0) ::close(fd_);
    ::close(lock_fd_);
    throw;
  }
}

RunJournal::~RunJournal() {
  if (fd_ >= 0) ::close(fd_);
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the flock
}

void RunJournal::start_new(const std::string& fingerprint, const std::string& name, bool note_replacement) {
  std::error_code ec;
  if (note_replacement && fs::exists(path_, ec)) {
    std::ifstream in(path_, std::ios::binary);
    std::size_t lines = 0;
    for (std::string line; std::getline(in, line);) ++lines;
    // Printed even with --quiet: finished work is being discarded.
    std::fprintf(
        stderr,
        "pegasos run: starting over: replacing the journal %s (%zu finished run%s; --resume would continue it)\n",
        path_.c_str(), lines > 0 ? lines - 1 : 0, lines == 2 ? "" : "s");
  }
  const json header = {{"pegasos_run_journal", kJournalVersion}, {"fingerprint", fingerprint}, {"experiment", name}};
  write_output(path_, header.dump() + "\n");  // the old journal stays whole until this one is in place
}

void RunJournal::read_back(const std::string& fingerprint, const std::string& name, std::size_t total, bool quiet) {
  const Contents c = read_contents(path_);
  if (c.header.is_null()) {  // empty, or killed while the header was written
    start_new(fingerprint, name, false);
    if (!quiet)
      std::fprintf(stderr, "resuming: the journal %s holds no run; running all %zu runs\n", path_.c_str(), total);
    return;
  }
  const std::string written = c.header["fingerprint"].get<std::string>();
  if (written != fingerprint) {
    throw ConfigError(
        path_ + ": the journal was written for a different experiment or data (fingerprint " + written + ", now " +
        fingerprint +
        "); resuming would mix their runs. Run without --resume to start over, or choose another --output");
  }
  for (const json& r : c.runs) {
    const std::size_t id = r["id"].get<std::size_t>();
    if (id >= total) {
      throw ConfigError(path_ + ": run " + std::to_string(id) + " is not a run of this experiment (" +
                        std::to_string(total) + " runs)");
    }
    if (!restored_.emplace(id, r).second) {
      throw ConfigError(path_ + ": run " + std::to_string(id) + " is recorded twice");
    }
  }
  if (c.damaged_tail) {
    // Cut the damaged line off so that appended lines start on a line of their own.
    if (::truncate(path_.c_str(), static_cast<off_t>(c.valid_bytes)) != 0)
      system_fail(path_, "cannot truncate the journal");
    if (!quiet)
      std::fprintf(stderr, "resuming: ignoring the damaged last line of %s (a run cut off mid-write)\n", path_.c_str());
  }
  if (!quiet) std::fprintf(stderr, "resuming: %zu of %zu runs already done\n", restored_.size(), total);
}

void RunJournal::open_for_append() {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd_ < 0) system_fail(path_, "cannot open the journal");
  if (::fsync(fd_) != 0) system_fail(path_, "cannot fsync the journal");  // a truncation, if any, is durable
}

void RunJournal::append(const json& record) {
  const std::string line = record.dump() + "\n";
  std::lock_guard<std::mutex> lock(mutex_);
  write_all(fd_, line, path_);
}

}  // namespace pegasos::experiment_detail
