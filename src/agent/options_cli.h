// The command line's side of the option table (agent/options.h): the flags of the loop's
// options added to a CLI11 app from the rows, with their help and the defaults of the options
// the command starts from, and read back into CompileOptions once the app has parsed. Kept
// apart from options.h so only the commands pay for CLI11's header.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "agent/compile.h"
#include "agent/options.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace ptxforge::agent {

// Every option with a command-line spelling, in the table's order (what compile takes).
std::vector<Option> cli_options();

class CliOptions {
 public:
  // Adds the flags of `which` to `app`; the defaults shown are `start`'s. `app` must outlive this.
  CliOptions(CLI::App& app, const std::vector<Option>& which, CompileOptions start);
  CliOptions(const CliOptions&) = delete;
  CliOptions& operator=(const CliOptions&) = delete;

  // After app.parse: `start` with every option given on the command line set. A bad value or
  // one out of range is an error that names the flag ("--max-tokens must be at least 1").
  Result<CompileOptions> apply() const;
  // Whether the command line gave the option.
  bool given(Option id) const;
  // The option's flag in the app (nullptr when it has none), to mark it required, say.
  CLI::Option* flag(Option id) const;

 private:
  struct Slot {
    const OptionRow* row = nullptr;
    std::string text;  // value options
    bool set = false;  // flags
    CLI::Option* opt = nullptr;
  };
  std::deque<Slot> slots_;          // CLI11 holds references into it: a deque does not move them
  std::vector<std::string> omit_;   // --omit's parts
  CLI::Option* omit_opt_ = nullptr;
  CompileOptions start_;
};

}  // namespace ptxforge::agent
