// The keys task.toml may hold, table by table. A key that is not one of them is an error with
// a "did you mean" and the key's own line: `[tolerence]` or `rtoll = 1e-3` would otherwise be
// ignored and the task would run with defaults its author never chose. Size-set tables hold
// size symbols of any name; task_spec.cpp checks that each one is used by an expression.
#pragma once

#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "util/diagnostic.h"

namespace ptxforge::task {

// Every unknown key in the task file, in every table whose keys are fixed.
void check_task_keys(const toml::table& root, Diagnostics& diags);

// Keys a [[sizes]] entry holds besides its size symbols.
const std::vector<std::string_view>& size_set_keys();

SourceLoc key_loc(const toml::key& k);

}  // namespace ptxforge::task
