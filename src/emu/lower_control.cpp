// Lowering of control flow, synchronisation, warp collectives and atomics: branch targets to
// instruction indices, calls to callee indices with their argument and return operands,
// barrier ids and counts, collective masks and modes.
#include <fmt/format.h>

#include "emu/lower_internal.h"

namespace ptxforge::emu::detail {

namespace {

bool has(const ptx::Instruction& ins, std::string_view m) { return ins.has_mod(m); }

// Every modifier of `ins` is in `allowed` (or is a type, or a harmless scope/semantics word).
bool only(const ptx::Instruction& ins, std::initializer_list<std::string_view> allowed) {
  static const std::string_view harmless[] = {".uni", ".cta", ".gpu", ".sys", ".relaxed", ".acquire", ".release",
                                              ".acq_rel", ".sem", ".aligned", ".sync", ".noftz"};
  for (auto m : ins.mods) {
    bool ok = dt_from_text(m) != DT::none;
    for (auto a : allowed) ok = ok || m == a;
    for (auto h : harmless) ok = ok || m == h;
    if (m.starts_with(".L2::")) ok = true;
    if (!ok) return false;
  }
  return true;
}

DT first_type(const ptx::Instruction& ins) {
  for (auto m : ins.mods)
    if (DT t = dt_from_text(m); t != DT::none) return t;
  return DT::none;
}

}  // namespace

bool lower_control(FnLowerer& fl, const ptx::Instruction& ins, Inst& out, bool* handled) {
  std::string_view op = ins.opcode;
  auto& ops = ins.operands;
  *handled = true;
  auto unsupported = [&] { return fl.unsupported(ins); };
  // A destination written `%a|%p` (shfl, match, elect: a value and a predicate) goes to o[0] and
  // o[5]; a lone one is the value (o[0]), or for elect the predicate (o[5]).
  auto dest_pair = [&](const ptx::Operand& d, bool lone_is_second) {
    if (d.kind == ptx::Operand::Kind::expr && d.expr.kind == ptx::Expr::Kind::binary && d.expr.text == "|") {
      ptx::Operand a = d, b = d;
      a.expr = d.expr.args[0];
      b.expr = d.expr.args[1];
      return fl.dest(a, out.o[0], ins) && fl.dest(b, out.o[5], ins);
    }
    return fl.dest(d, lone_is_second ? out.o[5] : out.o[0], ins);
  };
  if (op == "bra") {
    if (!only(ins, {}) || ops.size() != 1 || ops[0].kind != ptx::Operand::Kind::expr) return unsupported();
    auto t = fl.label(ops[0].expr.text);
    if (!t) return fl.fail(ins, fmt::format("branch target '{}' is not a label", ops[0].expr.text));
    out.op = Op::bra;
    out.target = *t;
    return true;
  }
  if (op == "ret" || op == "exit" || op == "trap" || op == "brkpt") {
    if (!only(ins, {})) return unsupported();
    out.op = op == "ret" ? Op::ret : op == "exit" ? Op::exit : Op::trap;
    return true;
  }
  if (op == "call") {
    if (!only(ins, {})) return unsupported();
    // call (rets), f, (args) [, prototype]; each list optional.
    size_t i = 0;
    std::vector<const ptx::Operand*> rets, args;
    if (i < ops.size() && ops[i].kind == ptx::Operand::Kind::list) {
      for (auto& e : ops[i].elems) rets.push_back(&e);
      ++i;
    }
    if (i >= ops.size() || ops[i].kind != ptx::Operand::Kind::expr) return unsupported();
    const ptx::Operand& callee = ops[i++];
    if (i < ops.size() && ops[i].kind == ptx::Operand::Kind::list) {
      for (auto& e : ops[i].elems) args.push_back(&e);
      ++i;
    }
    out.op = Op::call;
    const Sym* s = fl.lookup(callee.expr.text);
    if (s && s->kind == Sym::Kind::func) {
      const Function& f = fl.module().program().fns.size() > s->index ? fl.module().program().fns[s->index]
                                                                       : fl.fn();
      (void)f;
      out.target = s->index;
      out.flag = false;
    } else if (s && s->kind == Sym::Kind::reg) {
      out.flag = true;  // through a register holding a function address
      out.addr_base.kind = OpndKind::reg;
      out.addr_base.idx = s->index;
    } else {
      return fl.fail(ins, fmt::format("not supported by the CPU engine: call of '{}'", callee.expr.text));
    }
    if (rets.size() + args.size() > out.o.size())
      return fl.fail(ins, "not supported by the CPU engine: a call with more than 8 arguments and returns");
    out.nrets = static_cast<uint32_t>(rets.size());
    out.nargs = static_cast<uint32_t>(args.size());
    size_t k = 0;
    for (auto* r : rets)
      if (!fl.value(*r, DT::b64, out.o[k++], ins)) return false;
    for (auto* a : args)
      if (!fl.value(*a, DT::b64, out.o[k++], ins)) return false;
    out.n = static_cast<uint8_t>(k);
    return true;
  }
  if (op == "bar" || op == "barrier") {
    bool warp = ins.mods.size() >= 2 && ins.mods[0] == ".warp" && ins.mods[1] == ".sync";
    if (warp) {
      if (ins.mods.size() != 2 || ops.size() != 1) return unsupported();
      out.op = Op::bar_warp_sync;
      out.n = 1;
      return fl.value(ops[0], DT::u32, out.o[0], ins);
    }
    if (!only(ins, {".arrive", ".red", ".popc", ".and", ".or"})) return unsupported();
    // bar.sync / bar.arrive / bar.red are the .aligned forms; barrier.* are aligned only with .aligned.
    out.flag = op == "bar" || has(ins, ".aligned");
    if (has(ins, ".red")) {
      out.op = Op::bar_red;
      out.sub = static_cast<uint8_t>(has(ins, ".popc") ? BarRed::popc : has(ins, ".and") ? BarRed::and_ : BarRed::or_);
      out.type = has(ins, ".popc") ? DT::u32 : DT::pred;
      // d, a{, b}, {!}c
      if (ops.size() != 3 && ops.size() != 4) return unsupported();
      if (!fl.dest(ops[0], out.o[0], ins) || !fl.value(ops[1], DT::u32, out.o[1], ins)) return false;
      if (ops.size() == 4 && !fl.value(ops[2], DT::u32, out.o[2], ins)) return false;
      if (!fl.pred_operand(ops.back(), out.o[3], ins)) return false;
      out.n = 4;
      return true;
    }
    out.op = has(ins, ".arrive") ? Op::bar_arrive : Op::bar_sync;
    if (ops.empty() || ops.size() > 2) return unsupported();
    if (!fl.value(ops[0], DT::u32, out.o[0], ins)) return false;
    if (ops.size() == 2 && !fl.value(ops[1], DT::u32, out.o[1], ins)) return false;
    out.n = static_cast<uint8_t>(ops.size());
    return true;
  }
  if (op == "activemask") {
    out.op = Op::activemask;
    out.n = 1;
    return ops.size() == 1 && fl.dest(ops[0], out.o[0], ins);
  }
  if (op == "shfl") {
    if (!has(ins, ".sync")) return unsupported();
    out.op = Op::shfl;
    out.sub = static_cast<uint8_t>(has(ins, ".up") ? ShflMode::up : has(ins, ".down") ? ShflMode::down
                                   : has(ins, ".bfly") ? ShflMode::bfly : ShflMode::idx);
    if (!only(ins, {".up", ".down", ".bfly", ".idx"})) return unsupported();
    // d[|p], a, b, c, membermask
    if (ops.size() != 5) return unsupported();
    if (!dest_pair(ops[0], /*lone_is_second=*/false)) return false;
    for (int k = 1; k < 5; ++k)
      if (!fl.value(ops[k], DT::b32, out.o[k], ins)) return false;
    out.n = 5;
    return true;
  }
  if (op == "vote") {
    if (!has(ins, ".sync")) return unsupported();
    out.op = Op::vote;
    out.sub = static_cast<uint8_t>(has(ins, ".all") ? VoteMode::all : has(ins, ".any") ? VoteMode::any
                                   : has(ins, ".uni") ? VoteMode::uni : VoteMode::ballot);
    if (!only(ins, {".all", ".any", ".ballot"}) || ops.size() != 3) return unsupported();
    if (!fl.dest(ops[0], out.o[0], ins) || !fl.pred_operand(ops[1], out.o[1], ins) ||
        !fl.value(ops[2], DT::b32, out.o[2], ins))
      return false;
    out.n = 3;
    return true;
  }
  if (op == "redux") {
    if (!has(ins, ".sync")) return unsupported();
    out.op = Op::redux;
    out.type = first_type(ins);
    if (dt_float(out.type) || out.type == DT::none) return unsupported();
    out.sub = static_cast<uint8_t>(has(ins, ".add") ? ReduxOp::add : has(ins, ".min") ? ReduxOp::min
                                   : has(ins, ".max") ? ReduxOp::max : has(ins, ".and") ? ReduxOp::and_
                                   : has(ins, ".or") ? ReduxOp::or_ : ReduxOp::xor_);
    if (!only(ins, {".add", ".min", ".max", ".and", ".or", ".xor"}) || ops.size() != 3) return unsupported();
    if (!fl.dest(ops[0], out.o[0], ins) || !fl.value(ops[1], out.type, out.o[1], ins) ||
        !fl.value(ops[2], DT::b32, out.o[2], ins))
      return false;
    out.n = 3;
    return true;
  }
  if (op == "elect") {
    out.op = Op::elect;
    if (!only(ins, {}) || ops.size() != 2) return unsupported();
    if (!dest_pair(ops[0], /*lone_is_second=*/true)) return false;
    out.n = 2;
    return fl.value(ops[1], DT::b32, out.o[1], ins);
  }
  if (op == "match") {
    out.op = Op::match;
    out.type = first_type(ins);
    out.sub = has(ins, ".all") ? 1 : 0;
    if (!only(ins, {".any", ".all"}) || ops.size() != 3 || out.type == DT::none) return unsupported();
    if (!dest_pair(ops[0], /*lone_is_second=*/false)) return false;
    out.n = 3;
    return fl.value(ops[1], out.type, out.o[1], ins) && fl.value(ops[2], DT::b32, out.o[2], ins);
  }
  if (op == "atom" || op == "red") {
    bool red = op == "red";
    out.op = red ? Op::red : Op::atom;
    memory_model_of(ins, out, MemOrder::relaxed);
    out.space = has(ins, ".global") ? Space::global : has(ins, ".shared") || has(ins, ".shared::cta") ? Space::shared
                                                                                                     : Space::generic;
    static const std::pair<std::string_view, AtomOp> kinds[] = {
        {".add", AtomOp::add}, {".min", AtomOp::min}, {".max", AtomOp::max}, {".inc", AtomOp::inc},
        {".dec", AtomOp::dec}, {".and", AtomOp::and_}, {".or", AtomOp::or_}, {".xor", AtomOp::xor_},
        {".exch", AtomOp::exch}, {".cas", AtomOp::cas}};
    bool found = false;
    for (auto& [w, k] : kinds)
      if (has(ins, w)) out.sub = static_cast<uint8_t>(k), found = true;
    out.type = first_type(ins);
    if (!found || out.type == DT::none || dt_bits(out.type) > 64 || out.type == DT::f16 || out.type == DT::bf16 ||
        !only(ins, {".global", ".shared", ".shared::cta", ".add", ".min", ".max", ".inc", ".dec", ".and", ".or",
                    ".xor", ".exch", ".cas"}))
      return unsupported();
    if (out.type == DT::f32 || out.type == DT::f64) {
      if (out.sub != static_cast<uint8_t>(AtomOp::add) && out.sub != static_cast<uint8_t>(AtomOp::exch)) return unsupported();
    }
    size_t i = 0;
    if (!red) {
      if (!fl.dest(ops[0], out.o[0], ins)) return false;
      i = 1;
    } else {
      out.o[0].kind = OpndKind::sink;
    }
    size_t nsrc = out.sub == static_cast<uint8_t>(AtomOp::cas) ? 2 : 1;
    if (ops.size() != i + 1 + nsrc) return unsupported();
    if (!fl.address(ops[i], out.space, out, ins)) return false;
    for (size_t k = 0; k < nsrc; ++k)
      if (!fl.value(ops[i + 1 + k], out.type, out.o[1 + k], ins)) return false;
    out.n = static_cast<uint8_t>(1 + nsrc);
    return true;
  }
  *handled = false;
  return true;
}

}  // namespace ptxforge::emu::detail
