// The prove stage: a task's required instruction families must be in the candidate's PTX and
// in the SASS ptxas made of it. Text alone proves little: a `wgmma` behind a branch that can
// never be taken is in the PTX, but ptxas drops it, and the listing then lacks HGMMA. Where no
// disassembler is installed the stage says "SASS proof unavailable" in its verdict.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "eval/stages.h"
#include "ptx/parser.h"
#include "toolchain/sass.h"
#include "util/text.h"

namespace ptxforge::eval {

std::vector<InstructionProof> prove_in_ptx(const std::string& ptx, const std::vector<std::string>& families) {
  std::vector<InstructionProof> out;
  for (auto& f : families) out.push_back({f, false, 0, std::nullopt, std::nullopt, {}, 0});
  if (families.empty()) return out;
  Diagnostics diags;
  ptx::Module m = ptx::parse(ptx, diags);
  for (auto& item : m.items) {
    auto* fn = std::get_if<ptx::Function>(&item.node);
    if (!fn || !fn->body) continue;
    ptx::for_each_statement(*fn->body, [&](const ptx::Statement& s) {
      auto* ins = std::get_if<ptx::Instruction>(&s.node);
      if (!ins) return;
      std::string full = ins->full_opcode();
      for (auto& p : out) {
        bool match = starts_with(full, p.family) && (full.size() == p.family.size() || full[p.family.size()] == '.');
        if (match) {
          p.in_ptx = true;
          ++p.ptx_count;
        }
      }
    });
  }
  return out;
}

void prove_in_sass(const toolchain::SassListing& listing, std::vector<InstructionProof>& proofs) {
  for (auto& p : proofs) {
    auto opcodes = toolchain::sass_for_family(p.family);
    if (!opcodes) continue;  // no row: in_sass stays unset
    p.sass_opcodes.assign(opcodes->begin(), opcodes->end());
    p.sass_count = 0;
    for (auto op : *opcodes) p.sass_count += listing.count(op);
    p.in_sass = p.sass_count > 0;
  }
}

namespace {

StageResult verdict(StageStatus s, std::string summary) {
  StageResult r;
  r.id = StageId::prove;
  r.status = s;
  r.summary = std::move(summary);
  return r;
}

}  // namespace

StageResult prove(StageContext& ctx) {
  RunRecord& r = ctx.record;
  const auto& families = ctx.task.required_instructions;
  r.proofs = prove_in_ptx(ctx.candidate.ptx, families);
  if (families.empty()) return verdict(StageStatus::passed, "no required instructions");
  std::vector<std::string> missing;
  for (auto& p : r.proofs)
    if (!p.in_ptx) missing.push_back(p.family);
  if (!missing.empty()) return verdict(StageStatus::failed, fmt::format("missing from the PTX: {}", fmt::join(missing, ", ")));

  auto cubin = read_file(ctx.candidate.cubin_path);
  Result<toolchain::SassListing> listing = cubin ? toolchain::disassemble(*cubin) : Result<toolchain::SassListing>(cubin.error());
  if (!listing) {
    r.sass_note = "SASS proof unavailable: " + listing.error().message;
    return verdict(StageStatus::passed, fmt::format("all {} required instruction families occur in the PTX; {}",
                                                    r.proofs.size(), r.sass_note));
  }
  r.sass_note = listing->tool;
  prove_in_sass(*listing, r.proofs);
  std::vector<std::string> dropped, unmapped;
  for (auto& p : r.proofs) {
    if (!p.in_sass) unmapped.push_back(p.family);
    else if (!*p.in_sass)
      dropped.push_back(fmt::format("{} (none of {})", p.family, fmt::join(p.sass_opcodes, ", ")));
  }
  if (!dropped.empty())
    return verdict(StageStatus::failed,
                   fmt::format("in the PTX but not in the SASS ptxas emitted: {}; ptxas removes code that can never run "
                               "or whose results are never used",
                               fmt::join(dropped, "; ")));
  std::string summary = fmt::format("all {} required instruction families occur in the PTX and the SASS ({})",
                                    r.proofs.size(), listing->tool);
  if (!unmapped.empty())
    summary = fmt::format("all {} required instruction families occur in the PTX; in the SASS ({}) too, but for {}, "
                          "which no SASS opcode identifies",
                          r.proofs.size(), listing->tool, fmt::join(unmapped, ", "));
  return verdict(StageStatus::passed, summary);
}

}  // namespace ptxforge::eval
