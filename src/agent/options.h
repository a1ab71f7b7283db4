// The compile loop's options as one list. Each row says how an option is spelled on the
// command line, in bench.toml and in session.json, its help and its default, and how its
// value is read and written; the command line (agent/options_cli.h), bench.toml
// (agent/options_toml.h) and session.json (agent/session.h) are all built from it, so a new
// option is one row here plus the code that uses it.
//
// The one default of every option is CompileOptions' own (agent/compile.h), but for the
// architecture, which is "" until resolve_arch fills it in (the GPU's, else sm_90a).
#pragma once

#include <ctime>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "util/result.h"

namespace ptxforge::agent {

struct CompileOptions;

// One per row of the table (options_test checks that each has one; it counts up to the last).
enum class Option {
  model, mode, knowledge, fewshot_nvcc, prompt_rules, prompt_format, repair_candidate, repair_feedback,
  arch, run_arch, hardware, rounds, samples, target_speedup, target_base, cache, temperature, max_tokens,
  verify_seeds, seed, held_back, time, sanitize, allow_suspicious, profile, prove_ncu, verify_timeout,
  price, price_in, price_out, prices_known, device
};

// How the command line takes an option.
enum class CliForm {
  none,         // not on the command line
  value,        // --max-tokens 4096
  flag_sets,    // --profile: the option becomes true
  flag_clears,  // --no-cache: the option becomes false
  omit_part,    // one of --omit's parts (cli names the part): the option becomes false
};

// Where bench.toml holds an option.
enum class BenchPlace { none, top, model, run };  // the top level, each [[models]] entry, [run]

// The kind of value, for bench.toml's type check and the messages.
enum class ValueKind { text, integer, number, boolean, number_pair };

struct OptionRow {
  Option id;
  std::string_view cli;          // "--max-tokens" (for omit_part: the part, "rules"); "" when none
  CliForm cli_form;
  BenchPlace bench_place;
  std::string_view bench_key;    // "" when bench.toml does not take it
  std::string_view session_key;  // "" when session.json does not hold it
  std::string_view help;
  ValueKind kind;
  std::optional<double> min, max;  // the range of a number, checked wherever it is given
  // The value as the command line and bench.toml spell it ("" for an unset seed) ...
  std::function<std::string(const CompileOptions&)> text;
  // ... and back; errors name the option as `name` spells it (the flag, or the bench.toml key).
  std::function<Status(CompileOptions&, std::string_view text, std::string_view name)> parse;
  // session.json's value, and back (errors need no name: the caller gives the key).
  std::function<nlohmann::json(const CompileOptions&)> save;
  std::function<Status(CompileOptions&, const nlohmann::json&)> load;
};

// Every option, in the order the command line's help lists them.
const std::vector<OptionRow>& option_rows();
const OptionRow& option_row(Option id);

// The options a command starts from: CompileOptions' defaults, the architecture left "".
CompileOptions default_options();
// An option's default as the command line and bench.toml spell it ("" when it has none).
std::string default_text(const OptionRow& row);

// The range of a number: "--max-tokens must be at least 1", named as `name` spells it.
Status check_range(const OptionRow& row, const CompileOptions& o, std::string_view name);
// Every option's range, named by its flag (or its bench.toml key, where it has no flag).
Status check_ranges(const CompileOptions& o);

// An architecture left "" becomes the hardware profile's, else the GPU's, else sm_90a.
void resolve_arch(CompileOptions& o);

// Where a session goes without --out: sessions/<task folder's name>-<local time>
// ("sessions/saxpy-20250101-120000"); claim_session_dir then makes it unique.
std::string default_session_dir(const std::string& task_dir, std::time_t now);

}  // namespace ptxforge::agent
