// The Python door (module pegasos._pegasos): a thin layer on drivers/api.hpp.
// Rows come from numpy / scipy arrays: CSR float32/int32 arrays are borrowed
// (no copy), anything else is copied once into the engine's Dataset (CSR,
// float32 values, uint32 indices; explicit zeros dropped, as the LIBSVM reader
// drops them); training and scoring run without the GIL, with
// TBB limited to the caller's thread count. InputError / ConfigError (bad
// data, bad settings, bad model files) become ValueError with the engine's
// message. The estimator itself is pure Python (python/pegasos/__init__.py).
// Raw text: the tool's featurizer (text/) on lists of str, rows out as CSR arrays;
// a numeric model and the featurizer it was trained on join into a text model file.
#include <atomic>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <tbb/global_control.h>

#include "core/dataset.hpp"
#include "core/errors.hpp"
#include "core/fresh_memory.hpp"
#include "core/output_file.hpp"
#include "drivers/any_model.hpp"
#include "drivers/api.hpp"
#include "text/featurizer.hpp"
#include "text/options.hpp"

namespace py = pybind11;
using pegasos::Dataset;
using pegasos::InputError;
using pegasos::OutputError;
namespace api = pegasos::api;

namespace {

// TBB's worker count for the current call (0 = no limit).
std::optional<tbb::global_control> thread_limit(int threads) {
  std::optional<tbb::global_control> limit;
  if (threads > 0) limit.emplace(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
  return limit;
}

void check_value(double v, std::size_t row, std::size_t column) {
  if (!std::isfinite(v) || std::fabs(v) > 3.4028234663852886e38) {
    throw InputError("X[" + std::to_string(row) + ", " + std::to_string(column) + "]: value " + std::to_string(v) +
                     " is not a finite float32");
  }
}

// Dense rows (any strides: C or Fortran order, no copy on the Python side).
template <typename T>
Dataset dense_rows(const py::array_t<T>& x) {
  if (x.ndim() != 2) throw InputError("X: expected a 2-d array, got " + std::to_string(x.ndim()) + " dimensions");
  const auto a = x.template unchecked<2>();
  Dataset d;
  d.source = "X";
  d.first_row = 0;  // messages say X's row i, as numpy indexes it
  d.dimension = static_cast<std::uint32_t>(a.shape(1));
  // Counted first, so that the arrays are made once, at their size, as huge
  // pages (60k x 784 float64, half zeros: 1.75 -> 0.38 s).
  std::size_t nnz = 0;
  for (py::ssize_t i = 0; i < a.shape(0); ++i) {
    for (py::ssize_t j = 0; j < a.shape(1); ++j) nnz += a(i, j) != T(0);
  }
  std::vector<std::uint64_t>& row_ptr = d.row_ptr.own();
  std::vector<std::uint32_t>& indices = d.indices.own();
  std::vector<float>& values = d.values.own();
  pegasos::resize_populated(indices, nnz);
  pegasos::resize_populated(values, nnz);
  row_ptr.reserve(static_cast<std::size_t>(a.shape(0)) + 1);
  std::size_t k = 0;
  for (py::ssize_t i = 0; i < a.shape(0); ++i) {
    for (py::ssize_t j = 0; j < a.shape(1); ++j) {
      const double v = static_cast<double>(a(i, j));
      if (v == 0.0) continue;
      check_value(v, static_cast<std::size_t>(i), static_cast<std::size_t>(j));
      indices[k] = static_cast<std::uint32_t>(j);
      values[k++] = static_cast<float>(v);
    }
    row_ptr.push_back(k);
  }
  d.labels.assign(static_cast<std::size_t>(a.shape(0)), -1);
  return d;
}

// Keeps the numpy arrays a Dataset borrows alive; released with the GIL held
// (the Dataset may die in the engine, with the GIL released).
struct Lender {
  std::vector<py::object> arrays;
  ~Lender() {
    py::gil_scoped_acquire acquire;
    arrays.clear();
  }
};

// CSR arrays (indices sorted within rows, no duplicates: the caller's
// canonical format); indptr as int64. float32 values with int32 indices, each
// contiguous and without explicit zeros, are borrowed (no copy: the Dataset
// points into the arrays and keeps them alive; the engine copies them first
// if it must change them, e.g. to normalise rows); anything else is copied
// once into float32 / uint32, zeros dropped. The row offsets (n + 1) are
// always copied.
template <typename I, typename T>
Dataset csr_rows(const py::array_t<std::int64_t>& indptr, const py::array_t<I>& indices, const py::array_t<T>& data,
                 std::size_t n_features) {
  const auto p = indptr.template unchecked<1>();
  const auto idx = indices.template unchecked<1>();
  const auto val = data.template unchecked<1>();
  Dataset d;
  d.source = "X";
  d.first_row = 0;  // messages say X's row i, as numpy indexes it
  d.dimension = static_cast<std::uint32_t>(n_features);
  if (p.shape(0) < 1) throw InputError("X: indptr is empty");
  const py::ssize_t rows = p.shape(0) - 1;
  // The structure first: every offset read below must lie within the arrays.
  if (p(0) < 0) throw InputError("X: indptr[0] is negative");
  for (py::ssize_t i = 0; i < rows; ++i) {
    if (p(i + 1) < p(i)) throw InputError("X: indptr decreases at row " + std::to_string(i));
  }
  if (p(rows) > idx.shape(0) || p(rows) > val.shape(0)) {
    throw InputError("X: indptr ends at " + std::to_string(p(rows)) + ", past the " + std::to_string(idx.shape(0)) +
                     " indices and " + std::to_string(val.shape(0)) + " values");
  }
  auto check = [&](py::ssize_t i, std::int64_t k, double v) {
    const auto j = static_cast<std::int64_t>(idx(k));
    if (j < 0 || static_cast<std::uint64_t>(j) >= n_features) {
      throw InputError("X: column index " + std::to_string(j) + " out of range in row " + std::to_string(i));
    }
    check_value(v, static_cast<std::size_t>(i), static_cast<std::size_t>(j));
  };
  constexpr bool kSameLayout = std::is_same_v<T, float> && std::is_same_v<I, std::int32_t>;
  if (kSameLayout && data.strides(0) == static_cast<py::ssize_t>(sizeof(T)) &&
      indices.strides(0) == static_cast<py::ssize_t>(sizeof(I))) {
    bool zeros = false;
    for (py::ssize_t i = 0; i < rows; ++i) {
      for (std::int64_t k = p(i); k < p(i + 1); ++k) {
        const double v = static_cast<double>(val(k));
        if (v == 0.0) zeros = true;
        else check(i, k, v);
      }
    }
    if (!zeros) {  // borrowed: the Dataset points into the arrays
      const std::size_t first = static_cast<std::size_t>(p(0)), nnz = static_cast<std::size_t>(p(rows)) - first;
      std::vector<std::uint64_t>& row_ptr = d.row_ptr.own();
      row_ptr.resize(static_cast<std::size_t>(rows) + 1);
      for (py::ssize_t i = 0; i <= rows; ++i) row_ptr[static_cast<std::size_t>(i)] = static_cast<std::uint64_t>(p(i)) - first;
      d.indices = pegasos::Buffer<std::uint32_t>::borrow(reinterpret_cast<const std::uint32_t*>(indices.data()) + first, nnz);
      d.values = pegasos::Buffer<float>::borrow(reinterpret_cast<const float*>(data.data()) + first, nnz);
      auto lender = std::make_shared<Lender>();
      lender->arrays = {indices, data};
      d.lender = std::move(lender);
      d.labels.assign(static_cast<std::size_t>(rows), -1);
      return d;
    }
  }
  // Copied (checked on the way), explicit zeros dropped.
  std::vector<std::uint64_t>& row_ptr = d.row_ptr.own();
  std::vector<std::uint32_t>& out_indices = d.indices.own();
  std::vector<float>& out_values = d.values.own();
  row_ptr.reserve(static_cast<std::size_t>(rows) + 1);
  out_indices.reserve(static_cast<std::size_t>(p(rows) - p(0)));
  out_values.reserve(static_cast<std::size_t>(p(rows) - p(0)));
  // Written once, front to back: as huge pages (core/fresh_memory.hpp).
  pegasos::advise_huge_pages(out_indices.data(), out_indices.capacity() * sizeof(std::uint32_t));
  pegasos::advise_huge_pages(out_values.data(), out_values.capacity() * sizeof(float));
  for (py::ssize_t i = 0; i < rows; ++i) {
    for (std::int64_t k = p(i); k < p(i + 1); ++k) {
      const double v = static_cast<double>(val(k));
      if (v == 0.0) continue;
      check(i, k, v);
      out_indices.push_back(static_cast<std::uint32_t>(idx(k)));
      out_values.push_back(static_cast<float>(v));
    }
    row_ptr.push_back(out_values.size());
  }
  d.labels.assign(static_cast<std::size_t>(rows), -1);
  return d;
}

template <typename I>
Dataset csr_rows_of(const py::array_t<std::int64_t>& indptr, const py::array_t<I>& indices, const py::array& data,
                    std::size_t n_features) {
  if (py::isinstance<py::array_t<float>>(data)) {
    return csr_rows<I, float>(indptr, indices, data.cast<py::array_t<float>>(), n_features);
  }
  return csr_rows<I, double>(indptr, indices, data.cast<py::array_t<double>>(), n_features);
}

Dataset from_csr(const py::array_t<std::int64_t>& indptr, const py::array& indices, const py::array& data,
                 std::size_t n_features) {
  if (n_features > (std::size_t{1} << 31)) throw InputError("X: more than 2^31 features");
  if (py::isinstance<py::array_t<std::int32_t>>(indices)) {
    return csr_rows_of<std::int32_t>(indptr, indices.cast<py::array_t<std::int32_t>>(), data, n_features);
  }
  return csr_rows_of<std::int64_t>(indptr, indices.cast<py::array_t<std::int64_t>>(), data, n_features);
}

Dataset from_dense(const py::array& x) {
  if (x.ndim() == 2 && static_cast<std::size_t>(x.shape(1)) > (std::size_t{1} << 31)) {
    throw InputError("X: more than 2^31 features");
  }
  if (py::isinstance<py::array_t<float>>(x)) return dense_rows<float>(x.cast<py::array_t<float>>());
  return dense_rows<double>(x.cast<py::array_t<double>>());
}

Dataset& usable(Dataset& d);

void set_labels(Dataset& d, const py::array_t<std::int64_t>& labels, std::vector<std::string> classes) {
  usable(d);
  const auto y = labels.unchecked<1>();
  if (static_cast<std::size_t>(y.shape(0)) != d.size()) throw InputError("y: length differs from the rows of X");
  for (py::ssize_t i = 0; i < y.shape(0); ++i) {
    if (y(i) < 0 || static_cast<std::size_t>(y(i)) >= classes.size()) throw InputError("y: class id out of range");
    d.labels[static_cast<std::size_t>(i)] = static_cast<int>(y(i));
  }
  d.classes = std::move(classes);
}

// sample_weight: one finite weight >= 0 per row (set_sample_weights: rows of
// weight 0 are removed, the others scaled to mean 1).
void set_weights(Dataset& d, const py::array_t<double, py::array::c_style | py::array::forcecast>& weights) {
  usable(d);
  if (weights.ndim() != 1) throw InputError("sample_weight: expected a 1-d array");
  pegasos::set_sample_weights(d, std::span<const double>(weights.data(), static_cast<std::size_t>(weights.shape(0))),
                              "sample_weight");
}

// The model's weights as (outputs × dimension) and its bias (outputs).
py::array_t<double> weights_of(const api::Model& m) {
  if (!m.any().linear) throw InputError("a kernel model has no weight vector (coef_)");
  const pegasos::Model& lin = *m.any().linear;
  const std::size_t K = static_cast<std::size_t>(lin.outputs), d = lin.dimension;
  py::array_t<double> out({K, d});
  auto w = out.mutable_unchecked<2>();
  for (std::size_t j = 0; j < d; ++j) {
    for (std::size_t k = 0; k < K; ++k) w(k, j) = lin.weights[j * K + k];
  }
  return out;
}

// A Dataset that train() consumed (moved into the engine) is left with no
// row offsets; any further use is an error, not a read of moved-from memory.
Dataset& usable(Dataset& d) {
  if (d.row_ptr.empty()) throw InputError("this Dataset was consumed by train() (moved into the engine); build a new one");
  return d;
}
const Dataset& usable(const Dataset& d) { return usable(const_cast<Dataset&>(d)); }

py::array_t<double> scores_of(const api::Model& m, Dataset& data, int threads) {
  usable(data);
  const std::size_t K = static_cast<std::size_t>(m.outputs()), n = data.size();
  std::vector<double> s;
  {
    py::gil_scoped_release release;
    auto limit = thread_limit(threads);
    if (m.any().linear && m.any().linear->normalize == "l2") data.normalize_rows();
    s = m.scores(data);
  }
  py::array_t<double> out({n, K});
  std::copy(s.begin(), s.end(), out.mutable_data());
  return out;
}

// Training without the GIL. After every epoch (pass) the engine's callback
// takes the GIL for a moment to look for a pending signal (Ctrl-C): training
// then stops and the KeyboardInterrupt is raised instead of returning a model.
api::Model train_on(const api::Settings& settings, Dataset& data) {
  std::atomic<bool> interrupted{false};
  auto on_epoch = [&interrupted](const pegasos::EpochInfo&) {
    if (interrupted) return false;
    py::gil_scoped_acquire acquire;
    if (PyErr_CheckSignals() != 0) interrupted = true;  // the exception stays set for the caller
    return !interrupted;
  };
  std::optional<api::Model> model;
  Dataset rows = std::move(usable(data));
  data = Dataset{};
  data.row_ptr = pegasos::Buffer<std::uint64_t>{};  // consumed: usable() refuses it
  {
    py::gil_scoped_release release;
    auto limit = thread_limit(settings.threads());
    if (settings.config().read.normalize_rows) rows.normalize_rows();
    model = api::train(settings, std::move(rows), on_epoch);
  }
  if (interrupted) throw py::error_already_set();
  return std::move(*model);
}

// Text featurizer: options from the `features` setting's JSON; rows as
// (indptr int64, indices int32, data float32) numpy arrays.
pegasos::TextFeaturizer featurizer_of(const std::string& options_json) {
  const nlohmann::json j = nlohmann::json::parse(options_json, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw InputError("features: expected a JSON object");
  return pegasos::TextFeaturizer(pegasos::text_options_from_json(j, "features"));
}

py::tuple rows_to_arrays(pegasos::SparseRows rows) {
  py::array_t<std::int64_t> indptr(static_cast<py::ssize_t>(rows.row_ptr.size()));
  std::copy(rows.row_ptr.begin(), rows.row_ptr.end(), indptr.mutable_data());
  py::array_t<std::int32_t> indices(static_cast<py::ssize_t>(rows.indices.size()));
  std::copy(rows.indices.begin(), rows.indices.end(), indices.mutable_data());
  py::array_t<float> values(static_cast<py::ssize_t>(rows.values.size()));
  std::copy(rows.values.begin(), rows.values.end(), values.mutable_data());
  return py::make_tuple(indptr, indices, values);
}

void bind_text(py::module_& m) {
  using pegasos::TextFeaturizer;
  py::class_<TextFeaturizer>(m, "TextFeaturizer")
      .def(py::init(&featurizer_of), py::arg("options_json"), "The `features` setting as JSON text.")
      .def_static("from_json", [](const std::string& text) {
        const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
        if (j.is_discarded()) throw InputError("<featurizer>: not JSON");
        return TextFeaturizer::from_json(j, "<featurizer>");
      })
      .def("to_json", [](const TextFeaturizer& f) { return f.to_json().dump(); })
      .def("fit", [](TextFeaturizer& f, const std::vector<std::string>& docs) {
        py::gil_scoped_release release;
        f.fit(docs);
      })
      .def("transform", [](const TextFeaturizer& f, const std::vector<std::string>& docs) {
        pegasos::SparseRows rows;
        {
          py::gil_scoped_release release;
          rows = f.transform(docs);
        }
        return rows_to_arrays(std::move(rows));
      })
      .def_property_readonly("dimension", &TextFeaturizer::dimension)
      .def_property_readonly("needs_fit", &TextFeaturizer::needs_fit)
      .def_property_readonly("learns_from_fit", &TextFeaturizer::learns_from_fit)
      .def_property_readonly("options",
                             [](const TextFeaturizer& f) { return pegasos::text_options_to_json(f.options()).dump(); })
      .def_property_readonly("vocabulary", &TextFeaturizer::vocabulary);
}

void bind_model(py::module_& m) {
  py::class_<api::Model>(m, "Model")
      .def_static("load", &api::Model::load, py::arg("path"))
      .def_static("parse", &api::Model::parse, py::arg("text"), py::arg("name") = "<model>")
      .def("save", &api::Model::save, py::arg("path"))
      .def("to_json", &api::Model::to_json)
      .def_property_readonly("classes", &api::Model::classes)
      .def_property_readonly("outputs", &api::Model::outputs)
      .def_property_readonly("kernel", &api::Model::kernel)
      .def_property_readonly("text", [](const api::Model& m) { return !m.featurizer_json().empty(); })
      // Text models from parts (drivers/text_model.hpp): a numeric model and the
      // fitted featurizer it was trained on make the file `pegasos train` writes on raw text.
      .def("with_featurizer", &api::Model::with_featurizer, py::arg("featurizer"), py::arg("features_setting"),
           "This numeric model with the featurizer inside; features_setting: the `features` setting as JSON text.")
      .def("without_featurizer", &api::Model::without_featurizer, "The numeric model inside a text model.")
      .def_property_readonly("featurizer", [](const api::Model& m) -> std::optional<std::string> {
        std::string text = m.featurizer_json();
        if (text.empty()) return std::nullopt;
        return text;
      })
      // The features a row has: a kernel-approximation model maps them to its weights' dimension.
      .def_property_readonly("dimension",
                             [](const api::Model& m) {
                               const auto& lin = m.any().linear;
                               if (!lin) return 0u;
                               return lin->feature_map ? lin->feature_map->input_dimension : lin->dimension;
                             })
      .def_property_readonly("training", [](const api::Model& m) { return m.any().training().dump(); })
      .def("weights", &weights_of)
      .def("bias", [](const api::Model& m) {
        if (!m.any().linear) throw InputError("a kernel model has no intercept_");
        return m.any().linear->bias;
      })
      .def("scores", &scores_of, py::arg("data"), py::arg("threads") = 0,
           "Scores (rows × outputs) of the rows; the dataset is consumed if the model normalises rows.");
}

}  // namespace

PYBIND11_MODULE(_pegasos, m) {
  m.doc() = "pegasos: the C++ engine behind pegasos.PegasosClassifier";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {  // ConfigError too
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const OutputError& e) {  // a write that failed (save to a full disk): an OSError, as open() raises
      PyErr_SetString(PyExc_OSError, e.what());
    }
  });

  py::class_<api::Settings>(m, "Settings")
      .def(py::init([](const std::vector<std::string>& overrides) { return api::Settings::load("", overrides); }),
           py::arg("overrides"), "Validated settings from KEY=VALUE overrides (the text of `pegasos train --set`).")
      .def_property_readonly("threads", &api::Settings::threads);

  py::class_<Dataset>(m, "Dataset")
      .def_property_readonly("rows", [](const Dataset& d) { return usable(d).size(); })
      .def_property_readonly("nnz", [](const Dataset& d) { return usable(d).nnz(); })
      .def_property_readonly("dimension", [](const Dataset& d) { return usable(d).dimension; })
      .def_property_readonly("borrowed", [](const Dataset& d) { return d.values.borrowed() && d.indices.borrowed(); },
                             "True when the rows point into the caller's CSR arrays (no copy).")
      .def("set_labels", &set_labels, py::arg("labels"), py::arg("classes"))
      .def("set_weights", &set_weights, py::arg("weights"),
           "Per-example weights (after set_labels): rows of weight 0 are removed, the rest scaled to mean 1.");
  m.def("dataset_from_dense", &from_dense, py::arg("X"), "Rows of a 2-d float32/float64 array (any order).");
  m.def("dataset_from_csr", &from_csr, py::arg("indptr"), py::arg("indices"), py::arg("data"), py::arg("n_features"),
        "Rows of CSR arrays (canonical format: sorted, no duplicates).");

  bind_model(m);
  bind_text(m);

  m.def("train", &train_on, py::arg("settings"), py::arg("data"),
        "Train on the rows (the dataset is consumed: moved into the engine). Releases the GIL.");
  m.def("canonical_label", [](const std::string& s) { return pegasos::canonical_label(s); });
  m.def("sort_classes", [](std::vector<std::string> c) {
    pegasos::sort_classes(c);
    return c;
  });
}
