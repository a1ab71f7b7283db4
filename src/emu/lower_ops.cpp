// Lowering one instruction: its opcode and modifiers become an Op with types and modes, its
// operands slots, immediates and addresses. Every modifier must be understood: one that is
// not (a form this engine does not execute) makes the instruction unsupported rather than
// silently run as something else.
#include <fmt/format.h>

#include "emu/lower_internal.h"

namespace ptxforge::emu::detail {

void memory_model_of(const ptx::Instruction& ins, Inst& out, MemOrder strong_default) {
  MemOrder sem = strong_default;
  MemScope scope = MemScope::none;
  bool is_fence = ins.opcode == "membar" || ins.opcode == "fence";
  for (std::string_view w : ins.mods) {
    if (w == ".weak") sem = MemOrder::weak;
    else if (w == ".relaxed") sem = MemOrder::relaxed;
    else if (w == ".acquire") sem = MemOrder::acquire;
    else if (w == ".release") sem = MemOrder::release;
    else if (w == ".acq_rel") sem = MemOrder::acq_rel;
    else if (w == ".sc") sem = MemOrder::sc;
    // .volatile and .mmio are relaxed at system scope (PTX ISA, "Volatile operations").
    else if (w == ".volatile" || w == ".mmio") sem = MemOrder::relaxed, scope = MemScope::sys;
    else if (w == ".cta") scope = MemScope::cta;
    else if (w == ".cluster") scope = MemScope::cluster;
    else if (w == ".gpu" || (is_fence && w == ".gl")) scope = MemScope::gpu;
    else if (w == ".sys") scope = MemScope::sys;
  }
  // A strong operation without a written scope: atom/red default to .gpu (PTX ISA, atom).
  if (sem != MemOrder::weak && scope == MemScope::none) scope = MemScope::gpu;
  if (sem == MemOrder::weak) scope = MemScope::none;
  out.sem = sem;
  out.scope = scope;
}

namespace {

// The modifiers of one instruction, each to be consumed by the lowering that understands it.
class Mods {
 public:
  explicit Mods(const ptx::Instruction& ins) {
    for (auto m : ins.mods) {
      words_.push_back(m);
      DT t = dt_from_text(m);
      used_.push_back(false);
      if (t != DT::none) types_.push_back({t, words_.size() - 1});
    }
    // Hints and memory-model qualifiers: no effect on values in a sequentially consistent
    // interpreter (section 3: fences and orders matter only to the race detector).
    for (size_t i = 0; i < words_.size(); ++i) {
      std::string_view w = words_[i];
      static const std::string_view harmless[] = {".ca", ".cg", ".cs", ".lu", ".cv", ".wb", ".wt", ".volatile",
                                                  ".relaxed", ".acquire", ".release", ".weak", ".cta", ".gpu",
                                                  ".sys", ".unified", ".uni", ".sem", ".acq_rel", ".sc", ".mmio"};
      for (auto h : harmless)
        if (w == h) used_[i] = true;
      if (w.starts_with(".L1::") || w.starts_with(".L2::") || w.starts_with(".level::")) used_[i] = true;
    }
  }
  bool has(std::string_view m) {
    for (size_t i = 0; i < words_.size(); ++i)
      if (words_[i] == m) return used_[i] = true;
    return false;
  }
  // The i-th type modifier (consumed), DT::none when absent.
  DT type(size_t i = 0) {
    if (i >= types_.size()) return DT::none;
    used_[types_[i].second] = true;
    return types_[i].first;
  }
  size_t type_count() const { return types_.size(); }
  bool all_used() const {
    for (bool u : used_)
      if (!u) return false;
    return true;
  }

 private:
  std::vector<std::string_view> words_;
  std::vector<bool> used_;
  std::vector<std::pair<DT, size_t>> types_;
};

std::optional<alu::Cmp> cmp_of(Mods& m) {
  static const std::pair<std::string_view, alu::Cmp> t[] = {
      {".eq", alu::Cmp::eq},   {".ne", alu::Cmp::ne},   {".lt", alu::Cmp::lt},   {".le", alu::Cmp::le},
      {".gt", alu::Cmp::gt},   {".ge", alu::Cmp::ge},   {".lo", alu::Cmp::lo},   {".ls", alu::Cmp::ls},
      {".hi", alu::Cmp::hi},   {".hs", alu::Cmp::hs},   {".equ", alu::Cmp::equ}, {".neu", alu::Cmp::neu},
      {".ltu", alu::Cmp::ltu}, {".leu", alu::Cmp::leu}, {".gtu", alu::Cmp::gtu}, {".geu", alu::Cmp::geu},
      {".num", alu::Cmp::num}, {".nan", alu::Cmp::nan}};
  for (auto& [w, c] : t)
    if (m.has(w)) return c;
  return std::nullopt;
}

void fmode_of(Mods& m, Inst& out) {
  if (m.has(".rn")) out.fm.rnd = alu::Round::rn;
  else if (m.has(".rz")) out.fm.rnd = alu::Round::rz;
  else if (m.has(".rm")) out.fm.rnd = alu::Round::rm;
  else if (m.has(".rp")) out.fm.rnd = alu::Round::rp;
  out.fm.ftz = m.has(".ftz");
  out.fm.sat = m.has(".sat");
}

Space space_of(Mods& m) {
  if (m.has(".global")) return Space::global;
  if (m.has(".shared") || m.has(".shared::cta")) return Space::shared;
  if (m.has(".local")) return Space::local;
  if (m.has(".param") || m.has(".param::entry") || m.has(".param::func")) return Space::param;
  if (m.has(".const")) return Space::const_;
  return Space::generic;
}

alu::Ty cvt_ty(DT t, bool* ok) {
  *ok = true;
  switch (t) {
    case DT::u8: return alu::Ty::u8;   case DT::u16: return alu::Ty::u16;
    case DT::u32: return alu::Ty::u32; case DT::u64: return alu::Ty::u64;
    case DT::s8: return alu::Ty::s8;   case DT::s16: return alu::Ty::s16;
    case DT::s32: return alu::Ty::s32; case DT::s64: return alu::Ty::s64;
    case DT::b8: return alu::Ty::u8;   case DT::b16: return alu::Ty::u16;
    case DT::b32: return alu::Ty::u32; case DT::b64: return alu::Ty::u64;
    case DT::f16: return alu::Ty::f16; case DT::bf16: return alu::Ty::bf16;
    case DT::tf32: return alu::Ty::tf32; case DT::f32: return alu::Ty::f32;
    case DT::f64: return alu::Ty::f64;
    default: *ok = false; return alu::Ty::u32;
  }
}

bool is_int(DT t) { return !dt_float(t) && t != DT::pred && t != DT::none && dt_bits(t) <= 64; }

}  // namespace

bool lower_control(FnLowerer& fl, const ptx::Instruction& ins, Inst& out, bool* handled);

bool FnLowerer::lower_instruction(const ptx::Instruction& ins, Inst& out) {
  bool handled = false;
  if (!lower_control(*this, ins, out, &handled)) return false;
  if (handled) return true;
  Mods m(ins);
  std::string_view op = ins.opcode;
  auto& ops = ins.operands;
  auto need = [&](size_t n) { return ops.size() == n || fail(ins, "unexpected operand count for " + ins.full_opcode()); };
  auto finish = [&]() { return m.all_used() || unsupported(ins); };
  // d, a, b, ... with every source read as `t`.
  auto regular = [&](Op o, DT t, size_t nsrc) {
    out.op = o;
    if (!need(nsrc + 1) || !dest(ops[0], out.o[0], ins)) return false;
    for (size_t i = 0; i < nsrc; ++i)
      if (!value(ops[i + 1], t, out.o[i + 1], ins)) return false;
    out.n = static_cast<uint8_t>(nsrc + 1);
    return finish();
  };

  if (op == "mov") {
    out.type = m.type();
    out.vec = 1;
    if (out.type == DT::b128 || m.has(".v2") || m.has(".v4")) return unsupported(ins);
    if (!need(2)) return false;
    auto vec_parts = [&](const ptx::Operand& v, size_t first, DT part) {
      out.n = static_cast<uint8_t>(first + v.elems.size());
      if (v.elems.size() < 2 || v.elems.size() > 4) return unsupported(ins);
      for (size_t i = 0; i < v.elems.size(); ++i)
        if (!(first == 0 ? dest(v.elems[i], out.o[i], ins) : value(v.elems[i], part, out.o[first + i], ins)))
          return false;
      out.vec = static_cast<uint8_t>(v.elems.size());
      return true;
    };
    if (ops[1].kind == ptx::Operand::Kind::vector) {  // mov.b64 %rd, {%r1, %r2}
      out.op = Op::mov_pack;
      return dest(ops[0], out.o[0], ins) && vec_parts(ops[1], 1, DT::none) && finish();
    }
    if (ops[0].kind == ptx::Operand::Kind::vector) {  // mov.b64 {%r1, %r2}, %rd
      out.op = Op::mov_unpack;
      if (!vec_parts(ops[0], 0, DT::none)) return false;
      out.o[out.vec].kind = OpndKind::none;
      if (!value(ops[1], out.type, out.o[out.vec], ins)) return false;
      out.n = static_cast<uint8_t>(out.vec + 1);
      return finish();
    }
    return regular(Op::mov, out.type, 1);
  }
  if (op == "ld" || op == "ldu" || op == "st") {
    bool store = op == "st";
    out.op = store ? Op::st : Op::ld;
    out.space = op == "ldu" ? Space::global : space_of(m);
    out.nc = m.has(".nc");
    memory_model_of(ins, out, MemOrder::weak);
    out.vec = m.has(".v2") ? 2 : m.has(".v4") ? 4 : 1;
    out.type = m.type();
    if (out.type == DT::none || dt_bits(out.type) > 64 || m.has(".v8")) return unsupported(ins);
    if (ops.size() < 2 || ops.size() > 3) return fail(ins, "unexpected operand count for " + ins.full_opcode());
    const ptx::Operand& mem = store ? ops[0] : ops[1];
    const ptx::Operand& val = store ? ops[1] : ops[0];
    if (!address(mem, out.space, out, ins)) return false;
    if (out.vec > 1) {
      if (val.kind != ptx::Operand::Kind::vector || val.elems.size() != out.vec) return unsupported(ins);
      for (size_t i = 0; i < out.vec; ++i)
        if (!(store ? value(val.elems[i], out.type, out.o[i], ins) : dest(val.elems[i], out.o[i], ins))) return false;
    } else if (!(store ? value(val, out.type, out.o[0], ins) : dest(val, out.o[0], ins))) {
      return false;
    }
    out.n = out.vec;
    return finish();
  }
  if (op == "cvta") {
    out.op = m.has(".to") ? Op::cvta_to : Op::cvta_from;
    out.space = space_of(m);
    out.type = m.type();
    if (out.space == Space::generic || out.type == DT::none) return unsupported(ins);
    return regular(out.op, out.type, 1);
  }
  // Thread fences are events for the race detector (PTX ISA, membar/fence: a missing .sem is
  // .acq_rel; membar.{cta,gl,sys} is fence.sc.{cta,gpu,sys}). Proxy and mbarrier_init fences
  // order async proxies the engine does not model: no effect here.
  if ((op == "membar" || op == "fence") && !m.has(".proxy") && !m.has(".mbarrier_init") &&
      !m.has(".op_restrict")) {
    out.op = Op::fence;
    memory_model_of(ins, out, op == "membar" ? MemOrder::sc : MemOrder::acq_rel);
    if (out.scope == MemScope::none) out.scope = MemScope::gpu;
    return true;
  }
  if (op == "membar" || op == "fence" || op == "prefetch" || op == "prefetchu" || op == "nanosleep" ||
      op == "pmevent") {
    out.op = Op::nop;
    return true;  // no effect on values; operands (an address, a sleep time) are not read
  }

  // ---- ALU ----
  DT t = m.type();
  out.type = t;
  // Every operation below computes at the width and kind of its type: one written without a
  // type the engine runs (the validator lets some through: `copysign`, `popc`) is refused, never
  // run at a width of 0.
  if (t == DT::none) return unsupported(ins);
  if (op == "add" || op == "sub") {
    bool cc = m.has(".cc");
    fmode_of(m, out);
    if (cc) return regular(op == "add" ? Op::add_cc : Op::sub_cc, t, 2);
    if (out.fm.sat && t != DT::s32 && !dt_float(t)) return unsupported(ins);
    return regular(op == "add" ? Op::add : Op::sub, t, 2);
  }
  if (op == "addc" || op == "subc") {
    out.flag = m.has(".cc");
    return regular(op == "addc" ? Op::addc : Op::subc, t, 2);
  }
  if (op == "madc") {
    out.flag = m.has(".cc");
    if (!m.has(".lo") && !m.has(".hi")) return unsupported(ins);
    out.sub = ins.has_mod(".hi");
    return regular(Op::madc, t, 3);
  }
  if (op == "mul" || op == "mad") {
    bool mad = op == "mad";
    if (is_int(t)) {
      if (m.has(".cc")) {
        if (!mad) return unsupported(ins);
        out.sub = m.has(".hi");
        m.has(".lo");
        return regular(Op::mad_cc, t, 3);
      }
      if (m.has(".lo")) return regular(mad ? Op::mad_lo : Op::mul_lo, t, mad ? 3 : 2);
      if (m.has(".hi")) {
        out.fm.sat = m.has(".sat");
        return regular(mad ? Op::mad_hi : Op::mul_hi, t, mad ? 3 : 2);
      }
      if (m.has(".wide")) {
        if (!mad) return regular(Op::mul_wide, t, 2);
        out.op = Op::mad_wide;
        if (!need(4) || !dest(ops[0], out.o[0], ins) || !value(ops[1], t, out.o[1], ins) ||
            !value(ops[2], t, out.o[2], ins))
          return false;
        DT wide = dt_signed(t) ? (dt_bits(t) == 16 ? DT::s32 : DT::s64) : (dt_bits(t) == 16 ? DT::u32 : DT::u64);
        out.type2 = wide;
        if (!value(ops[3], wide, out.o[3], ins)) return false;
        out.n = 4;
        return finish();
      }
      return unsupported(ins);
    }
    fmode_of(m, out);
    if (mad) return regular(Op::fma, t, 3);
    return regular(Op::mul_lo, t, 2);
  }
  if (op == "mul24" || op == "mad24") {
    bool hi = m.has(".hi");
    if (!hi && !m.has(".lo")) return unsupported(ins);
    if (op == "mul24") return regular(hi ? Op::mul24_hi : Op::mul24_lo, t, 2);
    return regular(hi ? Op::mad24_hi : Op::mad24_lo, t, 3);
  }
  if (op == "div") {
    fmode_of(m, out);
    if (dt_float(t)) {
      if (m.has(".approx")) out.sub = 1;
      else if (m.has(".full")) out.sub = 2;
      else if (!ins.has_mod(".rn") && !ins.has_mod(".rz") && !ins.has_mod(".rm") && !ins.has_mod(".rp"))
        return unsupported(ins);
    }
    return regular(Op::div, t, 2);
  }
  if (op == "rem") return regular(Op::rem, t, 2);
  if (op == "abs" || op == "neg") {
    out.fm.ftz = m.has(".ftz");
    return regular(op == "abs" ? Op::abs : Op::neg, t, 1);
  }
  if (op == "min" || op == "max") {
    out.fm.ftz = m.has(".ftz");
    out.flag = m.has(".NaN");
    out.fm.sat = m.has(".relu");  // .relu rides in sat: negative results become 0
    return regular(op == "min" ? Op::min : Op::max, t, 2);
  }
  if (op == "and" || op == "or" || op == "xor")
    return regular(op == "and" ? Op::and_ : op == "or" ? Op::or_ : Op::xor_, t, 2);
  if (op == "not" || op == "cnot") return regular(op == "not" ? Op::not_ : Op::cnot, t, 1);
  if (op == "shl" || op == "shr") {
    out.op = op == "shl" ? Op::shl : Op::shr;
    if (!need(3) || !dest(ops[0], out.o[0], ins) || !value(ops[1], t, out.o[1], ins) ||
        !value(ops[2], DT::u32, out.o[2], ins))
      return false;
    out.n = 3;
    return finish();
  }
  if (op == "selp") {
    out.op = Op::selp;
    if (!need(4) || !dest(ops[0], out.o[0], ins) || !value(ops[1], t, out.o[1], ins) ||
        !value(ops[2], t, out.o[2], ins) || !pred_operand(ops[3], out.o[3], ins))
      return false;
    out.n = 4;
    return finish();
  }
  if (op == "slct") {
    out.fm.ftz = m.has(".ftz");
    out.type2 = m.type(1);
    out.op = Op::slct;
    if (!need(4) || !dest(ops[0], out.o[0], ins) || !value(ops[1], t, out.o[1], ins) ||
        !value(ops[2], t, out.o[2], ins) || !value(ops[3], out.type2, out.o[3], ins))
      return false;
    out.n = 4;
    return finish();
  }
  if (op == "setp" || op == "set") {
    auto c = cmp_of(m);
    if (!c) return unsupported(ins);
    out.cmp = *c;
    out.fm.ftz = m.has(".ftz");
    out.sub = static_cast<uint8_t>(m.has(".and") ? Combine::and_ : m.has(".or") ? Combine::or_
                                                                    : m.has(".xor") ? Combine::xor_ : Combine::none);
    DT st = t;
    if (op == "set") {
      st = m.type(1);
      out.type2 = st;
      out.op = Op::set;
    } else {
      out.op = Op::setp;
      out.type2 = t;
    }
    if (ops.size() < 3 || ops.size() > 4) return fail(ins, "unexpected operand count for " + ins.full_opcode());
    if (out.sub == 0 && ops.size() == 4) return unsupported(ins);
    if (out.sub != 0 && ops.size() != 4) return unsupported(ins);
    // %p|%q: two predicate destinations.
    const ptx::Operand& d = ops[0];
    if (op == "setp" && d.kind == ptx::Operand::Kind::expr && d.expr.kind == ptx::Expr::Kind::binary &&
        d.expr.text == "|") {
      ptx::Operand a = d, b = d;
      a.expr = d.expr.args[0];
      b.expr = d.expr.args[1];
      if (!dest(a, out.o[0], ins) || !dest(b, out.o[4], ins)) return false;
    } else if (!dest(d, out.o[0], ins)) {
      return false;
    }
    if (!value(ops[1], st, out.o[1], ins) || !value(ops[2], st, out.o[2], ins)) return false;
    if (ops.size() == 4 && !pred_operand(ops[3], out.o[3], ins)) return false;
    out.n = static_cast<uint8_t>(ops.size());
    return finish();
  }
  if (op == "fma") {
    fmode_of(m, out);
    out.flag = m.has(".relu");
    return regular(Op::fma, t, 3);
  }
  if (op == "rcp" || op == "sqrt" || op == "rsqrt" || op == "ex2" || op == "lg2" || op == "sin" || op == "cos" ||
      op == "tanh") {
    fmode_of(m, out);
    out.sub = m.has(".approx") ? 1 : 0;
    if (op == "rcp" && out.type == DT::f64 && out.sub) out.flag = true;  // rcp.approx.ftz.f64
    bool approx_only = op != "rcp" && op != "sqrt";
    if (approx_only && !out.sub) return unsupported(ins);
    Op o = op == "rcp" ? Op::rcp : op == "sqrt" ? Op::sqrt : op == "rsqrt" ? Op::rsqrt : op == "ex2" ? Op::ex2
           : op == "lg2" ? Op::lg2 : op == "sin" ? Op::sin : op == "cos" ? Op::cos : Op::tanh;
    return regular(o, t, 1);
  }
  if (op == "copysign") return regular(Op::copysign, t, 2);
  if (op == "cvt") {
    out.type2 = m.type(1);
    // The packed fp8 forms (PTX ISA cvt): two f32 (a to the upper byte) or one f16x2 to
    // e4m3x2/e5m2x2, and e4m3x2/e5m2x2 to f16x2; the interpreter converts per element.
    const bool fp8x2_to = t == DT::e4m3x2 || t == DT::e5m2x2;
    const bool fp8x2_from = out.type2 == DT::e4m3x2 || out.type2 == DT::e5m2x2;
    const bool pack2 = fp8x2_to && out.type2 == DT::f32;
    bool ok1, ok2;
    cvt_ty(t, &ok1);
    cvt_ty(out.type2, &ok2);
    if (fp8x2_to || fp8x2_from) {
      ok1 = ok2 = (fp8x2_to && (out.type2 == DT::f32 || out.type2 == DT::f16x2)) || (fp8x2_from && t == DT::f16x2);
    }
    if (!ok1 || !ok2) return unsupported(ins);
    if (m.has(".rn")) out.cvt.rnd = alu::Round::rn;
    else if (m.has(".rz")) out.cvt.rnd = alu::Round::rz;
    else if (m.has(".rm")) out.cvt.rnd = alu::Round::rm;
    else if (m.has(".rp")) out.cvt.rnd = alu::Round::rp;
    if (m.has(".rni")) out.cvt.irnd = alu::IntRound::rni;
    else if (m.has(".rzi")) out.cvt.irnd = alu::IntRound::rzi;
    else if (m.has(".rmi")) out.cvt.irnd = alu::IntRound::rmi;
    else if (m.has(".rpi")) out.cvt.irnd = alu::IntRound::rpi;
    out.cvt.rna = m.has(".rna");
    out.cvt.ftz = m.has(".ftz");
    out.cvt.sat = m.has(".sat");
    out.cvt.satfinite = m.has(".satfinite");
    out.cvt.relu = m.has(".relu");
    out.op = Op::cvt;
    if (pack2) return regular(Op::cvt, DT::f32, 2);
    if (!need(2) || !dest(ops[0], out.o[0], ins) || !value(ops[1], out.type2, out.o[1], ins)) return false;
    out.n = 2;
    return finish();
  }
  if (op == "popc" || op == "clz" || op == "brev") return regular(op == "popc" ? Op::popc : op == "clz" ? Op::clz : Op::brev, t, 1);
  if (op == "bfind") {
    out.flag = m.has(".shiftamt");
    return regular(Op::bfind, t, 1);
  }
  if (op == "bfe" || op == "bfi") {
    bool bfi = op == "bfi";
    out.op = bfi ? Op::bfi : Op::bfe;
    size_t nv = bfi ? 2 : 1;
    if (!need(nv + 3) || !dest(ops[0], out.o[0], ins)) return false;
    for (size_t i = 1; i <= nv; ++i)
      if (!value(ops[i], t, out.o[i], ins)) return false;
    if (!value(ops[nv + 1], DT::u32, out.o[nv + 1], ins) || !value(ops[nv + 2], DT::u32, out.o[nv + 2], ins))
      return false;
    out.n = static_cast<uint8_t>(nv + 3);
    return finish();
  }
  if (op == "prmt") {
    static const std::string_view modes[] = {"", ".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16"};
    for (uint8_t i = 1; i < 7; ++i)
      if (m.has(modes[i])) out.sub = i;
    return regular(Op::prmt, t, 3);
  }
  if (op == "lop3") return regular(Op::lop3, t, 4);
  if (op == "shf") {
    out.sub = m.has(".l") ? 1 : 0;
    if (!out.sub && !m.has(".r")) return unsupported(ins);
    out.flag = m.has(".wrap");
    if (!out.flag && !m.has(".clamp")) return unsupported(ins);
    return regular(Op::shf, t, 3);
  }
  if (op == "dp4a" || op == "dp2a") {
    out.type2 = m.type(1);
    out.sub = m.has(".hi");
    if (op == "dp2a" && !out.sub && !m.has(".lo")) return unsupported(ins);
    return regular(op == "dp4a" ? Op::dp4a : Op::dp2a, DT::u32, 3);
  }
  return unsupported(ins);
}

}  // namespace ptxforge::emu::detail
