#include "data/dataset.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "data/mutate.h"
#include "ptx/front_end.h"
#include "ptx/isa.h"
#include "toolchain/ptxas.h"
#include "util/text.h"

namespace ptxforge::data {

using ojson = nlohmann::ordered_json;

namespace {

uint64_t splitmix(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

template <typename T>
void shuffle(std::vector<T>& v, uint64_t seed) {
  uint64_t state = seed;
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[splitmix(state) % i]);
}

std::string dump(const ojson& j) { return j.dump(-1, ' ', false, ojson::error_handler_t::replace); }

std::vector<std::string> split_words(std::string_view s) {
  std::vector<std::string> out;
  for (auto w : split(s, ' '))
    if (!trim(w).empty()) out.emplace_back(trim(w));
  return out;
}

// Mutants kept per good module: enough variety without thousands of ptxas runs per module.
constexpr size_t kMutantsPerModule = 6;

}  // namespace

Result<std::vector<GoodModule>> read_good_modules(const std::string& pairs_jsonl) {
  auto text = read_file(pairs_jsonl);
  if (!text) return Error{fmt::format("cannot read {}: {}", pairs_jsonl, text.error().message)};
  std::vector<GoodModule> out;
  int line_no = 0;
  for (std::string_view line : split(*text, '\n')) {
    ++line_no;
    if (trim(line).empty()) continue;
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return Error{fmt::format("{}:{}: not a JSON object", pairs_jsonl, line_no)};
    if (j.value("kind", "") != "pair" || !j.value("assembles", false)) continue;
    out.push_back({j.value("source_id", ""), j.value("arch", "sm_90a"), j.value("flags", ""), j.value("ptx", "")});
  }
  return out;
}

Result<std::vector<std::string>> make_mutants(const std::vector<GoodModule>& goods, const MutateOptions& o, MutateStats& stats) {
  if (o.bad < 1 || o.good < 0) return Error{"the mix is bad:good with bad >= 1 and good >= 0 (e.g. 1:4)"};
  std::vector<std::string> bad_lines, good_lines;
  for (size_t gi = 0; gi < goods.size(); ++gi) {
    const GoodModule& g = goods[gi];
    ++stats.goods;
    good_lines.push_back(dump(ojson{{"kind", "good"}, {"source_id", g.source_id}, {"arch", g.arch}, {"flags", g.flags}, {"ptx", g.ptx}}));
    std::vector<Mutant> ms;
    for (auto& m : mutants_of(g.ptx))
      if (m.single_edit) ms.push_back(std::move(m));
    shuffle(ms, o.seed ^ (gi * 0x9e3779b97f4a7c15ull));
    if (ms.size() > kMutantsPerModule) ms.resize(kMutantsPerModule);
    for (auto& m : ms) {
      ++stats.mutants;
      toolchain::AssembleOptions ao;
      ao.arch = g.arch;
      ao.source_name = "kernel.ptx";
      if (g.flags.find("-G") != std::string::npos) ao.opt_level = 0;
      auto theirs = toolchain::assemble_with_ptxas(m.text, ao);
      if (!theirs) return theirs.error();
      auto ours = ptx::check_source(m.text);
      bool they_reject = !theirs->ok, we_reject = ours.diags.has_errors();
      if (!they_reject && !we_reject) continue;  // not a defect after all
      ++stats.kept;
      stats.ptxas_rejects += they_reject;
      stats.we_reject += we_reject;
      stats.agree += they_reject == we_reject;
      ojson errors = ojson::array();
      const Diagnostic* first = nullptr;
      for (auto& d : ours.diags.list())
        if (d.severity == Severity::error) {
          if (!first) first = &d;
          errors.push_back({{"check", d.check_id}, {"line", d.loc.line}, {"message", d.message}});
        }
      std::string ptxas_error = they_reject && !theirs->diags.list().empty() ? theirs->diags.list()[0].message : "";
      std::string why = first ? fmt::format("Line {}: {}.", first->loc.line, first->message)
                              : fmt::format("ptxas: {}.", ptxas_error.empty() ? "the module does not assemble" : ptxas_error);
      if (first && !first->hint.empty()) why += " " + first->hint + ".";
      std::string fix = trim(m.original_line).empty() ? fmt::format("Line {} must go.", m.line)
                                                      : fmt::format("Line {} should read `{}`.", m.line, trim(m.original_line));
      bad_lines.push_back(dump(ojson{{"kind", "mutant"}, {"source_id", g.source_id}, {"arch", g.arch}, {"flags", g.flags},
                                     {"defect", m.kind}, {"line", m.line}, {"original_line", m.original_line},
                                     {"mutated_line", m.mutated_line}, {"ptxas_ok", !they_reject}, {"ptxas_error", ptxas_error},
                                     {"our_errors", errors}, {"agree", they_reject == we_reject},
                                     {"explanation", why + " " + fix}, {"ptx", m.text}, {"fixed", g.ptx}}));
    }
  }
  // The mix: every good module, and at most bad/good of that many mutants.
  shuffle(bad_lines, o.seed + 1);
  size_t n_bad = std::min(bad_lines.size(), good_lines.size() * static_cast<size_t>(o.bad) / std::max(1, o.good));
  if (o.good == 0) n_bad = bad_lines.size();
  bad_lines.resize(n_bad);
  std::vector<std::string> out = good_lines;
  out.insert(out.end(), bad_lines.begin(), bad_lines.end());
  shuffle(out, o.seed + 2);
  return out;
}

std::vector<std::string> isa_dictionary() {
  std::vector<std::string> out;
  for (auto& f : ptx::isa_families()) {
    ojson j = {{"family", f.name},
               {"manual", ptx::manual_link(f.anchor)},
               {"types", split_words(f.types)},
               {"modifiers", f.modifiers == "*" ? std::vector<std::string>{"*"} : split_words(f.modifiers)},
               {"operand_forms", f.operands == "*" ? std::vector<std::string>{} : [&] {
                  std::vector<std::string> forms;
                  for (auto form : split(f.operands, '|')) forms.emplace_back(form);
                  return forms;
                }()},
               {"min_ptx", f.min_ptx.str()},
               {"min_target", f.min_target},
               {"example", f.example},
               {"detailed", f.detailed}};
    ojson later = ojson::array();
    for (auto& o : ptx::isa_overrides())
      if (o.family == f.name)
        later.push_back({{"modifier", o.modifier}, {"min_ptx", o.min_ptx.str()}, {"min_target", o.min_target}, {"example", o.example}});
    if (!later.empty()) j["later_additions"] = later;
    out.push_back(dump(j));
  }
  return out;
}

}  // namespace ptxforge::data
