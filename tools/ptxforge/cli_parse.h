// CLI11 glue kept out of commands.h so only the command files pay for the heavy header.
#pragma once

#include <CLI/CLI.hpp>

#include "commands.h"

namespace ptxforge::cli {

template <typename App>
int parse_args(App& app, const std::vector<std::string>& args) {
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    std::cerr << "ptxforge " << app.get_name() << ": " << e.what() << "\n";
    std::cerr << "run 'ptxforge help " << app.get_name() << "' for usage\n";
    return kExitUsage;
  }
  return -1;
}

}  // namespace ptxforge::cli
