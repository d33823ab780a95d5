#include "drivers/cli_suggest.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "core/output_file.hpp"
#include "core/suggest.hpp"

namespace pegasos {
namespace {

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* cmd : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(cmd->get_name());
  return names;
}

std::vector<std::string> long_option_names(const CLI::App& cmd) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : cmd.get_options()) {
    for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
  }
  return names;
}

std::string listed(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// The first word of argv that is not an option (the command), or "".
std::string first_word(int argc, char** argv, int& at) {
  for (at = 1; at < argc; ++at) {
    const std::string a = argv[at];
    if (a.empty() || a[0] != '-') return a;
  }
  return "";
}

// The first long option among argv[begin, end) that `cmd` does not have, as
// a message with the closest one; "" when all are known.
std::string unknown_option(const CLI::App& cmd, const std::string& usage, int begin, int end, char** argv) {
  for (int i = begin; i < end; ++i) {
    const std::string a = argv[i];
    if (a == "--") break;
    if (a.size() < 3 || a.compare(0, 2, "--") != 0) continue;
    const std::string name = a.substr(0, a.find('='));
    if (cmd.get_option_no_throw(name) != nullptr) continue;
    return "unknown option '" + name + "' for '" + usage + "'" + did_you_mean(name, long_option_names(cmd)) + "; `" +
           usage + " --help` lists them";
  }
  return "";
}

// The problem with argv in words, or "" to leave the message to CLI11.
std::string misspelt(const CLI::App& app, int argc, char** argv) {
  int at = 0;
  const std::string word = first_word(argc, argv, at);
  if (const std::string top = unknown_option(app, "pegasos", 1, at, argv); !top.empty()) return top;
  if (word.empty()) return "a command is required; the commands are " + listed(command_names(app));
  const CLI::App* cmd = nullptr;
  for (const CLI::App* c : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (c->get_name() == word) cmd = c;
  }
  if (cmd == nullptr) {
    return "unknown command '" + word + "'" + did_you_mean(word, command_names(app)) +
           "; the commands are " + listed(command_names(app));
  }
  return unknown_option(*cmd, "pegasos " + word, at + 1, argc, argv);
}

}  // namespace

int report_parse_error(CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  if (e.get_exit_code() == 0) {  // --help, --version
    // Written as every other output (every write checked, its errno named):
    // through std::cout a failed write left only the stream's error flag.
    std::ostringstream text;
    const int code = app.exit(e, text);
    write_output("-", text.str());
    return code;
  }
  const std::string problem = misspelt(app, argc, argv);
  if (problem.empty()) {
    // As every other error: "error: " first, then where to look.
    std::string help = "pegasos --help";
    for (const CLI::App* sub : app.get_subcommands()) help = "pegasos " + sub->get_name() + " --help";
    // A file whose name starts with '-' reads as an option: say how to name it.
    std::string file;
    for (int i = 1; i < argc && file.empty(); ++i) {
      const std::string a = argv[i];
      struct stat st{};
      if (a == "--") break;
      if (a.size() > 1 && a[0] == '-' && ::stat(a.c_str(), &st) == 0) {
        file = "; '" + a + "' is also a file: name it ./" + a + ", or put -- before the file names";
      }
    }
    std::fprintf(stderr, "error: %s%s (`%s` lists the options)\n", e.what(), file.c_str(), help.c_str());
    return 2;
  }
  std::fprintf(stderr, "error: %s\n", problem.c_str());
  return 2;
}

}  // namespace pegasos
