// ptxforge data: training data from the toolchain, as JSONL (docs/data.md).
//   data isa [-o FILE]                                        the ISA table as a dictionary
//   data pairs [SRC_DIR...] [--generate N] -o pairs.jsonl      CUDA → PTX pairs (NVRTC/nvcc, ptxas)
//   data mutate PAIRS.jsonl [--mix 1:4] -o mutants.jsonl       broken/fixed pairs with labels
//   data fixit SESSIONS... -o fixit.jsonl                      repair pairs from compile sessions
//   data export INPUT.jsonl... --out DIR                       chat JSONL, splits, card.md
// Deterministic given --seed. Exit 0 on success, 2 on usage or environment errors.
#include <iostream>
#include <set>

#include <fmt/format.h>

#include "cli_parse.h"
#include "data/dataset.h"
#include "data/generator.h"
#include "data/library_ptx.h"
#include "data/pairs.h"

namespace ptxforge::cli {

namespace {

int fail(const char* who, const std::string& why) {
  std::cerr << "ptxforge data " << who << ": " << why << "\n";
  return kExitUsage;
}

int write_lines(const std::vector<std::string>& lines, const std::string& path, const char* who) {
  std::string body;
  for (auto& l : lines) body += l + "\n";
  if (path.empty() || path == "-") {
    std::cout << body;
    return kExitOk;
  }
  if (auto st = write_file(path, body); !st) return fail(who, fmt::format("cannot write {}: {}", path, st.error().message));
  return kExitOk;
}

int data_isa(const std::vector<std::string>& args) {
  CLI::App app("The PTX ISA table as a JSON dictionary, one instruction family per line", "data isa");
  std::string out;
  app.add_option("-o,--output", out, "write here (default: standard output)");
  if (int rc = parse_args(app, args); rc >= 0) return rc;
  return write_lines(data::isa_dictionary(), out, "isa");
}

int data_pairs(const std::vector<std::string>& args) {
  CLI::App app("CUDA sources to PTX pairs: NVRTC (nvcc where needed) for each target and flag set, labelled by ptxas", "data pairs");
  std::vector<std::string> dirs, archs{"sm_80", "sm_90", "sm_90a"}, flags{"-O3", "-G", "-lineinfo"};
  int generate = 0;
  uint64_t seed = 1;
  std::string out;
  std::vector<std::string> libraries;
  app.add_option("sources", dirs, "folders of .cu files");
  app.add_option("--library", libraries,
                 "also the PTX embedded in these libraries, binaries or fatbins (files, or folders searched for them; "
                 "needs cuobjdump; repeatable)");
  app.add_option("--generate", generate, "also N kernels from the built-in generator")->check(CLI::Range(0, 100000));
  app.add_option("--seed", seed, "the generator's seed")->capture_default_str();
  app.add_option("--arch", archs, "targets (repeatable)")->capture_default_str();
  app.add_option("--flags", flags, "nvcc flag sets (repeatable; one set may hold several flags)")->capture_default_str();
  std::string compiler = "auto";
  app.add_option("--compiler", compiler, "auto (NVRTC in this process, nvcc for what NVRTC cannot compile), nvrtc or nvcc")
      ->check(CLI::IsMember({"auto", "nvrtc", "nvcc"}))->capture_default_str();
  app.add_option("-o,--output", out, "pairs.jsonl (default: standard output)");
  if (int rc = parse_args(app, args); rc >= 0) return rc;
  std::vector<data::SourceUnit> units;
  for (auto& d : dirs) {
    auto u = data::read_source_folder(d);
    if (!u) return fail("pairs", u.error().message);
    units.insert(units.end(), u->begin(), u->end());
  }
  for (auto& k : data::generate_kernels(seed, generate)) units.push_back({"gen:" + k.name, "generator", k.family, k.source});
  if (units.empty() && libraries.empty()) return fail("pairs", "no sources: give folders of .cu files, --generate N or --library PATH");
  data::PairOptions po{archs, flags};
  po.compiler = compiler == "nvrtc" ? data::Compiler::nvrtc : compiler == "nvcc" ? data::Compiler::nvcc : data::Compiler::automatic;
  data::PairStats stats;
  Result<std::vector<data::Pair>> pairs = std::vector<data::Pair>{};
  if (!units.empty()) pairs = data::make_pairs(units, po, stats);
  if (!pairs) return fail("pairs", pairs.error().message);
  std::vector<std::string> lines;
  std::set<std::string> seen;
  for (auto& p : *pairs) {
    lines.push_back(data::pair_json(p));
    seen.insert(p.hash);
  }
  if (!libraries.empty()) {
    auto files = data::library_files(libraries);
    if (!files) return fail("pairs", files.error().message);
    data::LibraryStats ls;
    auto lib = data::library_pairs(*files, seen, ls);
    if (!lib) return fail("pairs", lib.error().message);
    for (auto& p : *lib) lines.push_back(data::pair_json(p));
    std::cerr << fmt::format("data pairs: {} library files searched, {} hold PTX: {} modules ({} do not assemble), "
                             "{} duplicates dropped\n",
                             ls.files, ls.files_with_ptx, ls.modules, ls.not_assembled, ls.duplicates);
    for (size_t i = 0; i < ls.problems.size() && i < 10; ++i) std::cerr << "  " << ls.problems[i] << "\n";
  }
  if (!units.empty())
    std::cerr << fmt::format("data pairs: {} sources, {} pairs ({} do not assemble), {} duplicates dropped, {} did not compile; "
                           "compiled by NVRTC {}, by nvcc {}\n",
                           units.size(), stats.compiled, stats.not_assembled, stats.duplicates, stats.nvcc_failed, stats.by_nvrtc,
                           stats.by_nvcc);
  for (size_t i = 0; i < stats.problems.size() && i < 10; ++i) std::cerr << "  " << stats.problems[i] << "\n";
  return write_lines(lines, out, "pairs");
}

int data_mutate(const std::vector<std::string>& args) {
  CLI::App app("Broken/fixed pairs: one-line defects of good modules, labelled by ptxas and our front end", "data mutate");
  std::string pairs, mix = "1:4", out;
  uint64_t seed = 1;
  app.add_option("pairs", pairs, "pairs.jsonl (data pairs): its modules that assemble are mutated")->required();
  app.add_option("--mix", mix, "broken:good examples")->capture_default_str();
  app.add_option("--seed", seed, "which mutants are kept and their order")->capture_default_str();
  app.add_option("-o,--output", out, "mutants.jsonl (default: standard output)");
  if (int rc = parse_args(app, args); rc >= 0) return rc;
  data::MutateOptions mo;
  mo.seed = seed;
  auto parts = split(mix, ':');
  char *e1 = nullptr, *e2 = nullptr;
  std::string a = parts.size() == 2 ? std::string(parts[0]) : "", b = parts.size() == 2 ? std::string(parts[1]) : "";
  mo.bad = static_cast<int>(std::strtol(a.c_str(), &e1, 10));
  mo.good = static_cast<int>(std::strtol(b.c_str(), &e2, 10));
  if (a.empty() || b.empty() || *e1 || *e2 || mo.bad < 1 || mo.good < 0) return fail("mutate", "--mix is broken:good, e.g. 1:4");
  auto goods = data::read_good_modules(pairs);
  if (!goods) return fail("mutate", goods.error().message);
  data::MutateStats st;
  auto lines = data::make_mutants(*goods, mo, st);
  if (!lines) return fail("mutate", lines.error().message);
  std::cerr << fmt::format("data mutate: {} good modules, {} mutants judged, {} defects kept ({} rejected by ptxas, {} by us, "
                           "{} verdicts agree), {} lines out\n",
                           st.goods, st.mutants, st.kept, st.ptxas_rejects, st.we_reject, st.agree, lines->size());
  return write_lines(*lines, out, "mutate");
}

int data_fixit(const std::vector<std::string>& args) {
  CLI::App app("Repair pairs from compile sessions: a failed round, its feedback, the round that fixed it", "data fixit");
  std::vector<std::string> roots;
  std::string out;
  app.add_option("sessions", roots, "session folders, or folders holding them (a bench folder)")->required();
  app.add_option("-o,--output", out, "fixit.jsonl (default: standard output)");
  if (int rc = parse_args(app, args); rc >= 0) return rc;
  data::FixitStats st;
  auto lines = data::make_fixit_pairs(roots, st);
  if (!lines) return fail("fixit", lines.error().message);
  for (auto& s : st.skipped) std::cerr << "data fixit: skipped " << s << "\n";
  std::cerr << fmt::format("data fixit: {} sessions, {} repair pairs\n", st.sessions, st.pairs);
  return write_lines(*lines, out, "fixit");
}

int data_export(const std::vector<std::string>& args) {
  CLI::App app("Chat-format JSONL with train/valid/test splits by source, and a dataset card", "data export");
  std::vector<std::string> inputs;
  std::string out;
  uint64_t seed = 1;
  app.add_option("inputs", inputs, "pairs, mutants and fixit JSONL files")->required();
  app.add_option("--out", out, "the dataset folder (train.jsonl, valid.jsonl, test.jsonl, card.md)")->required();
  app.add_option("--seed", seed, "the split's seed")->capture_default_str();
  if (int rc = parse_args(app, args); rc >= 0) return rc;
  auto st = data::export_chat(inputs, out, seed);
  if (!st) return fail("export", st.error().message);
  std::cout << fmt::format("{}: {} train, {} valid, {} test; card: {}/card.md\n", out, st->train, st->valid, st->test, out);
  return kExitOk;
}

}  // namespace

int cmd_data(const std::vector<std::string>& args) {
  std::vector<std::string> rest(args.empty() ? args.begin() : args.begin() + 1, args.end());
  std::string sub = args.empty() ? "" : args[0];
  if (sub == "isa") return data_isa(rest);
  if (sub == "pairs") return data_pairs(rest);
  if (sub == "mutate") return data_mutate(rest);
  if (sub == "fixit") return data_fixit(rest);
  if (sub == "export") return data_export(rest);
  if (sub == "-h" || sub == "--help") {
    std::cout << "ptxforge data isa | pairs | mutate | fixit | export  (ptxforge data <sub> --help)\n";
    return kExitOk;
  }
  std::cerr << "ptxforge data: " << (sub.empty() ? "give a subcommand" : "unknown subcommand '" + sub + "'")
            << "; the subcommands are: isa pairs mutate fixit export\n";
  return kExitUsage;
}

}  // namespace ptxforge::cli
