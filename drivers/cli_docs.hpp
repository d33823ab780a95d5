// The CLI's reference texts, generated from the tables that define what they
// describe, so that `--help`, the man page and the bash completion cannot
// drift apart: CLI11's app (commands, options, their help), config_keys()
// (settings), kObjectiveTable (objectives), kDataFormatNames (data formats)
// and TextOptions / the kernel settings (the keys of the nested settings).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace pegasos {

// `train --help`'s footer: data formats, objectives, settings with defaults.
std::string train_help_footer();

// The settings `--set` accepts, nested ones dotted (features.hash_bits,
// kernel.gamma), in --help order.
std::vector<std::string> settable_keys();

// pegasos(1) in roff, from the app's commands and options and the tables.
std::string man_page(const CLI::App& app);

// A bash completion script: commands, options, setting names after --set /
// --grid, objective and format names as values.
std::string bash_completion(const CLI::App& app);

// The hidden document commands: `pegasos --man` and `pegasos --bash-completion`
// (used by `cmake --install`); the text to print, or nothing for other argv.
std::optional<std::string> cli_document(const CLI::App& app, int argc, char** argv);

}  // namespace pegasos
