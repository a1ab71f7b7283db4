// CLI11 glue kept out of commands.h so only the command files pay for the heavy header.
#pragma once

#include <CLI/CLI.hpp>

#include "commands.h"
#include "ptx/target.h"
#include "util/text.h"

namespace ptxforge::cli {

// `ptxforge suite bogus`: CLI11 would call "bogus" an unexpected argument; the user meant a
// subcommand, so say which ones there are.
template <typename App>
int unknown_subcommand(App& app, const std::vector<std::string>& args) {
  auto subs = app.get_subcommands([](CLI::App*) { return true; });
  if (subs.empty() || args.empty() || args[0].empty() || args[0][0] == '-') return -1;
  std::vector<std::string> names;
  for (auto* s : subs) {
    if (s->get_name() == args[0]) return -1;
    names.push_back(s->get_name());
  }
  std::vector<std::string_view> views(names.begin(), names.end());
  std::string guess = closest_match(args[0], views);
  std::cerr << "ptxforge " << app.get_name() << ": unknown subcommand '" << args[0] << "'"
            << (guess.empty() ? "" : "; did you mean '" + guess + "'?") << "\n";
  std::cerr << "the subcommands are:";
  for (auto& n : names) std::cerr << " " << n;
  std::cerr << "\nrun 'ptxforge help " << app.get_name() << "' for usage\n";
  return kExitUsage;
}

// --arch: a target ptxforge knows (sm_80, sm_90a, ...); a typo is a usage error with a
// guess, not an assembler failure reported as if the PTX were wrong.
inline CLI::Validator arch_validator() {
  return CLI::Validator(
      [](std::string& arch) -> std::string {
        auto guess = ptx::unknown_target(arch);
        if (!guess) return "";
        return "'" + arch + "' is not a target ptxas knows" + (guess->empty() ? "" : "; did you mean '" + *guess + "'?");
      },
      "ARCH");
}

template <typename App>
int parse_args(App& app, const std::vector<std::string>& args) {
  if (int rc = unknown_subcommand(app, args); rc >= 0) return rc;
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
