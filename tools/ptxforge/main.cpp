// ptxforge: the command-line front end. Dispatches to a subcommand from the table in
// commands.cpp; everything it does is reachable through the library.
#include <iostream>

#include <fmt/format.h>

#include "commands.h"
#include "util/paths.h"
#include "util/text.h"

using namespace ptxforge;

namespace {

void print_usage() {
  std::cout << "ptxforge — a PTX toolchain where a language model is the compiler backend\n\n"
               "usage: ptxforge <command> [options] [args]\n\ncommands:\n";
  for (auto& c : cli::commands()) std::cout << fmt::format("  {:<10} {}\n", c.name, c.summary);
  std::cout << fmt::format("  {:<10} {}\n", "help", "show help for a command");
  std::cout << "\nexit codes: 0 ok, 1 the input has errors, 2 usage or environment problem\n"
               "run 'ptxforge help <command>' for a command's options\n";
}

const cli::Command* find_command(std::string_view name) {
  for (auto& c : cli::commands())
    if (c.name == name) return &c;
  return nullptr;
}

int unknown_command(std::string_view name) {
  std::vector<std::string_view> names;
  for (auto& c : cli::commands()) names.push_back(c.name);
  names.push_back("help");
  std::cerr << fmt::format("ptxforge: unknown command '{}'", name);
  std::string guess = closest_match(name, names);
  if (!guess.empty()) std::cerr << fmt::format("; did you mean '{}'?", guess);
  std::cerr << "\nrun 'ptxforge --help' for the list of commands\n";
  return cli::kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    print_usage();
    return args.empty() ? cli::kExitUsage : cli::kExitOk;
  }
  if (args[0] == "--version") {
    auto data = data_dir();
    std::cout << "ptxforge 0.1.0\ndata: " << (data ? *data : std::string("(not found)")) << "\n";
    return cli::kExitOk;
  }
  if (args[0] == "help") {
    if (args.size() == 1) {
      print_usage();
      return cli::kExitOk;
    }
    if (args[1] == "help") {
      std::cout << "usage: ptxforge help [<command> [<subcommand>]]\n\n"
                   "Shows a command's options, e.g. 'ptxforge help check' or 'ptxforge help task new'.\n";
      return cli::kExitOk;
    }
    const cli::Command* c = find_command(args[1]);
    if (!c) return unknown_command(args[1]);
    // `help task new` is `task new --help`: the subcommand's own options.
    std::vector<std::string> rest(args.begin() + 2, args.end());
    rest.push_back("--help");
    return c->run(rest);
  }
  const cli::Command* c = find_command(args[0]);
  if (!c) return unknown_command(args[0]);
  try {
    return c->run(std::vector<std::string>(args.begin() + 1, args.end()));
  } catch (const std::exception& e) {
    std::cerr << "ptxforge " << args[0] << ": internal error: " << e.what() << "\n";
    return cli::kExitUsage;
  }
}
