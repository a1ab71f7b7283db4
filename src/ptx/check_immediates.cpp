// Immediate operands that ptxas checks against the instruction's own limits (the existing
// immediate-range warning is about literals that do not fit their type; these are values
// that fit but that the instruction cannot take):
//   bar/barrier      barrier id 0..15; a thread count that is a multiple of the warp size,
//                    and not 0 for an arrive
//   cp.async         4, 8 or 16 bytes with .ca, 16 with .cg
//   setmaxnreg       an immediate from 24 to 256, a multiple of 8
//   wgmma.wait_group a count that is not negative
// Each limit is stated in the PTX ISA manual's section for the instruction and confirmed
// against ptxas 13.0 by rules_modifiers_test.cpp (ImmediateValues).
#include <charconv>
#include <optional>

#include <fmt/format.h>

#include "ptx/check_context.h"

namespace ptxforge::ptx {

namespace {

// The value of an integer literal operand (decimal, 0x hex, 0b binary, octal, a U suffix,
// a leading '-'), as ptxas reads it: 64-bit two's complement. nullopt for anything else.
std::optional<int64_t> literal_value(const Operand& o) {
  if (o.kind != Operand::Kind::expr) return std::nullopt;
  const Expr* e = &o.expr;
  bool negative = false;
  if (e->kind == Expr::Kind::unary && e->text == "-" && e->args.size() == 1) {
    negative = true;
    e = &e->args[0];
  }
  if (e->kind != Expr::Kind::integer) return std::nullopt;
  auto v = integer_literal_value(e->text);
  if (!v) return std::nullopt;
  return negative ? -static_cast<int64_t>(*v) : static_cast<int64_t>(*v);
}

Diagnostic& report_at(CheckContext& ctx, const Operand& o, std::string message) {
  auto& d = ctx.diags.error(o.loc, std::move(message), "immediate-value");
  d.length = 1;
  if (o.kind == Operand::Kind::expr) {
    const Expr& e = o.expr;
    d.length = static_cast<uint32_t>(e.text.size() + (e.kind == Expr::Kind::unary && !e.args.empty() ? e.args[0].text.size() : 0));
  }
  return d;
}

void check_barrier(CheckContext& ctx, const Instruction& ins, std::string_view fam) {
  if ((fam != "bar" && fam != "barrier") || ins.has_mod(".warp") || ins.has_mod(".cluster")) return;
  bool red = ins.has_mod(".red"), arrive = ins.has_mod(".arrive");
  size_t id_at = red ? 1 : 0;
  size_t count_at = red ? 2 : 1;
  size_t operands_with_count = red ? 4 : 2;
  if (ins.operands.size() <= id_at) return;
  const Operand& id = ins.operands[id_at];
  if (auto v = literal_value(id); v && (*v < 0 || *v > 15)) {
    auto& d = report_at(ctx, id, fmt::format("barrier id {} is out of range: there are 16 named barriers, 0 to 15", *v));
    d.hint = "use 0 for the barrier __syncthreads() uses, 1..15 for barriers of your own";
  }
  if (ins.operands.size() != operands_with_count) return;
  const Operand& count = ins.operands[count_at];
  auto v = literal_value(count);
  if (!v) return;
  uint32_t n = static_cast<uint32_t>(*v);
  if (n % 32 != 0) {
    auto& d = report_at(ctx, count, fmt::format("thread count {} is not a multiple of the warp size (32)", *v));
    d.hint = fmt::format("barriers count whole warps: use {} (or leave the count out for all threads of the CTA)",
                         (n / 32 + 1) * 32);
  } else if (n == 0 && arrive) {
    auto& d = report_at(ctx, count, fmt::format("'{}' needs a non-zero thread count", ins.full_opcode()));
    d.hint = "give the number of threads that arrive plus those that wait, a multiple of 32";
  }
}

void check_cp_async_size(CheckContext& ctx, const Instruction& ins, std::string_view fam) {
  if (fam != "cp.async" || ins.operands.size() < 3) return;
  bool cg = ins.has_mod(".cg"), ca = ins.has_mod(".ca");
  if (!cg && !ca) return;
  auto v = literal_value(ins.operands[2]);
  if (!v) return;
  if (cg && *v != 16) {
    auto& d = report_at(ctx, ins.operands[2], fmt::format("cp.async.cg copies 16 bytes, not {}", *v));
    d.hint = "use 16, or cp.async.ca for 4 or 8 bytes";
  } else if (ca && *v != 4 && *v != 8 && *v != 16) {
    auto& d = report_at(ctx, ins.operands[2], fmt::format("cp.async.ca copies 4, 8 or 16 bytes, not {}", *v));
    d.hint = *v > 16 ? "issue several cp.async of 16 bytes" : "use 4, 8 or 16";
  }
}

void check_setmaxnreg(CheckContext& ctx, const Instruction& ins, std::string_view fam) {
  if (fam != "setmaxnreg" || ins.operands.empty()) return;
  const Operand& o = ins.operands[0];
  auto v = literal_value(o);
  if (!v) {
    if (o.kind == Operand::Kind::expr && o.expr.kind == Expr::Kind::name) {
      auto& d = ctx.diags.error(o.loc, "setmaxnreg takes the register count as an immediate, not a register",
                                "operand-kind");
      d.length = static_cast<uint32_t>(o.expr.text.size());
      d.hint = "write the count as a constant, e.g. setmaxnreg.inc.sync.aligned.u32 232;";
    }
    return;
  }
  if (*v < 24 || *v > 256) {
    auto& d = report_at(ctx, o, fmt::format("setmaxnreg count {} is out of range: 24 to 256", *v));
    d.hint = "a warpgroup can hold 24 to 256 registers per thread";
  } else if (*v % 8 != 0) {
    auto& d = report_at(ctx, o, fmt::format("setmaxnreg count {} is not a multiple of 8", *v));
    d.hint = fmt::format("use {} or {}", *v / 8 * 8, (*v / 8 + 1) * 8);
  }
}

void check_wait_group(CheckContext& ctx, const Instruction& ins, std::string_view fam) {
  if (fam != "wgmma.wait_group" || ins.operands.empty()) return;
  if (auto v = literal_value(ins.operands[0]); v && *v < 0) {
    auto& d = report_at(ctx, ins.operands[0], fmt::format("wgmma.wait_group count {} is negative", *v));
    d.hint = "0 waits for every committed group; N leaves at most N groups pending";
  }
}

}  // namespace

void check_immediate_values(CheckContext& ctx, const Instruction& ins, const Resolved& r) {
  std::string_view fam = r.family->name;
  check_barrier(ctx, ins, fam);
  check_cp_async_size(ctx, ins, fam);
  check_setmaxnreg(ctx, ins, fam);
  check_wait_group(ctx, ins, fam);
}

}  // namespace ptxforge::ptx
