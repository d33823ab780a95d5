// Command-line mistakes answered with a suggestion: `pegasos trian` ("did you
// mean 'train'?"), `pegasos train --qiuet` ("did you mean '--quiet'?").
#pragma once

#include <CLI/CLI.hpp>

namespace pegasos {

// After CLI11 rejected argv: prints the error (with a suggestion when a
// command or option name is misspelt; else CLI11's own message) and returns
// the exit code: 0 for --help / --version, else 2.
int report_parse_error(CLI::App& app, const CLI::ParseError& e, int argc, char** argv);

}  // namespace pegasos
