// `pegasos predict`: a model applied to its input as it is read. Line formats
// (LIBSVM, CSV, JSONL, TSV) are read in batches of whole lines from a file,
// standard input or a pipe, and every batch's predictions are written before
// the next is read: memory is bounded whatever the input's size, and
// `tail -f log | pegasos predict m -` answers as lines arrive. Folders of
// documents and single documents are read whole.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace pegasos {

struct PredictOptions {
  std::string output = "-";  // "-": standard output
  std::string format;        // "" = the model's setting, the name, or the content
  bool ids = false;          // an id first on each line
  std::string id_field;      // JSONL: the field holding the id (implies ids)
  // Flush after every batch and read no further than what has arrived; on
  // by itself when the output is a terminal, pipe or socket.
  bool line_buffered = false;
  // Calibrated probabilities instead of decision values (a model trained with
  // --calibrate): binary P(positive class), multiclass one per class.
  bool proba = false;
  // Binary: predict the positive class when score > threshold, instead of
  // the model's stored threshold (or 0).
  std::optional<double> threshold;
  // Input is parsed in batches of about this many bytes (cut at line ends).
  std::size_t batch_bytes = std::size_t{8} << 20;
};

// Throws InputError for bad input, OutputError / BrokenPipe for the output.
void run_predict(const std::string& model_path, const std::string& data_path, const PredictOptions& options);

}  // namespace pegasos
