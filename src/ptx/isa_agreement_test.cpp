// The ISA table against ptxas: every row's example must assemble at the row's minimum
// .version and .target, and fail one version below and on the next lower target — and our
// validator must say the same thing in each case.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "ptx/front_end.h"
#include "ptx/isa.h"
#include "toolchain/ptxas.h"
#include "util/paths.h"

namespace ptxforge::ptx {
namespace {

struct Row {
  std::string what, example;
  PtxVersion ptx;
  Target target;
  std::string targets;  // the row's min_target as written: "sm_90|sm_89@8.1"
};

std::vector<Row> rows() {
  std::vector<Row> out;
  for (auto& f : isa_families())
    if (!f.example.empty()) out.push_back({std::string(f.name), std::string(f.example), f.min_ptx, parse_target_list(f.min_target).front(),
                                                   std::string(f.min_target)});
  for (auto& o : isa_overrides())
    if (!o.example.empty())
      out.push_back({std::string(o.family) + std::string(o.modifier), std::string(o.example), o.min_ptx,
                     parse_target_list(o.min_target).front(), std::string(o.min_target)});
  return out;
}

std::string module_for(const Row& r, PtxVersion v, const Target& t) {
  std::string regs = ".reg .b32 %r<20>;\n.reg .b64 %rd<20>;\n.reg .b16 %h<20>;\n.reg .f32 %f<20>;\n"
                     ".reg .f64 %fd<20>;\n.reg .pred %p<8>;\n.reg .b8 %c<4>;\n";
  if (v >= PtxVersion{8, 3}) regs += ".reg .b128 %q<4>;\n";
  return fmt::format(".version {}\n.target {}\n.address_size 64\n.shared .align 16 .b8 smem[4096];\n"
                     ".visible .entry k()\n{{\n{}{}\nL_end:\nret;\n}}\n",
                     v.str(), t.str(), regs, r.example);
}

std::optional<PtxVersion> previous(PtxVersion v) {
  std::optional<PtxVersion> prev;
  for (auto& k : known_versions()) {
    if (!(k < v)) break;
    prev = k;
  }
  return prev;
}

// The next lower target that still exists in CUDA 13's ptxas (sm_75 and later), or nullopt.
std::optional<Target> lower_target(const Target& t) {
  if (t.suffix == 'a' || t.suffix == 'f') return Target{t.sm, 0};
  std::optional<Target> best;
  for (auto& k : known_targets())
    if (!k.suffix && k.sm < t.sm && k.sm >= 75 && k.sm != 88 && (!best || k.sm > best->sm)) best = k;
  return best;
}

bool ours_has(const std::string& text, const std::string& id) {
  auto r = check_source(text, ValidateOptions{false});
  for (auto& d : r.diags.list())
    if (d.check_id == id) return true;
  return false;
}

TEST(IsaAgreement, EveryExampleAgreesWithPtxas) {
  if (!find_cuda_tool("ptxas")) GTEST_SKIP() << "ptxas not installed";
  int checked = 0;
  std::vector<std::string> disagreements;
  for (const Row& r : rows()) {
    Target t = r.target;
    if (!t.suffix && t.sm < 75) t.sm = 75;
    PtxVersion v = std::max(r.ptx, *min_version_for(t));
    toolchain::AssembleOptions opts;
    opts.arch = t.suffix ? t.str() : "sm_" + std::to_string(std::max(t.sm, 75)) + (t.sm == 90 ? "a" : "");
    auto run = [&](PtxVersion ver, Target tg, const std::string& arch) {
      toolchain::AssembleOptions o = opts;
      o.arch = arch;
      std::string text = module_for(r, ver, tg);
      auto a = toolchain::assemble_with_ptxas(text, o);
      return std::pair(a && a->ok, text);
    };
    auto [ok, text] = run(v, t, opts.arch);
    ++checked;
    if (!ok) {
      disagreements.push_back(fmt::format("{}: ptxas rejects the example at .version {} .target {}", r.what, v.str(), t.str()));
      continue;
    }
    auto ours = check_source(text, ValidateOptions{false});
    if (ours.diags.has_errors())
      disagreements.push_back(fmt::format("{}: ptxas accepts but we report: {}", r.what, ours.diags.list()[0].message));
    if (r.ptx > *min_version_for(t)) {
      if (auto pv = previous(r.ptx)) {
        auto [ok_low, low_text] = run(*pv, t, opts.arch);
        if (ok_low) disagreements.push_back(fmt::format("{}: ptxas accepts .version {}, table says {}", r.what, pv->str(), r.ptx.str()));
        else if (!ours_has(low_text, "needs-version"))
          disagreements.push_back(fmt::format("{}: ptxas rejects .version {} but we do not say needs-version", r.what, pv->str()));
      }
    }
    if (r.target.sm >= 75 || r.target.suffix) {
      if (auto lt = lower_target(r.target)) {
        PtxVersion lv = std::max(v, *min_version_for(*lt));
        auto [ok_low, low_text] = run(lv, *lt, lt->str());
        // A lower target that is an alternative of its own, at a later version: below that
        // version the reason is the version.
        auto alts = parse_target_list(r.targets);
        auto alt_versions = parse_target_versions(r.targets);
        std::string want = "needs-target";
        for (size_t i = 0; i < alts.size(); ++i)
          if (alts[i] == *lt && alt_versions[i] && lv < *alt_versions[i]) want = "needs-version";
        if (ok_low) disagreements.push_back(fmt::format("{}: ptxas accepts .target {}, table says {}", r.what, lt->str(), r.target.str()));
        else if (!ours_has(low_text, want))
          disagreements.push_back(fmt::format("{}: ptxas rejects .target {} but we do not say {}", r.what, lt->str(), want));
      }
    }
  }
  // Alternatives with a version of their own ("sm_89@8.1"): both accept at that version and
  // reject one version below.
  for (const Row& r : rows()) {
    auto alts = parse_target_list(r.targets);
    auto alt_versions = parse_target_versions(r.targets);
    for (size_t i = 0; i < alts.size(); ++i) {
      if (!alt_versions[i]) continue;
      Target t = alts[i];
      auto at = [&](PtxVersion v) {
        std::string text = module_for(r, v, t);
        toolchain::AssembleOptions o;
        o.arch = t.str();
        auto a = toolchain::assemble(text, o);
        return std::pair{a.ok() && a->ok, text};
      };
      ++checked;
      auto [ok, text] = at(*alt_versions[i]);
      if (!ok) disagreements.push_back(fmt::format("{}: ptxas rejects .target {} at .version {}", r.what, t.str(), alt_versions[i]->str()));
      if (check_source(text, ValidateOptions{false}).diags.has_errors())
        disagreements.push_back(fmt::format("{}: we reject .target {} at .version {}", r.what, t.str(), alt_versions[i]->str()));
      if (auto pv = previous(*alt_versions[i])) {
        auto [ok_low, low_text] = at(*pv);
        if (ok_low) disagreements.push_back(fmt::format("{}: ptxas accepts .target {} at .version {}", r.what, t.str(), pv->str()));
        else if (!ours_has(low_text, "needs-version"))
          disagreements.push_back(fmt::format("{}: ptxas rejects .target {} at .version {} but we do not say needs-version",
                                              r.what, t.str(), pv->str()));
      }
    }
  }
  for (auto& d : disagreements) ADD_FAILURE() << d;
  EXPECT_GT(checked, 100);
  std::printf("isa agreement: %d rows checked against ptxas, %zu disagreements\n", checked, disagreements.size());
}

}  // namespace
}  // namespace ptxforge::ptx
