#include "drivers/cli_docs.hpp"

#include <string_view>

#include "core/dataset.hpp"
#include "core/objective_table.hpp"
#include "drivers/config.hpp"
#include "text/options.hpp"

namespace pegasos {
namespace {

// What each data format is, for --help and the man page (-Wswitch names a
// format added to kDataFormatNames without its line here).
std::string_view format_help(DataFormat f) {
  switch (f) {
    case DataFormat::kAuto: return "by the name (.jsonl, .tsv, .csv, a folder) or, for standard input, the content";
    case DataFormat::kLibsvm: return "LIBSVM / SVMlight: LABEL INDEX:VALUE ... (sparse, 1-based indices)";
    case DataFormat::kCsv: return "CSV: numeric columns, the label in label_column (a header line is detected)";
    case DataFormat::kJsonl: return "JSON Lines of raw text: one object per line, text_field and label_field";
    case DataFormat::kTextTsv: return "raw text as TSV: LABEL TAB TEXT per line";
    case DataFormat::kTextDir: return "a folder per class: DIR/CLASS/FILE, one document per file";
  }
  return "";
}

// One objective row in words: "linear SVM, two classes, class_weight required; solvers pegasos or sdca".
std::string objective_summary(const ObjectiveRow& row) {
  std::string what = row.kernel ? "kernel SVM (support vectors; kernel setting)" : "linear SVM";
  what += row.multiclass ? ", K >= 2 classes" : ", two classes";
  if (!row.help.empty()) what += ", " + std::string(row.help);
  if (row.class_weights == ClassWeights::kRequired) what += ", class_weight required";
  if (row.needs_source_model) what += ", toward source_model";
  return what + (row.sdca || row.kernel ? "; solvers pegasos or sdca" : "; solver pegasos");
}

std::string padded(const std::string& name, std::size_t width) {
  return "  " + name + std::string(name.size() < width ? width - name.size() : 1, ' ');
}

// Every option name of a command ("--set", "-s", ...), long names first.
std::vector<std::string> option_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_positional()) continue;
    for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
  }
  for (const CLI::Option* opt : app.get_options()) {
    for (const auto& s : opt->get_snames()) names.push_back("-" + s);
  }
  return names;
}

std::vector<const CLI::App*> commands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App*) { return true; });
}

std::string joined(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "" : " ") + w;
  return s;
}

}  // namespace

std::string train_help_footer() {
  std::string s = "\nData formats (the format setting; any file may be gzip-compressed; - is standard input):\n";
  for (const auto& [format, name] : kDataFormatNames) s += padded(std::string(name), 18) + std::string(format_help(format)) + "\n";
  s += "\nObjectives (the objective setting):\n";
  s += padded(std::string(kAutoObjective), 18) + std::string(kAutoObjectiveHelp) + "\n";
  for (const ObjectiveRow& row : kObjectiveTable) s += padded(std::string(row.name), 18) + objective_summary(row) + "\n";
  s += "\nSettings (JSON config keys, or --set KEY=VALUE; nested ones as --set features.hash_bits=18):\n";
  for (const auto& k : config_keys()) {
    s += padded(k.name, 18) + k.help + " [default: " + shown_default(k) + "]\n";
  }
  s += padded("features.KEY", 18) + "text featurisation:";
  const nlohmann::json text_defaults = text_options_to_json(TextOptions{});  // alive through the loop
  for (const auto& [key, value] : text_defaults.items()) s += " " + key + "=" + value.dump();
  return s + "\n";
}

std::vector<std::string> settable_keys() {
  std::vector<std::string> keys;
  for (const auto& k : config_keys()) {
    keys.push_back(k.name);
    const nlohmann::json nested = k.name == "features" ? text_options_to_json(TextOptions{}) : k.default_value;
    if (!nested.is_object()) continue;
    for (const auto& item : nested.items()) keys.push_back(k.name + "." + item.key());
  }
  return keys;
}

std::optional<std::string> cli_document(const CLI::App& app, int argc, char** argv) {
  if (argc != 2) return std::nullopt;
  const std::string_view arg = argv[1];
  if (arg == "--man") return man_page(app);
  if (arg == "--bash-completion") return bash_completion(app);
  return std::nullopt;
}

namespace {

// Text as roff: backslashes escaped, no line starting with a control character.
std::string roff(const std::string& text) {
  std::string out;
  bool line_start = true;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
    line_start = c == '\n';
  }
  return out;
}

std::string option_heading(const CLI::Option* opt) {
  std::string names;
  for (const auto& s : opt->get_snames()) names += (names.empty() ? "" : ", ") + ("\\fB\\-" + s + "\\fR");
  for (const auto& l : opt->get_lnames()) names += (names.empty() ? "" : ", ") + ("\\fB\\-\\-" + roff(l) + "\\fR");
  if (opt->get_positional()) return "\\fI" + roff(opt->get_name()) + "\\fR";
  if (opt->get_expected_min() > 0) names += " \\fI" + roff(opt->get_type_name().empty() ? "VALUE" : opt->get_type_name()) + "\\fR";
  return names;
}

std::string command_section(const CLI::App* cmd) {
  std::string s = ".SS \"pegasos " + cmd->get_name() + "\"\n" + roff(cmd->get_description()) + "\n";
  for (const CLI::Option* opt : cmd->get_options()) {
    if (opt->get_lnames().size() == 1 && opt->get_lnames()[0] == "help") continue;
    s += ".TP\n" + option_heading(opt) + "\n" + roff(opt->get_description()) + "\n";
  }
  std::string footer = cmd->get_footer();
  if (!footer.empty() && cmd->get_name() != "train") s += ".PP\n" + roff(footer) + "\n";
  return s;
}

std::string table_sections() {
  std::string s = ".SH \"DATA FORMATS\"\nAny file may be gzip-compressed; \\- is standard input.\n";
  for (const auto& [format, name] : kDataFormatNames) {
    s += ".TP\n\\fB" + roff(std::string(name)) + "\\fR\n" + roff(std::string(format_help(format))) + "\n";
  }
  s += ".SH OBJECTIVES\n";
  s += ".TP\n\\fB" + roff(std::string(kAutoObjective)) + "\\fR\n" + roff(std::string(kAutoObjectiveHelp)) + "\n";
  for (const ObjectiveRow& row : kObjectiveTable) {
    s += ".TP\n\\fB" + roff(std::string(row.name)) + "\\fR\n" + roff(objective_summary(row)) + "\n";
  }
  s += ".SH SETTINGS\nKeys of a JSON configuration file (\\fB\\-\\-config\\fR), or \\fB\\-\\-set\\fR KEY=VALUE; "
       "nested settings as \\fB\\-\\-set\\fR features.hash_bits=18.\n";
  for (const auto& k : config_keys()) {
    s += ".TP\n\\fB" + roff(k.name) + "\\fR (default: " + roff(shown_default(k)) + ")\n" + roff(k.help) + "\n";
  }
  s += ".TP\n\\fBfeatures.\\fR\\fIKEY\\fR\ntext featurisation settings, with their defaults:";
  const nlohmann::json text_defaults = text_options_to_json(TextOptions{});  // alive through the loop
  for (const auto& [key, value] : text_defaults.items()) s += " " + roff(key + "=" + value.dump());
  return s + "\n";
}

}  // namespace

std::string man_page(const CLI::App& app) {
  std::string s = ".\\\" Generated by `pegasos --man` from the tables behind --help; do not edit.\n";
  s += ".TH PEGASOS 1 \"\" \"" + roff(app.version()) + "\" \"User Commands\"\n";
  s += ".SH NAME\npegasos \\- " + roff(app.get_description().substr(app.get_description().find(':') + 2)) + "\n";
  s += ".SH SYNOPSIS\n";
  for (const CLI::App* cmd : commands(app)) {
    s += ".B pegasos " + cmd->get_name() + "\n[\\fIOPTIONS\\fR]";
    for (const CLI::Option* opt : cmd->get_options()) {
      if (opt->get_positional()) s += opt->get_required() ? " \\fI" + roff(opt->get_name()) + "\\fR" : " [\\fI" + roff(opt->get_name()) + "\\fR]";
    }
    s += "\n.br\n";
  }
  s += ".SH DESCRIPTION\nLinear and kernel SVMs trained with Pegasos (stochastic sub-gradient) or, for the "
       "linear objectives, dual coordinate ascent (SDCA). Every command prints its options with \\fB\\-\\-help\\fR.\n";
  s += ".SH COMMANDS\n";
  for (const CLI::App* cmd : commands(app)) s += command_section(cmd);
  s += table_sections();
  s += ".SH \"EXIT STATUS\"\n.TP\n0\nsuccess\n.TP\n1\ninternal failure (or a write error)\n.TP\n2\nbad input: data, "
       "configuration, model or command line\n.TP\n3\n\\fBtrain \\-\\-strict\\fR: training did not converge\n";
  s += ".SH \"SEE ALSO\"\nThe README and docs/experiments.md of the pegasos sources.\n";
  return s;
}

std::string bash_completion(const CLI::App& app) {
  std::string names, cases, objectives, formats;
  for (const CLI::App* cmd : commands(app)) {
    names += (names.empty() ? "" : " ") + cmd->get_name();
    cases += "    " + cmd->get_name() + ") opts=\"" + joined(option_names(*cmd)) + "\" ;;\n";
  }
  for (const ObjectiveRow& row : kObjectiveTable) objectives += (objectives.empty() ? "" : " ") + std::string(row.name);
  for (const auto& [format, name] : kDataFormatNames) formats += (formats.empty() ? "" : " ") + std::string(name);
  std::string s = "# bash completion for pegasos; generated by `pegasos --bash-completion` (do not edit)\n";
  s += "_pegasos() {\n"
       "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd='' opts='' i\n"
       "  local commands='" + names + "'\n"
       "  local keys='" + joined(settable_keys()) + "'\n"
       "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
       "    case \" $commands \" in *\" ${COMP_WORDS[i]} \"*) cmd=${COMP_WORDS[i]}; break ;; esac\n"
       "  done\n"
       "  if [[ -z $cmd ]]; then\n"
       "    COMPREPLY=($(compgen -W \"$commands " + joined(option_names(app)) + "\" -- \"$cur\")); return\n"
       "  fi\n"
       "  # KEY=VALUE after --set / --grid: bash splits the word at '=' (COMP_WORDBREAKS).\n"
       "  local setting=''\n"
       "  if [[ $cur == = || $prev == = ]] && ((COMP_CWORD >= 3)); then\n"
       "    [[ $cur == = ]] && cur=''\n"
       "    [[ ${COMP_WORDS[COMP_CWORD-1]} == = ]] && setting=${COMP_WORDS[COMP_CWORD-2]} prev=${COMP_WORDS[COMP_CWORD-3]}\n"
       "    [[ ${COMP_WORDS[COMP_CWORD]} == = ]] && setting=${COMP_WORDS[COMP_CWORD-1]} prev=${COMP_WORDS[COMP_CWORD-2]}\n"
       "  fi\n"
       "  case $prev in\n"
       "    --set|-s|--grid)\n"
       "      if [[ -n $setting ]]; then\n"
       "        case $setting in\n"
       "          objective) COMPREPLY=($(compgen -W '" + objectives + "' -- \"$cur\")) ;;\n"
       "          format) COMPREPLY=($(compgen -W '" + formats + "' -- \"$cur\")) ;;\n"
       "        esac\n"
       "      else\n"
       "        compopt -o nospace 2>/dev/null\n"
       "        COMPREPLY=($(compgen -S = -W \"$keys\" -- \"$cur\"))\n"
       "      fi\n"
       "      return ;;\n"
       "    --format|-f) COMPREPLY=($(compgen -W '" + formats + " document' -- \"$cur\")); return ;;\n"
       "    --config|-c|--model|-m|--init-model|--weights|--output|-o|--json|-j) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n"
       "  esac\n"
       "  case $cmd in\n" + cases + "  esac\n"
       "  if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\")); return; fi\n"
       "  COMPREPLY=($(compgen -f -- \"$cur\"))\n"
       "}\n"
       "complete -o filenames -F _pegasos pegasos\n";
  return s;
}

}  // namespace pegasos
