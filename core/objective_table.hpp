// The objective table: one row per objective, the only place where an
// objective's name is spelled. Config validation, `--help`, the registry
// (training and evaluation), the experiment runner and the CLI ask it what an
// objective is instead of comparing names.
//
// Header-only and dependency-free (no JSON, nothing from drivers/), so core/
// can use it too.
//
// Adding an objective: its plugin header in objectives/ (the data term and a
// projection radius, see core/objective.hpp), an enumerator in ObjectiveId
// and a row in kObjectiveTable below, and its case in the registry's two
// switches (drivers/registry.cpp: how it trains, how its objective is
// evaluated; -Wswitch names them when the case is missing).
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

namespace pegasos {

enum class ObjectiveId { kHinge, kWeightedHinge, kTransfer, kOva, kMulticlassHinge, kKernelHinge };

// What class weights mean to an objective.
enum class ClassWeights {
  kUnused,    // class_weight is an error
  kOptional,  // all costs 1 unless class_weight is given
  kRequired,  // class_weight must be given
};

struct ObjectiveRow {
  ObjectiveId id;
  std::string_view name;     // the `objective` setting, and the model file's "objective"
  std::string_view help;     // a short gloss after the name in `--help` and messages ("" = none)
  bool multiclass;           // takes K >= 2 classes (false: exactly two)
  ClassWeights class_weights;
  bool needs_source_model;   // trains toward a source model (source_model)
  bool kernel;               // a kernel model (support vectors), else linear weights
  bool sdca;                 // the dual solver applies (else Pegasos only)
};

inline constexpr std::array<ObjectiveRow, 6> kObjectiveTable = {{
    {ObjectiveId::kHinge, "hinge", "", false, ClassWeights::kUnused, false, false, true},
    {ObjectiveId::kWeightedHinge, "weighted_hinge", "", false, ClassWeights::kRequired, false, false, true},
    {ObjectiveId::kTransfer, "transfer", "", false, ClassWeights::kUnused, true, false, true},
    {ObjectiveId::kOva, "ova", "one-vs-all", true, ClassWeights::kOptional, false, false, true},
    {ObjectiveId::kMulticlassHinge, "multiclass_hinge", "Crammer-Singer", true, ClassWeights::kOptional, false, false,
     true},
    {ObjectiveId::kKernelHinge, "kernel_hinge", "kernel Pegasos", true, ClassWeights::kUnused, false, true, false},
}};

// The `objective` setting's default, not a row: the drivers turn it into a
// row once the training data's classes are known (drivers/registry.hpp,
// resolve_objective).
inline constexpr std::string_view kAutoObjective = "auto";
inline constexpr std::string_view kAutoObjectiveHelp =
    "the default: hinge for two classes, ova for more; with class_weight weighted_hinge (two classes) or ova, "
    "with source_model transfer";

// The row of an objective name, or nullptr for a name not in the table.
constexpr const ObjectiveRow* find_objective(std::string_view name) {
  for (const ObjectiveRow& row : kObjectiveTable) {
    if (row.name == name) return &row;
  }
  return nullptr;
}

constexpr const ObjectiveRow& objective_row(ObjectiveId id) { return kObjectiveTable[static_cast<std::size_t>(id)]; }

// A row compared with a name: `row == "kernel_hinge"` (for code that still
// holds names; new code compares ids or asks the row's flags).
constexpr bool operator==(const ObjectiveRow& row, std::string_view name) { return row.name == name; }

// The names of the rows for which `pred(row)` holds, as "a, b or c"
// (for messages: "only used by objective weighted_hinge, ova or multiclass_hinge").
template <class Pred>
std::string objective_names(Pred pred, std::string_view separator = ", ", std::string_view last = " or ") {
  std::string out;
  std::size_t count = 0, total = 0;
  for (const ObjectiveRow& row : kObjectiveTable) total += pred(row) ? 1 : 0;
  for (const ObjectiveRow& row : kObjectiveTable) {
    if (!pred(row)) continue;
    if (count > 0) out += count + 1 == total ? last : separator;
    out += row.name;
    ++count;
  }
  return out;
}

namespace objective_table_detail {
constexpr bool ids_match_rows() {
  for (std::size_t i = 0; i < kObjectiveTable.size(); ++i) {
    if (static_cast<std::size_t>(kObjectiveTable[i].id) != i) return false;
  }
  return true;
}
}  // namespace objective_table_detail
static_assert(objective_table_detail::ids_match_rows(), "kObjectiveTable: one row per ObjectiveId, in enum order");

}  // namespace pegasos
