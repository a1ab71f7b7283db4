// bench.toml's side of the option table (agent/options.h): the keys of a TOML table that are
// options of one place (the top level, a [[models]] entry, [run]) read into CompileOptions,
// each value checked for its type, its value and its range, and every other key that the
// caller does not read itself reported as unknown, with the nearest known key.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "agent/compile.h"
#include "agent/options.h"

namespace ptxforge::agent {

struct TomlProblem {
  const toml::node* at = nullptr;  // where (its line); nullptr for the table as a whole
  std::string message;
};

// Reads `table`'s options of `place` into `o`. `own` are the keys the caller reads itself;
// `section` names the table in messages ("" for the top level, "[run]", "[[models]]").
std::vector<TomlProblem> read_toml_options(const toml::table& table, BenchPlace place, const std::vector<std::string_view>& own,
                                           std::string_view section, CompileOptions& o);

// The keys bench.toml takes at `place`: the options' and `own`.
std::vector<std::string_view> toml_keys(BenchPlace place, const std::vector<std::string_view>& own);

}  // namespace ptxforge::agent
