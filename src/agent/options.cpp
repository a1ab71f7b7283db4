#include "agent/options.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "agent/compile.h"
#include "agent/hardware.h"
#include "ptx/target.h"
#include "task/seeds.h"
#include "util/text.h"

namespace ptxforge::agent {

namespace {

using nlohmann::json;

// The spelling half of a row; the helpers below add the codecs.
struct Spelling {
  Option id;
  std::string_view cli;
  CliForm cli_form;
  BenchPlace bench_place;
  std::string_view bench_key, session_key, help;
  std::optional<double> min{}, max{};
};

OptionRow row_of(const Spelling& s, ValueKind kind) {
  OptionRow r;
  r.id = s.id;
  r.cli = s.cli;
  r.cli_form = s.cli_form;
  r.bench_place = s.bench_place;
  r.bench_key = s.bench_key;
  r.session_key = s.session_key;
  r.help = s.help;
  r.kind = kind;
  r.min = s.min;
  r.max = s.max;
  return r;
}

Result<long long> whole_number(std::string_view text, std::string_view name) {
  std::string_view t = trim(text);
  long long v = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || ec != std::errc() || end != t.data() + t.size())
    return Error{fmt::format("{} takes a whole number, not '{}'", name, text)};
  return v;
}

Result<double> number(std::string_view text, std::string_view name) {
  std::string t(trim(text));
  char* end = nullptr;
  double v = t.empty() ? 0 : std::strtod(t.c_str(), &end);
  if (t.empty() || *end != '\0' || !std::isfinite(v)) return Error{fmt::format("{} takes a number, not '{}'", name, text)};
  return v;
}

Result<bool> boolean(std::string_view text, std::string_view name) {
  if (text == "true") return true;
  if (text == "false") return false;
  return Error{fmt::format("{} takes true or false, not '{}'", name, text)};
}

// `access(o)` returns a reference to the member the row is about (const for a const `o`).
template <typename Access>
OptionRow text_row(const Spelling& s, Access access) {
  OptionRow r = row_of(s, ValueKind::text);
  r.text = [access](const CompileOptions& o) { return access(o); };
  r.parse = [access](CompileOptions& o, std::string_view text, std::string_view) -> Status {
    access(o) = std::string(text);
    return ok_status();
  };
  r.save = [access](const CompileOptions& o) { return json(access(o)); };
  r.load = [access](CompileOptions& o, const json& j) -> Status {
    access(o) = j.get<std::string>();
    return ok_status();
  };
  return r;
}

template <typename Access>
OptionRow integer_row(const Spelling& s, Access access) {
  OptionRow r = row_of(s, ValueKind::integer);
  r.text = [access](const CompileOptions& o) { return std::to_string(access(o)); };
  r.parse = [access](CompileOptions& o, std::string_view text, std::string_view name) -> Status {
    auto v = whole_number(text, name);
    if (!v) return v.error();
    using T = std::decay_t<decltype(access(o))>;
    if (*v < std::numeric_limits<T>::min() || *v > std::numeric_limits<T>::max())
      return Error{fmt::format("{} takes a whole number, not '{}'", name, text)};
    access(o) = static_cast<T>(*v);
    return ok_status();
  };
  r.save = [access](const CompileOptions& o) { return json(access(o)); };
  r.load = [access](CompileOptions& o, const json& j) -> Status {
    access(o) = j.get<std::decay_t<decltype(access(o))>>();
    return ok_status();
  };
  return r;
}

template <typename Access>
OptionRow number_row(const Spelling& s, Access access) {
  OptionRow r = row_of(s, ValueKind::number);
  r.text = [access](const CompileOptions& o) { return fmt::format("{}", access(o)); };
  r.parse = [access](CompileOptions& o, std::string_view text, std::string_view name) -> Status {
    auto v = number(text, name);
    if (!v) return v.error();
    access(o) = *v;
    return ok_status();
  };
  r.save = [access](const CompileOptions& o) { return json(access(o)); };
  r.load = [access](CompileOptions& o, const json& j) -> Status {
    access(o) = j.get<double>();
    return ok_status();
  };
  return r;
}

template <typename Access>
OptionRow bool_row(const Spelling& s, Access access) {
  OptionRow r = row_of(s, ValueKind::boolean);
  r.text = [access](const CompileOptions& o) -> std::string { return access(o) ? "true" : "false"; };
  r.parse = [access](CompileOptions& o, std::string_view text, std::string_view name) -> Status {
    auto v = boolean(text, name);
    if (!v) return v.error();
    access(o) = *v;
    return ok_status();
  };
  r.save = [access](const CompileOptions& o) { return json(access(o)); };
  r.load = [access](CompileOptions& o, const json& j) -> Status {
    access(o) = j.get<bool>();
    return ok_status();
  };
  return r;
}

// A row whose session.json value is its text (an enum's name).
OptionRow named_row(const Spelling& s, std::function<std::string(const CompileOptions&)> text,
                    std::function<Status(CompileOptions&, std::string_view, std::string_view)> parse) {
  OptionRow r = row_of(s, ValueKind::text);
  r.text = text;
  r.parse = parse;
  r.save = [text](const CompileOptions& o) { return json(text(o)); };
  std::string key(s.session_key);
  r.load = [parse, key](CompileOptions& o, const json& j) { return parse(o, j.get<std::string>(), key); };
  return r;
}

Status parse_arch(CompileOptions& o, std::string_view text, std::string_view name) {
  std::string arch(trim(text));
  if (!arch.empty()) {
    std::vector<std::string> names;
    for (auto& t : ptx::known_targets()) names.push_back(t.str());
    if (std::find(names.begin(), names.end(), arch) == names.end()) {
      std::vector<std::string_view> views(names.begin(), names.end());
      std::string guess = closest_match(arch, views);
      return Error{fmt::format("{}: '{}' is not a target ptxas knows{}", name, arch,
                               guess.empty() ? "; write e.g. sm_80, sm_90 or sm_90a" : "; did you mean '" + guess + "'?")};
    }
  }
  // The prompt's and the run's: one target unless a session saved them apart.
  o.prompt.arch = o.run.arch = arch;
  return ok_status();
}

Status parse_price(CompileOptions& o, std::string_view text, std::string_view name) {
  auto parts = split(text, ',');
  Result<double> in = Error{""}, out = Error{""};
  if (parts.size() == 2) {
    in = number(parts[0], name);
    out = number(parts[1], name);
  }
  if (!in || !out) return Error{fmt::format("{} takes two numbers, e.g. 2.5,10 (USD per million prompt, completion tokens)", name)};
  if (*in < 0 || *out < 0) return Error{fmt::format("{} takes two numbers that are not negative, e.g. 2.5,10", name)};
  o.prices = {*in, *out, true};
  return ok_status();
}

std::vector<OptionRow> make_rows() {
  using C = CliForm;
  using B = BenchPlace;
  std::vector<OptionRow> rows;
  rows.push_back(text_row({Option::model, "--model", C::value, B::model, "spec", "model",
                           "openai:<model>, anthropic:<model>, cmd:<command line>, replay:<file> or manual"},
                          [](auto& o) -> auto& { return o.model; }));
  rows.push_back(named_row(
      {Option::mode, "--mode", C::value, B::none, "", "mode", "implement (from the task's description) or translate (from its CUDA source)"},
      [](const CompileOptions& o) -> std::string { return o.prompt.mode == Mode::translate ? "translate" : "implement"; },
      [](CompileOptions& o, std::string_view t, std::string_view name) -> Status {
        if (t != "implement" && t != "translate") return Error{fmt::format("{} takes implement or translate, not '{}'", name, t)};
        o.prompt.mode = t == "translate" ? Mode::translate : Mode::implement;
        return ok_status();
      }));
  rows.push_back(named_row(
      {Option::knowledge, "--knowledge", C::value, B::none, "", "knowledge", "none, hardware, templates, contracts or full"},
      [](const CompileOptions& o) { return std::string(knowledge_level_name(o.prompt.knowledge)); },
      [](CompileOptions& o, std::string_view t, std::string_view name) -> Status {
        auto k = parse_knowledge_level(std::string(t));
        if (!k) return Error{fmt::format("{}: {}", name, k.error().message)};
        o.prompt.knowledge = *k;
        return ok_status();
      }));
  rows.push_back(bool_row({Option::fewshot_nvcc, "--fewshot-nvcc", C::flag_sets, B::none, "", "fewshot_nvcc",
                           "include the PTX nvcc emits for the reference kernel"},
                          [](auto& o) -> auto& { return o.prompt.fewshot_nvcc; }));
  rows.push_back(bool_row({Option::prompt_rules, "rules", C::omit_part, B::none, "", "prompt_rules", "the prompt's rules"},
                          [](auto& o) -> auto& { return o.prompt.role; }));
  rows.push_back(bool_row({Option::prompt_format, "format", C::omit_part, B::none, "", "prompt_format", "the prompt's reply format"},
                          [](auto& o) -> auto& { return o.prompt.format; }));
  rows.push_back(integer_row({Option::rounds, "--rounds", C::value, B::top, "rounds", "rounds", "rounds per sample", 1, 100},
                             [](auto& o) -> auto& { return o.rounds; }));
  rows.push_back(integer_row({Option::samples, "--samples", C::value, B::top, "samples", "samples",
                              "independent trajectories; the best verified kernel is kept", 1, 64},
                             [](auto& o) -> auto& { return o.samples; }));
  {
    OptionRow r = row_of({Option::target_speedup, "--target-speedup", C::value, B::top, "target_speedup", "target_speedup",
                          "keep improving a verified kernel until it is this much faster than nvcc (1.2x) or the library "
                          "(1.0x:library), or the rounds run out; the best verified round is kept (0x: stop at the first verified)",
                          0},
                         ValueKind::text);
    r.text = [](const CompileOptions& o) {
      return fmt::format("{}x{}", o.target_speedup, o.target_base == SpeedupBase::library ? ":library" : "");
    };
    r.parse = [](CompileOptions& o, std::string_view t, std::string_view name) -> Status {
      auto v = parse_target_speedup(t);
      if (!v) return Error{fmt::format("{}: {}", name, v.error().message)};
      o.target_speedup = v->first;
      o.target_base = v->second;
      return ok_status();
    };
    // session.json keeps the number and its base apart (target_base).
    r.save = [](const CompileOptions& o) { return json(o.target_speedup); };
    r.load = [](CompileOptions& o, const json& j) -> Status {
      o.target_speedup = j.get<double>();
      return ok_status();
    };
    rows.push_back(r);
  }
  rows.push_back(named_row(
      {Option::target_base, "", C::none, B::none, "", "target_base", "what the target speedup is relative to: nvcc or library"},
      [](const CompileOptions& o) -> std::string { return o.target_base == SpeedupBase::library ? "library" : "nvcc"; },
      [](CompileOptions& o, std::string_view t, std::string_view name) -> Status {
        if (t != "library" && t != "nvcc") return Error{fmt::format("{} takes nvcc or library, not '{}'", name, t)};
        o.target_base = t == "library" ? SpeedupBase::library : SpeedupBase::nvcc;
        return ok_status();
      }));
  {
    OptionRow r = text_row({Option::arch, "--arch", C::value, B::top, "arch", "arch", "target (default: the GPU's, else sm_90a)"},
                           [](auto& o) -> auto& { return o.prompt.arch; });
    r.parse = parse_arch;
    // Loading sets the run's target too: sessions saved before run_arch had one target.
    r.load = [](CompileOptions& o, const json& j) -> Status {
      o.prompt.arch = o.run.arch = j.get<std::string>();
      return ok_status();
    };
    rows.push_back(r);
  }
  rows.push_back(text_row({Option::run_arch, "", C::none, B::none, "", "run_arch", "the target candidates are assembled for"},
                          [](auto& o) -> auto& { return o.run.arch; }));
  rows.push_back(text_row({Option::hardware, "--hardware", C::value, B::top, "hardware", "hardware_profile",
                           "describe this hardware profile instead of the GPU (h200)"},
                          [](auto& o) -> auto& { return o.hardware_profile; }));
  rows.push_back(number_row({Option::temperature, "--temperature", C::value, B::model, "temperature", "temperature",
                             "sampling temperature", 0, 2},
                            [](auto& o) -> auto& { return o.temperature; }));
  rows.push_back(integer_row({Option::max_tokens, "--max-tokens", C::value, B::model, "max_tokens", "max_tokens",
                              "reply token limit", 1},
                             [](auto& o) -> auto& { return o.max_tokens; }));
  rows.push_back(integer_row({Option::verify_seeds, "--seeds", C::value, B::run, "verify_seeds", "seeds",
                              "input seeds per size set when verifying", 1, 64},
                             [](auto& o) -> auto& { return o.run.seeds; }));
  {
    OptionRow r = row_of({Option::seed, "--seed", C::value, B::none, "", "seed",
                          "base seed of the session (decimal, or hex with 0x): each round's seed derives from it; "
                          "default: a fresh seed every round"},
                         ValueKind::text);
    r.text = [](const CompileOptions& o) { return o.run.seed ? task::seed_text(*o.run.seed) : std::string(); };
    r.parse = [](CompileOptions& o, std::string_view t, std::string_view) -> Status {
      auto s = task::parse_seed(t);
      if (!s) return s.error();
      o.run.seed = *s;
      return ok_status();
    };
    // A decimal string (64 bits lose digits in many JSON readers); null: a fresh seed every round.
    r.save = [](const CompileOptions& o) { return o.run.seed ? json(task::seed_text(*o.run.seed)) : json(nullptr); };
    r.load = [](CompileOptions& o, const json& j) -> Status {
      if (j.is_null()) {
        o.run.seed.reset();
        return ok_status();
      }
      auto s = task::parse_seed(j.get<std::string>());
      if (!s) return s.error();
      o.run.seed = *s;
      return ok_status();
    };
    rows.push_back(r);
  }
  {
    OptionRow r = row_of({Option::price, "--price", C::value, B::model, "price", "",
                          "USD per million prompt,completion tokens, for the cost line (e.g. 2.5,10)"},
                         ValueKind::number_pair);
    r.text = [](const CompileOptions& o) {
      return o.prices.known ? fmt::format("{},{}", o.prices.input_per_mtok, o.prices.output_per_mtok) : std::string();
    };
    r.parse = parse_price;
    rows.push_back(r);  // session.json: price_in, price_out and prices_known
  }
  rows.push_back(number_row({Option::price_in, "", C::none, B::none, "", "price_in", "USD per million prompt tokens"},
                            [](auto& o) -> auto& { return o.prices.input_per_mtok; }));
  rows.push_back(number_row({Option::price_out, "", C::none, B::none, "", "price_out", "USD per million completion tokens"},
                            [](auto& o) -> auto& { return o.prices.output_per_mtok; }));
  rows.push_back(bool_row({Option::prices_known, "", C::none, B::none, "", "prices_known", "prices were given"},
                          [](auto& o) -> auto& { return o.prices.known; }));
  rows.push_back(bool_row({Option::cache, "--no-cache", C::flag_clears, B::none, "", "cache",
                           "always ask the model, even for a request made before"},
                          [](auto& o) -> auto& { return o.cache; }));
  rows.push_back(bool_row({Option::time, "--no-time", C::flag_clears, B::run, "time", "time", "verify but do not time"},
                          [](auto& o) -> auto& { return o.run.time; }));
  rows.push_back(bool_row({Option::held_back, "--shown-sizes", C::flag_clears, B::run, "held_back", "held_back",
                           "verify on the shown sizes only"},
                          [](auto& o) -> auto& { return o.run.held_back; }));
  rows.push_back(bool_row({Option::allow_suspicious, "--allow-suspicious", C::flag_sets, B::run, "allow_suspicious",
                           "allow_suspicious",
                           "let a time faster than the GPU's peaks, or over 10x the vendor library, pass as a flag"},
                          [](auto& o) -> auto& { return o.run.allow_suspicious; }));
  rows.push_back(bool_row({Option::sanitize, "--no-sanitize", C::flag_clears, B::run, "sanitize", "sanitize",
                           "do not run each newly verified kernel under compute-sanitizer (memcheck, racecheck, synccheck, initcheck)"},
                          [](auto& o) -> auto& { return o.run.sanitize; }));
  rows.push_back(bool_row({Option::profile, "--profile", C::flag_sets, B::run, "profile", "profile",
                           "profile each verified kernel with Nsight Compute and tell the model why it is as fast as it is: "
                           "occupancy and its limiter, DRAM/L2/SM throughput, pipes, warp stalls, bank conflicts, local memory; "
                           "beside nvcc's kernel"},
                          [](auto& o) -> auto& { return o.run.profile; }));
  rows.push_back(named_row(
      {Option::device, "--device", C::value, B::run, "device", "device",
       "where kernels are verified: auto (a GPU where a driver is found, else the CPU engine), gpu or cpu"},
      [](const CompileOptions& o) { return std::string(eval::to_string(o.run.device)); },
      [](CompileOptions& o, std::string_view t, std::string_view name) -> Status {
        auto d = eval::device_from_string(t);
        if (!d) return Error{fmt::format("{} takes auto, gpu or cpu, not '{}'", name, t)};
        o.run.device = *d;
        return ok_status();
      }));
  rows.push_back(bool_row({Option::prove_ncu, "", C::none, B::run, "prove_ncu", "prove_ncu",
                           "cross-check the executed proof with Nsight Compute"},
                          [](auto& o) -> auto& { return o.run.prove_ncu; }));
  {
    OptionRow r = row_of({Option::verify_timeout, "", C::none, B::none, "", "verify_timeout_ms", "verify's time limit, ms", 1},
                         ValueKind::integer);
    r.text = [](const CompileOptions& o) { return std::to_string(o.run.verify_timeout.count()); };
    r.parse = [](CompileOptions& o, std::string_view t, std::string_view name) -> Status {
      auto v = whole_number(t, name);
      if (!v) return v.error();
      o.run.verify_timeout = std::chrono::milliseconds(*v);
      return ok_status();
    };
    r.save = [](const CompileOptions& o) { return json(o.run.verify_timeout.count()); };
    r.load = [](CompileOptions& o, const json& j) -> Status {
      o.run.verify_timeout = std::chrono::milliseconds(j.get<long long>());
      return ok_status();
    };
    rows.push_back(r);
  }
  rows.push_back(text_row({Option::repair_candidate, "", C::none, B::none, "", "repair_candidate",
                           "fixit: the failed kernel shown after the task"},
                          [](auto& o) -> auto& { return o.prompt.repair_candidate; }));
  rows.push_back(text_row({Option::repair_feedback, "", C::none, B::none, "", "repair_feedback",
                           "fixit: the toolchain's verdict on the failed kernel"},
                          [](auto& o) -> auto& { return o.prompt.repair_feedback; }));
  // run.launch_path is no option of the loop: compile reads the launch from each reply.
  return rows;
}

std::string bound_text(double v) { return fmt::format("{}", v); }

}  // namespace

const std::vector<OptionRow>& option_rows() {
  static const std::vector<OptionRow> rows = make_rows();
  return rows;
}

const OptionRow& option_row(Option id) {
  for (auto& r : option_rows())
    if (r.id == id) return r;
  // Every Option has a row (options_test checks it); reaching here is a bug.
  std::abort();
}

CompileOptions default_options() {
  CompileOptions o;
  o.prompt.arch = o.run.arch = "";
  return o;
}

std::string default_text(const OptionRow& row) { return row.text(default_options()); }

Status check_range(const OptionRow& row, const CompileOptions& o, std::string_view name) {
  if (!row.min && !row.max) return ok_status();
  double v = std::strtod(row.text(o).c_str(), nullptr);
  if ((row.min && v < *row.min) || (row.max && v > *row.max)) {
    if (row.min && row.max) return Error{fmt::format("{} must lie between {} and {}", name, bound_text(*row.min), bound_text(*row.max))};
    if (row.min) return Error{fmt::format("{} must be at least {}", name, bound_text(*row.min))};
    return Error{fmt::format("{} must be at most {}", name, bound_text(*row.max))};
  }
  return ok_status();
}

Status check_ranges(const CompileOptions& o) {
  for (auto& row : option_rows()) {
    std::string_view name = row.cli_form == CliForm::value ? row.cli : !row.bench_key.empty() ? row.bench_key : row.session_key;
    if (auto s = check_range(row, o, name); !s) return s;
  }
  return ok_status();
}

void resolve_arch(CompileOptions& o) {
  if (!o.prompt.arch.empty() && !o.run.arch.empty()) return;
  auto hw = find_hardware(o.hardware_profile);
  std::string arch = hw ? hw->arch() : "sm_90a";
  if (o.prompt.arch.empty()) o.prompt.arch = arch;
  if (o.run.arch.empty()) o.run.arch = arch;
}

std::string default_session_dir(const std::string& task_dir, std::time_t now) {
  std::tm local{};
  localtime_r(&now, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &local);
  std::string task = std::filesystem::path(task_dir).lexically_normal().filename().string();
  if (task.empty()) task = std::filesystem::path(task_dir).lexically_normal().parent_path().filename().string();
  return fmt::format("sessions/{}-{}", task.empty() ? "task" : task, stamp);
}

}  // namespace ptxforge::agent
