// Lowering, the module and the names: module variables laid out with their initializers,
// functions numbered, each body's registers expanded to slots (ranges and vectors included),
// labels to instruction indices, and operands to slots, immediates, special registers and
// addresses. The instructions themselves are lowered in lower_ops.cpp; lower_cfg.cpp orders
// them for the scheduler.
#include "emu/lower.h"

#include <charconv>
#include <cstring>

#include <fmt/format.h>

#include "emu/limits.h"
#include "emu/lower_internal.h"
#include "emu/memory.h"
#include "ptx/symbols.h"

namespace ptxforge::emu {

int dt_bits(DT t) {
  switch (t) {
    case DT::pred: return 1;
    case DT::b8: case DT::u8: case DT::s8: return 8;
    case DT::b16: case DT::u16: case DT::s16: case DT::f16: case DT::bf16: case DT::e4m3x2: case DT::e5m2x2: return 16;
    case DT::b32: case DT::u32: case DT::s32: case DT::f32: case DT::f16x2: case DT::bf16x2: case DT::tf32: return 32;
    case DT::b64: case DT::u64: case DT::s64: case DT::f64: return 64;
    case DT::b128: return 128;
    default: return 0;
  }
}
bool dt_signed(DT t) { return t == DT::s8 || t == DT::s16 || t == DT::s32 || t == DT::s64; }
bool dt_float(DT t) {
  switch (t) {
    case DT::f16: case DT::f16x2: case DT::bf16: case DT::bf16x2: case DT::f32: case DT::f64: case DT::tf32: return true;
    default: return false;
  }
}

namespace detail {

DT dt_from_text(std::string_view t) {
  static const std::unordered_map<std::string_view, DT> m = {
      {".pred", DT::pred}, {".b8", DT::b8},     {".b16", DT::b16},   {".b32", DT::b32},       {".b64", DT::b64},
      {".b128", DT::b128}, {".u8", DT::u8},     {".u16", DT::u16},   {".u32", DT::u32},       {".u64", DT::u64},
      {".s8", DT::s8},     {".s16", DT::s16},   {".s32", DT::s32},   {".s64", DT::s64},       {".f16", DT::f16},
      {".f16x2", DT::f16x2}, {".bf16", DT::bf16}, {".bf16x2", DT::bf16x2}, {".f32", DT::f32}, {".f64", DT::f64},
      {".tf32", DT::tf32}, {".e4m3x2", DT::e4m3x2}, {".e5m2x2", DT::e5m2x2}};
  auto it = m.find(t);
  return it == m.end() ? DT::none : it->second;
}

namespace {

std::optional<SReg> special(std::string_view n) {
  static const std::unordered_map<std::string_view, SReg> m = {
      {"%tid.x", SReg::tid_x}, {"%tid.y", SReg::tid_y}, {"%tid.z", SReg::tid_z},
      {"%ntid.x", SReg::ntid_x}, {"%ntid.y", SReg::ntid_y}, {"%ntid.z", SReg::ntid_z},
      {"%ctaid.x", SReg::ctaid_x}, {"%ctaid.y", SReg::ctaid_y}, {"%ctaid.z", SReg::ctaid_z},
      {"%nctaid.x", SReg::nctaid_x}, {"%nctaid.y", SReg::nctaid_y}, {"%nctaid.z", SReg::nctaid_z},
      {"%laneid", SReg::laneid}, {"%warpid", SReg::warpid}, {"%nwarpid", SReg::nwarpid},
      {"%lanemask_eq", SReg::lanemask_eq}, {"%lanemask_le", SReg::lanemask_le}, {"%lanemask_lt", SReg::lanemask_lt},
      {"%lanemask_ge", SReg::lanemask_ge}, {"%lanemask_gt", SReg::lanemask_gt}, {"%smid", SReg::smid},
      {"%nsmid", SReg::nsmid}, {"%clock", SReg::clock}, {"%clock_hi", SReg::clock_hi}, {"%clock64", SReg::clock64},
      {"%globaltimer", SReg::globaltimer}, {"%globaltimer_lo", SReg::globaltimer_lo},
      {"%globaltimer_hi", SReg::globaltimer_hi}, {"%dynamic_smem_size", SReg::dynamic_smem_size},
      {"%total_smem_size", SReg::total_smem_size}, {"%gridid", SReg::gridid}, {"WARP_SZ", SReg::warpsz}};
  auto it = m.find(n);
  if (it == m.end()) return std::nullopt;
  return it->second;
}


std::optional<ConstVal> parse_float(std::string_view t) {
  ConstVal v;
  v.is_float = true;
  if (t.size() > 2 && t[0] == '0' && (t[1] == 'f' || t[1] == 'F' || t[1] == 'd' || t[1] == 'D')) {
    uint64_t bits = 0;
    auto [p, ec] = std::from_chars(t.data() + 2, t.data() + t.size(), bits, 16);
    if (ec != std::errc() || p != t.data() + t.size()) return std::nullopt;
    v.bits = bits;
    (t[1] == 'f' || t[1] == 'F' ? v.is_f32_bits : v.is_f64_bits) = true;
    return v;
  }
  std::string s(t);
  char* end = nullptr;
  v.f = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

double as_double(const ConstVal& v) {
  if (v.is_f32_bits) {
    float f;
    uint32_t b = static_cast<uint32_t>(v.bits);
    std::memcpy(&f, &b, 4);
    return f;
  }
  if (v.is_f64_bits) {
    double d;
    std::memcpy(&d, &v.bits, 8);
    return d;
  }
  if (v.is_float) return v.f;
  return static_cast<double>(static_cast<int64_t>(v.bits));
}

}  // namespace

// The bits of a constant as a value of `type`: floats rounded to the type, integers truncated.
uint64_t const_bits(const ConstVal& v, DT type) {
  switch (type) {
    case DT::f32: case DT::tf32: {
      if (v.is_f32_bits) return v.bits & 0xffffffffu;
      float f = static_cast<float>(as_double(v));
      uint32_t b;
      std::memcpy(&b, &f, 4);
      return b;
    }
    case DT::f64: {
      if (v.is_f64_bits) return v.bits;
      double d = as_double(v);
      uint64_t b;
      std::memcpy(&b, &d, 8);
      return b;
    }
    case DT::f16: case DT::bf16: {
      if (!v.is_float) return v.bits & 0xffff;  // a half immediate is written as its bits
      double d = as_double(v);
      uint64_t b;
      std::memcpy(&b, &d, 8);
      return alu::cvt(b, alu::Ty::f64, type == DT::f16 ? alu::Ty::f16 : alu::Ty::bf16, {});
    }
    default: {
      uint64_t b = v.is_float ? v.bits : v.bits;
      int bits = dt_bits(type);
      return bits >= 64 || bits == 0 ? b : b & ((uint64_t{1} << bits) - 1);
    }
  }
}

std::optional<ConstVal> FnLowerer::eval(const ptx::Expr& e) {
  using K = ptx::Expr::Kind;
  switch (e.kind) {
    case K::integer: {
      auto v = ptx::integer_literal_value(e.text);
      if (!v) return std::nullopt;
      ConstVal c;
      c.bits = *v;
      return c;
    }
    case K::floating: return parse_float(e.text);
    case K::paren: return e.args.size() == 1 ? eval(e.args[0]) : std::nullopt;
    case K::unary: {
      auto a = eval(e.args[0]);
      if (!a) return std::nullopt;
      if (e.text == "+") return a;
      if (a->is_float) {
        if (e.text != "-") return std::nullopt;
        if (a->is_f32_bits) a->bits ^= 0x80000000u;
        else if (a->is_f64_bits) a->bits ^= uint64_t{1} << 63;
        else a->f = -a->f;
        return a;
      }
      if (e.text == "-") a->bits = 0 - a->bits;
      else if (e.text == "~") a->bits = ~a->bits;
      else if (e.text == "!") a->bits = a->bits == 0;
      return a;
    }
    case K::binary: {
      auto a = eval(e.args[0]), b = eval(e.args[1]);
      if (!a || !b || a->is_float || b->is_float) return std::nullopt;
      uint64_t x = a->bits, y = b->bits, r = 0;
      std::string_view op = e.text;
      int64_t sx = static_cast<int64_t>(x), sy = static_cast<int64_t>(y);
      if (op == "+") r = x + y;
      else if (op == "-") r = x - y;
      else if (op == "*") r = x * y;
      else if (op == "/" || op == "%") {
        if (y == 0 || (sx == INT64_MIN && sy == -1)) return std::nullopt;
        r = op == "/" ? static_cast<uint64_t>(sx / sy) : static_cast<uint64_t>(sx % sy);
      } else if (op == "<<") r = y >= 64 ? 0 : x << y;
      else if (op == ">>") r = y >= 64 ? (sx < 0 ? ~uint64_t{0} : 0) : static_cast<uint64_t>(sx >> y);
      else if (op == "&") r = x & y;
      else if (op == "|") r = x | y;
      else if (op == "^") r = x ^ y;
      else if (op == "<") r = sx < sy;
      else if (op == ">") r = sx > sy;
      else if (op == "<=") r = sx <= sy;
      else if (op == ">=") r = sx >= sy;
      else if (op == "==") r = x == y;
      else if (op == "!=") r = x != y;
      else if (op == "&&") r = x && y;
      else if (op == "||") r = x || y;
      else return std::nullopt;
      ConstVal c;
      c.bits = r;
      return c;
    }
    case K::ternary: {
      auto c = eval(e.args[0]);
      if (!c || c->is_float) return std::nullopt;
      return eval(e.args[c->bits ? 1 : 2]);
    }
    default: return std::nullopt;
  }
}

bool FnLowerer::fail(const ptx::Instruction& ins, std::string message) {
  err_.kind = FindingKind::unsupported;
  err_.message = std::move(message);
  err_.pos = {ins.loc.line, ins.loc.col};
  return false;
}

bool FnLowerer::unsupported(const ptx::Instruction& ins) {
  return fail(ins, "not supported by the CPU engine: " + ins.full_opcode());
}

const Sym* FnLowerer::lookup(std::string_view name) const {
  for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s) {
    auto it = s->names.find(name);
    if (it != s->names.end()) return &it->second;
    if (!s->ranges.empty()) {
      size_t d = name.size();
      while (d > 0 && name[d - 1] >= '0' && name[d - 1] <= '9') --d;
      if (d < name.size() && d > 0 && !(name[d] == '0' && d + 1 < name.size())) {
        auto n = ptx::integer_literal_value(name.substr(d));
        for (auto& r : s->ranges) {
          if (r.prefix == name.substr(0, d) && n && *n < r.count) {
            thread_local Sym tmp;  // a view valid until the next lookup
            tmp = r.base;
            tmp.index += static_cast<uint32_t>(*n);
            return &tmp;
          }
        }
      }
    }
  }
  return m_.global(name);
}

std::optional<uint32_t> FnLowerer::label(std::string_view name) const {
  auto it = labels_.find(name);
  if (it == labels_.end()) return std::nullopt;
  return it->second;
}

Opnd FnLowerer::symbol_address(const Sym& s, Space want, bool* ok) const {
  Opnd o;
  *ok = true;
  switch (s.kind) {
    case Sym::Kind::frame:
      o.kind = OpndKind::frame_addr;
      o.space = s.space;
      o.imm = s.offset + (s.space == Space::param ? kFrameParamBit : 0);
      if (want == Space::generic) o.imm += window_base(s.space == Space::param ? Space::local : s.space) -
                                          (s.space == Space::param ? kFrameParamBit : 0);
      return o;
    case Sym::Kind::kparam:
      o.kind = OpndKind::imm;
      o.imm = s.offset + (want == Space::generic ? kParamWin : 0);
      return o;
    case Sym::Kind::var:
      o.kind = OpndKind::imm;
      o.imm = m_.var_address(s.index, want);
      return o;
    case Sym::Kind::func:
      o.kind = OpndKind::imm;
      o.imm = kFuncBase + uint64_t{s.index} * 16;
      return o;
    default:
      *ok = false;
      return o;
  }
}

bool FnLowerer::dest(const ptx::Operand& op, Opnd& out, const ptx::Instruction& ins) {
  if (op.kind == ptx::Operand::Kind::sink) {
    out.kind = OpndKind::sink;
    return true;
  }
  if (op.kind != ptx::Operand::Kind::expr || op.expr.kind != ptx::Expr::Kind::name || op.expr.selector_size)
    return fail(ins, "not supported by the CPU engine: this destination operand of " + ins.full_opcode());
  const Sym* s = lookup(op.expr.text);
  if (!s || (s->kind != Sym::Kind::reg && s->kind != Sym::Kind::pred))
    return fail(ins, fmt::format("not supported by the CPU engine: destination '{}' of {}", op.expr.text,
                                 ins.full_opcode()));
  out.kind = s->kind == Sym::Kind::pred ? OpndKind::pred : OpndKind::reg;
  out.idx = s->index;
  return true;
}

bool FnLowerer::pred_operand(const ptx::Operand& op, Opnd& out, const ptx::Instruction& ins) {
  const ptx::Expr* e = &op.expr;
  bool neg = false;
  if (op.kind == ptx::Operand::Kind::expr && e->kind == ptx::Expr::Kind::unary && e->text == "!") {
    neg = true;
    e = &e->args[0];
  }
  if (op.kind != ptx::Operand::Kind::expr || e->kind != ptx::Expr::Kind::name) {
    // A constant predicate (1 / 0) as an immediate.
    if (op.kind == ptx::Operand::Kind::expr)
      if (auto c = eval(*e)) {
        out.kind = OpndKind::imm;
        out.imm = c->bits != 0;
        return true;
      }
    return fail(ins, "not supported by the CPU engine: predicate operand of " + ins.full_opcode());
  }
  const Sym* s = lookup(e->text);
  if (!s || s->kind != Sym::Kind::pred) return fail(ins, fmt::format("'{}' is not a predicate", e->text));
  out.kind = OpndKind::pred;
  out.idx = s->index;
  out.neg = neg;
  return true;
}

bool FnLowerer::value(const ptx::Operand& op, DT type, Opnd& out, const ptx::Instruction& ins) {
  if (op.kind != ptx::Operand::Kind::expr)
    return fail(ins, "not supported by the CPU engine: this operand form of " + ins.full_opcode());
  const ptx::Expr& e = op.expr;
  if (e.selector_size) return fail(ins, "not supported by the CPU engine: operand selectors");
  if (e.kind == ptx::Expr::Kind::name) {
    if (auto sr = special(e.text)) {
      out.kind = OpndKind::sreg;
      out.idx = static_cast<uint32_t>(*sr);
      return true;
    }
    if (ptx::is_special_register(e.text))
      return fail(ins, fmt::format("not supported by the CPU engine: special register {}", e.text));
    const Sym* s = lookup(e.text);
    if (!s) return fail(ins, fmt::format("not supported by the CPU engine: operand '{}'", e.text));
    if (s->kind == Sym::Kind::reg) {
      out.kind = OpndKind::reg;
      out.idx = s->index;
      return true;
    }
    if (s->kind == Sym::Kind::pred) {
      out.kind = OpndKind::pred;
      out.idx = s->index;
      return true;
    }
    bool ok = false;
    out = symbol_address(*s, s->kind == Sym::Kind::frame ? s->space : Space::global, &ok);
    if (s->kind == Sym::Kind::var) out.imm = m_.var_address(s->index, m_.program().vars[s->index].space);
    return ok || fail(ins, fmt::format("not supported by the CPU engine: operand '{}'", e.text));
  }
  if (e.kind == ptx::Expr::Kind::unary && e.text == "!" && e.args[0].kind == ptx::Expr::Kind::name)
    return pred_operand(op, out, ins);
  // sym + offset (an address as a value), or a constant.
  if (e.kind == ptx::Expr::Kind::binary && (e.text == "+" || e.text == "-") &&
      e.args[0].kind == ptx::Expr::Kind::name) {
    const Sym* s = lookup(e.args[0].text);
    auto c = eval(e.args[1]);
    if (s && c && !c->is_float && s->kind != Sym::Kind::reg && s->kind != Sym::Kind::pred) {
      bool ok = false;
      out = symbol_address(*s, s->kind == Sym::Kind::frame ? s->space : Space::global, &ok);
      if (s->kind == Sym::Kind::var) out.imm = m_.var_address(s->index, m_.program().vars[s->index].space);
      out.imm += e.text == "+" ? c->bits : 0 - c->bits;
      return ok || unsupported(ins);
    }
  }
  auto c = eval(e);
  if (!c) return fail(ins, "not supported by the CPU engine: this operand of " + ins.full_opcode());
  out.kind = OpndKind::imm;
  out.imm = const_bits(*c, type);
  return true;
}

bool FnLowerer::address(const ptx::Operand& op, Space space, Inst& out, const ptx::Instruction& ins) {
  if (op.kind != ptx::Operand::Kind::address || op.elems.size() != 1 || op.elems[0].kind != ptx::Operand::Kind::expr)
    return fail(ins, "not supported by the CPU engine: this address form of " + ins.full_opcode());
  // base, base+c, base-c, c
  const ptx::Expr* e = &op.elems[0].expr;
  int64_t off = 0;
  if (e->kind == ptx::Expr::Kind::binary && (e->text == "+" || e->text == "-")) {
    auto c = eval(e->args[1]);
    if (c && !c->is_float) {
      off = static_cast<int64_t>(e->text == "+" ? c->bits : 0 - c->bits);
      e = &e->args[0];
    }
  }
  out.addr_off = off;
  if (e->kind == ptx::Expr::Kind::name) {
    const Sym* s = lookup(e->text);
    if (!s) return fail(ins, fmt::format("not supported by the CPU engine: address '{}'", e->text));
    if (s->kind == Sym::Kind::reg) {
      out.addr_base.kind = OpndKind::reg;
      out.addr_base.idx = s->index;
      return true;
    }
    bool ok = false;
    Space want = space;
    if (s->kind == Sym::Kind::var && space != Space::generic) want = m_.program().vars[s->index].space;
    out.addr_base = symbol_address(*s, want, &ok);
    return ok || fail(ins, fmt::format("not supported by the CPU engine: address '{}'", e->text));
  }
  auto c = eval(*e);
  if (!c || c->is_float) return fail(ins, "not supported by the CPU engine: this address of " + ins.full_opcode());
  out.addr_base.kind = OpndKind::imm;
  out.addr_base.imm = c->bits;
  return true;
}

}  // namespace detail
}  // namespace ptxforge::emu
