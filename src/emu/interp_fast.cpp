// The fast kernels (interp_fast.h): each is one common ALU form with its type, operation and
// modes fixed at compile time. An issue resolves its source operands once into rows of 32
// lanes (a register row in place; an immediate, special register or frame address written
// out), then runs one loop over the executing lanes (all 32 without a bit scan when the warp
// is converged). Taint follows the general path's rule: the destination's lanes take the union
// of the sources' and the guard's taint. Built with -ffp-contract=off like the ALU files: the
// float kernels round exactly as alu_float.cpp's .rn path (the host's IEEE arithmetic, a NaN
// result replaced by the canonical NaN).
#include "emu/interp_fast.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <type_traits>

#include "emu/alu.h"
#include "emu/interp.h"

namespace ptxforge::emu {

namespace {

std::atomic<bool> g_fast{true};

constexpr uint32_t kFull = 0xffffffffu;

template <typename F>
inline void lanes(uint32_t mask, F&& f) {
  if (mask == kFull) {
    for (uint32_t l = 0; l < 32; ++l) f(l);
  } else {
    for (uint32_t m = mask; m; m &= m - 1) f(static_cast<uint32_t>(std::countr_zero(m)));
  }
}

// A source operand as 32 lanes of raw 64-bit values (the kernel truncates to its width, as
// read_operand masks to the instruction's bits).
inline const uint64_t* src(Exec& x, const Opnd& o, uint64_t* buf) {
  if (o.kind == OpndKind::reg) return x.f().regs.data() + size_t{o.idx} * 32;
  if (o.kind == OpndKind::imm) {
    std::fill_n(buf, 32, o.imm);
    return buf;
  }
  lanes(x.mask, [&](uint32_t l) { buf[l] = read_operand(x, o, l, 64); });
  return buf;
}

inline uint64_t* dst(Exec& x) { return x.f().regs.data() + size_t{x.in.o[0].idx} * 32; }

inline uint32_t taint_in(Exec& x) {
  const Inst& in = x.in;
  Frame& f = x.f();
  uint32_t t = 0;
  for (int i = 1; i < in.n; ++i) {
    const Opnd& o = in.o[static_cast<size_t>(i)];
    if (o.kind == OpndKind::reg) t |= f.taint[o.idx];
    else if (o.kind == OpndKind::pred) t |= f.pred_taint[o.idx];
  }
  if (in.guard >= 0) t |= f.pred_taint[static_cast<size_t>(in.guard)];
  return t;
}

inline void merge(uint32_t& word, uint32_t mask, uint32_t v) { word = (word & ~mask) | (v & mask); }

// The destination register's taint (a reg destination).
inline void taint_reg(Exec& x) { merge(x.f().taint[x.in.o[0].idx], x.mask, taint_in(x)); }

// ---- integer kernels: T is the unsigned type of the instruction's width -----------------------

template <typename T, T (*F)(T)>
void k_un(Exec& x) {
  taint_reg(x);
  uint64_t b1[32];
  const uint64_t* a = src(x, x.in.o[1], b1);
  uint64_t* d = dst(x);
  lanes(x.mask, [&](uint32_t l) { d[l] = F(static_cast<T>(a[l])); });
}

template <typename T, T (*F)(T, T)>
void k_bin(Exec& x) {
  taint_reg(x);
  uint64_t b1[32], b2[32];
  const uint64_t* a = src(x, x.in.o[1], b1);
  const uint64_t* b = src(x, x.in.o[2], b2);
  uint64_t* d = dst(x);
  lanes(x.mask, [&](uint32_t l) { d[l] = F(static_cast<T>(a[l]), static_cast<T>(b[l])); });
}

template <typename T, T (*F)(T, T, T)>
void k_tern(Exec& x) {
  taint_reg(x);
  uint64_t b1[32], b2[32], b3[32];
  const uint64_t* a = src(x, x.in.o[1], b1);
  const uint64_t* b = src(x, x.in.o[2], b2);
  const uint64_t* c = src(x, x.in.o[3], b3);
  uint64_t* d = dst(x);
  lanes(x.mask, [&](uint32_t l) { d[l] = F(static_cast<T>(a[l]), static_cast<T>(b[l]), static_cast<T>(c[l])); });
}

template <typename T> T op_mov(T a) { return a; }
template <typename T> T op_add(T a, T b) { return static_cast<T>(a + b); }
template <typename T> T op_sub(T a, T b) { return static_cast<T>(a - b); }
template <typename T> T op_mul(T a, T b) { return static_cast<T>(a * b); }
template <typename T> T op_mad(T a, T b, T c) { return static_cast<T>(a * b + c); }
template <typename T> T op_and(T a, T b) { return a & b; }
template <typename T> T op_or(T a, T b) { return a | b; }
template <typename T> T op_xor(T a, T b) { return a ^ b; }
template <typename T> T op_not(T a) { return static_cast<T>(~a); }
// Counts read at 32 bits; past the width: 0 (shl, shr.u) or the sign (shr.s), alu::shl's rule.
template <typename T> T op_shl(T a, T n) {
  uint32_t c = static_cast<uint32_t>(n);
  return c >= sizeof(T) * 8 ? T{0} : static_cast<T>(a << c);
}
template <typename T> T op_shr_u(T a, T n) {
  uint32_t c = static_cast<uint32_t>(n);
  return c >= sizeof(T) * 8 ? T{0} : static_cast<T>(a >> c);
}
template <typename T> T op_shr_s(T a, T n) {
  uint32_t c = std::min<uint32_t>(static_cast<uint32_t>(n), sizeof(T) * 8 - 1);
  return static_cast<T>(static_cast<std::make_signed_t<T>>(a) >> c);
}
template <typename T> T op_min_u(T a, T b) { return a < b ? a : b; }
template <typename T> T op_max_u(T a, T b) { return b < a ? a : b; }
template <typename T> T op_min_s(T a, T b) {
  using S = std::make_signed_t<T>;
  return static_cast<S>(a) < static_cast<S>(b) ? a : b;
}
template <typename T> T op_max_s(T a, T b) {
  using S = std::make_signed_t<T>;
  return static_cast<S>(b) < static_cast<S>(a) ? a : b;
}

// selp: o[3] is a predicate.
template <typename T>
void k_selp(Exec& x) {
  taint_reg(x);
  uint64_t b1[32], b2[32];
  const uint64_t* a = src(x, x.in.o[1], b1);
  const uint64_t* b = src(x, x.in.o[2], b2);
  const Opnd& p = x.in.o[3];
  uint32_t c = x.f().preds[p.idx] ^ (p.neg ? kFull : 0u);
  uint64_t* d = dst(x);
  lanes(x.mask, [&](uint32_t l) { d[l] = static_cast<T>(((c >> l) & 1) ? a[l] : b[l]); });
}

// mul.wide.u32 / .s32: the 64-bit product.
template <bool Signed>
void k_mul_wide(Exec& x) {
  taint_reg(x);
  uint64_t b1[32], b2[32];
  const uint64_t* a = src(x, x.in.o[1], b1);
  const uint64_t* b = src(x, x.in.o[2], b2);
  uint64_t* d = dst(x);
  lanes(x.mask, [&](uint32_t l) {
    if constexpr (Signed)
      d[l] = static_cast<uint64_t>(int64_t{static_cast<int32_t>(a[l])} * int64_t{static_cast<int32_t>(b[l])});
    else
      d[l] = uint64_t{static_cast<uint32_t>(a[l])} * uint64_t{static_cast<uint32_t>(b[l])};
  });
}

// cvt between 32- and 64-bit integers without .sat: extend by the source, cut to the
// destination; a signed destination narrower than 64 bits is kept sign-extended (as the
// general path writes it).
template <typename From, typename To>
void k_cvt_int(Exec& x) {
  taint_reg(x);
  uint64_t b1[32];
  const uint64_t* a = src(x, x.in.o[1], b1);
  uint64_t* d = dst(x);
  lanes(x.mask, [&](uint32_t l) {
    auto v = static_cast<To>(static_cast<From>(a[l]));
    if constexpr (std::is_signed_v<To>) d[l] = static_cast<uint64_t>(static_cast<int64_t>(v));
    else d[l] = v;
  });
}

// ---- comparisons ---------------------------------------------------------------------------

template <typename V, typename C>
uint32_t compare_lanes(uint32_t mask, const uint64_t* a, const uint64_t* b, C c) {
  uint32_t r = 0;
  lanes(mask, [&](uint32_t l) {
    V va, vb;
    if constexpr (std::is_same_v<V, float>) {
      va = std::bit_cast<float>(static_cast<uint32_t>(a[l]));
      vb = std::bit_cast<float>(static_cast<uint32_t>(b[l]));
    } else if constexpr (std::is_same_v<V, double>) {
      va = std::bit_cast<double>(a[l]);
      vb = std::bit_cast<double>(b[l]);
    } else {
      va = static_cast<V>(a[l]);
      vb = static_cast<V>(b[l]);
    }
    r |= uint32_t{c(va, vb)} << l;
  });
  return r;
}

// Integer setp (alu::cmp_int): lt/le/gt/ge by the type's signedness (U or S), lo/ls/hi/hs
// unsigned, the u-forms as the plain ones, num true and nan false.
template <typename U>
uint32_t compare_int(Exec& x, const uint64_t* a, const uint64_t* b, bool sg) {
  using S = std::make_signed_t<U>;
  uint32_t m = x.mask;
  switch (x.in.cmp) {
    case alu::Cmp::eq: case alu::Cmp::equ: return compare_lanes<U>(m, a, b, [](U p, U q) { return p == q; });
    case alu::Cmp::ne: case alu::Cmp::neu: return compare_lanes<U>(m, a, b, [](U p, U q) { return p != q; });
    case alu::Cmp::lt: case alu::Cmp::ltu:
      return sg ? compare_lanes<S>(m, a, b, [](S p, S q) { return p < q; })
                : compare_lanes<U>(m, a, b, [](U p, U q) { return p < q; });
    case alu::Cmp::le: case alu::Cmp::leu:
      return sg ? compare_lanes<S>(m, a, b, [](S p, S q) { return p <= q; })
                : compare_lanes<U>(m, a, b, [](U p, U q) { return p <= q; });
    case alu::Cmp::gt: case alu::Cmp::gtu:
      return sg ? compare_lanes<S>(m, a, b, [](S p, S q) { return p > q; })
                : compare_lanes<U>(m, a, b, [](U p, U q) { return p > q; });
    case alu::Cmp::ge: case alu::Cmp::geu:
      return sg ? compare_lanes<S>(m, a, b, [](S p, S q) { return p >= q; })
                : compare_lanes<U>(m, a, b, [](U p, U q) { return p >= q; });
    case alu::Cmp::lo: return compare_lanes<U>(m, a, b, [](U p, U q) { return p < q; });
    case alu::Cmp::ls: return compare_lanes<U>(m, a, b, [](U p, U q) { return p <= q; });
    case alu::Cmp::hi: return compare_lanes<U>(m, a, b, [](U p, U q) { return p > q; });
    case alu::Cmp::hs: return compare_lanes<U>(m, a, b, [](U p, U q) { return p >= q; });
    case alu::Cmp::num: return kFull;
    case alu::Cmp::nan: return 0;
  }
  return 0;
}

// Float setp without .ftz (alu::cmp_double): ordered forms false on a NaN, unordered true;
// lo/ls/hi/hs read as lt/le/gt/ge.
template <typename F>
uint32_t compare_float(Exec& x, const uint64_t* a, const uint64_t* b) {
  uint32_t m = x.mask;
  auto un = [](F p, F q) { return std::isnan(p) || std::isnan(q); };
  switch (x.in.cmp) {
    case alu::Cmp::eq: return compare_lanes<F>(m, a, b, [](F p, F q) { return p == q; });
    case alu::Cmp::ne: return compare_lanes<F>(m, a, b, [=](F p, F q) { return !un(p, q) && p != q; });
    case alu::Cmp::lt: case alu::Cmp::lo: return compare_lanes<F>(m, a, b, [](F p, F q) { return p < q; });
    case alu::Cmp::le: case alu::Cmp::ls: return compare_lanes<F>(m, a, b, [](F p, F q) { return p <= q; });
    case alu::Cmp::gt: case alu::Cmp::hi: return compare_lanes<F>(m, a, b, [](F p, F q) { return p > q; });
    case alu::Cmp::ge: case alu::Cmp::hs: return compare_lanes<F>(m, a, b, [](F p, F q) { return p >= q; });
    case alu::Cmp::equ: return compare_lanes<F>(m, a, b, [=](F p, F q) { return un(p, q) || p == q; });
    case alu::Cmp::neu: return compare_lanes<F>(m, a, b, [](F p, F q) { return p != q; });
    case alu::Cmp::ltu: return compare_lanes<F>(m, a, b, [](F p, F q) { return !(p >= q); });
    case alu::Cmp::leu: return compare_lanes<F>(m, a, b, [](F p, F q) { return !(p > q); });
    case alu::Cmp::gtu: return compare_lanes<F>(m, a, b, [](F p, F q) { return !(p <= q); });
    case alu::Cmp::geu: return compare_lanes<F>(m, a, b, [](F p, F q) { return !(p < q); });
    case alu::Cmp::num: return compare_lanes<F>(m, a, b, [=](F p, F q) { return !un(p, q); });
    case alu::Cmp::nan: return compare_lanes<F>(m, a, b, [=](F p, F q) { return un(p, q); });
  }
  return 0;
}

// setp without .and/.or/.xor: predicate destinations o[0] and, for p|q, o[4] (the complement).
enum class CmpKind { u32, s32, u64, s64, f32, f64 };
template <CmpKind K>
void k_setp(Exec& x) {
  const Inst& in = x.in;
  uint32_t t = taint_in(x);
  Frame& f = x.f();
  uint64_t b1[32], b2[32];
  const uint64_t* a = src(x, in.o[1], b1);
  const uint64_t* b = src(x, in.o[2], b2);
  uint32_t r;
  if constexpr (K == CmpKind::u32) r = compare_int<uint32_t>(x, a, b, false);
  else if constexpr (K == CmpKind::s32) r = compare_int<uint32_t>(x, a, b, true);
  else if constexpr (K == CmpKind::u64) r = compare_int<uint64_t>(x, a, b, false);
  else if constexpr (K == CmpKind::s64) r = compare_int<uint64_t>(x, a, b, true);
  else if constexpr (K == CmpKind::f32) r = compare_float<float>(x, a, b);
  else r = compare_float<double>(x, a, b);
  merge(f.pred_taint[in.o[0].idx], x.mask, t);
  merge(f.preds[in.o[0].idx], x.mask, r);
  if (in.o[4].kind == OpndKind::pred) {
    merge(f.pred_taint[in.o[4].idx], x.mask, t);
    merge(f.preds[in.o[4].idx], x.mask, ~r);
  }
}

// ---- float kernels: .rn, no .ftz/.sat (alu_float.cpp's host path) ------------------------------

inline uint32_t canon(float r) {
  uint32_t b = std::bit_cast<uint32_t>(r);
  return (b & 0x7fffffffu) > 0x7f800000u ? alu::kNanF32 : b;
}
// f64 NaN results are the GPU's (alu.h nan_f64): the first NaN operand quieted, or kNanF64.
inline uint64_t nan_or(double r, uint64_t a, uint64_t b, uint64_t c = 0) {
  uint64_t x = std::bit_cast<uint64_t>(r);
  return alu::is_nan64(x) ? alu::nan_f64(a, b, c) : x;
}
inline float f32(uint64_t v) { return std::bit_cast<float>(static_cast<uint32_t>(v)); }
inline double f64(uint64_t v) { return std::bit_cast<double>(v); }

// sub is add of the negation in IEEE arithmetic, so a - b gives sub_f32's bits (a NaN b
// gives the canonical NaN either way).
uint32_t f32_add(uint32_t a, uint32_t b) { return canon(f32(a) + f32(b)); }
uint32_t f32_sub(uint32_t a, uint32_t b) { return canon(f32(a) - f32(b)); }
uint32_t f32_mul(uint32_t a, uint32_t b) { return canon(f32(a) * f32(b)); }
uint32_t f32_fma(uint32_t a, uint32_t b, uint32_t c) { return canon(std::fma(f32(a), f32(b), f32(c))); }
uint64_t f64_add(uint64_t a, uint64_t b) { return nan_or(f64(a) + f64(b), a, b); }
uint64_t f64_sub(uint64_t a, uint64_t b) { return nan_or(f64(a) - f64(b), a, b); }
uint64_t f64_mul(uint64_t a, uint64_t b) { return nan_or(f64(a) * f64(b), a, b); }
uint64_t f64_fma(uint64_t a, uint64_t b, uint64_t c) { return nan_or(std::fma(f64(a), f64(b), f64(c)), a, b, c); }

// ---- choosing ----------------------------------------------------------------------------------

bool value_kind(const Opnd& o) {
  return o.kind == OpndKind::reg || o.kind == OpndKind::imm || o.kind == OpndKind::sreg ||
         o.kind == OpndKind::frame_addr;
}

bool sources_ok(const Inst& in, int from, int to) {
  for (int i = from; i < to; ++i)
    if (!value_kind(in.o[static_cast<size_t>(i)])) return false;
  return true;
}

bool is_float_type(DT t) { return dt_float(t); }

template <template <typename> class K>
FastKernel by_width(int bits) {
  if (bits == 32) return K<uint32_t>::fn;
  if (bits == 64) return K<uint64_t>::fn;
  return nullptr;
}

#define PTXFORGE_FAST_UN(NAME, OP) \
  template <typename T>            \
  struct NAME {                    \
    static constexpr FastKernel fn = &k_un<T, OP<T>>; \
  };
#define PTXFORGE_FAST_BIN(NAME, OP) \
  template <typename T>             \
  struct NAME {                     \
    static constexpr FastKernel fn = &k_bin<T, OP<T>>; \
  };
PTXFORGE_FAST_UN(Mov, op_mov)
PTXFORGE_FAST_UN(Not, op_not)
PTXFORGE_FAST_BIN(Add, op_add)
PTXFORGE_FAST_BIN(Sub, op_sub)
PTXFORGE_FAST_BIN(Mul, op_mul)
PTXFORGE_FAST_BIN(And, op_and)
PTXFORGE_FAST_BIN(Or, op_or)
PTXFORGE_FAST_BIN(Xor, op_xor)
PTXFORGE_FAST_BIN(Shl, op_shl)
PTXFORGE_FAST_BIN(ShrU, op_shr_u)
PTXFORGE_FAST_BIN(ShrS, op_shr_s)
PTXFORGE_FAST_BIN(MinU, op_min_u)
PTXFORGE_FAST_BIN(MaxU, op_max_u)
PTXFORGE_FAST_BIN(MinS, op_min_s)
PTXFORGE_FAST_BIN(MaxS, op_max_s)
#undef PTXFORGE_FAST_UN
#undef PTXFORGE_FAST_BIN
template <typename T>
struct Mad {
  static constexpr FastKernel fn = &k_tern<T, op_mad<T>>;
};
template <typename T>
struct Selp {
  static constexpr FastKernel fn = &k_selp<T>;
};

FastKernel int_cvt(DT to, DT from) {
  auto w = [](DT t) { return dt_bits(t); };
  bool ts = dt_signed(to), fs = dt_signed(from);
  if (w(from) == 32 && w(to) == 64) {
    if (fs) return ts ? &k_cvt_int<int32_t, int64_t> : &k_cvt_int<int32_t, uint64_t>;
    return ts ? &k_cvt_int<uint32_t, int64_t> : &k_cvt_int<uint32_t, uint64_t>;
  }
  if (w(from) == 64 && w(to) == 32) return ts ? &k_cvt_int<uint64_t, int32_t> : &k_cvt_int<uint64_t, uint32_t>;
  if (w(from) == 32 && w(to) == 32) {
    if (fs) return ts ? &k_cvt_int<int32_t, int32_t> : &k_cvt_int<int32_t, uint32_t>;
    return ts ? &k_cvt_int<uint32_t, int32_t> : &k_cvt_int<uint32_t, uint32_t>;
  }
  if (w(from) == 64 && w(to) == 64) return &k_cvt_int<uint64_t, uint64_t>;
  return nullptr;
}

bool plain_int(DT t) { return t != DT::pred && !is_float_type(t) && t != DT::none; }

FastKernel choose(const Inst& in) {
  const Opnd& d = in.o[0];
  int bits = dt_bits(in.type);
  bool sg = dt_signed(in.type);
  const alu::FMode plain{};
  bool rn_plain = in.fm.rnd == plain.rnd && !in.fm.ftz && !in.fm.sat;
  if (in.op == Op::setp) {
    if (d.kind != OpndKind::pred || in.sub != 0 || in.n != 3 || !sources_ok(in, 1, 3)) return nullptr;
    if (in.o[4].kind != OpndKind::none && in.o[4].kind != OpndKind::pred) return nullptr;
    DT t = in.type2;
    if (t == DT::f32) return in.fm.ftz ? nullptr : &k_setp<CmpKind::f32>;
    if (t == DT::f64) return &k_setp<CmpKind::f64>;
    if (!plain_int(t)) return nullptr;
    int b = dt_bits(t);
    bool s = dt_signed(t);
    if (b == 32) return s ? &k_setp<CmpKind::s32> : &k_setp<CmpKind::u32>;
    if (b == 64) return s ? &k_setp<CmpKind::s64> : &k_setp<CmpKind::u64>;
    return nullptr;
  }
  if (d.kind != OpndKind::reg) return nullptr;
  if (in.op == Op::selp) {
    if (in.n != 4 || !sources_ok(in, 1, 3) || in.o[3].kind != OpndKind::pred) return nullptr;
    return by_width<Selp>(bits);
  }
  int nsrc = in.n - 1;
  if (!sources_ok(in, 1, in.n)) return nullptr;
  switch (in.op) {
    case Op::mov: return nsrc == 1 && in.type != DT::pred ? by_width<Mov>(bits) : nullptr;
    case Op::and_: return nsrc == 2 && in.type != DT::pred ? by_width<And>(bits) : nullptr;
    case Op::or_: return nsrc == 2 && in.type != DT::pred ? by_width<Or>(bits) : nullptr;
    case Op::xor_: return nsrc == 2 && in.type != DT::pred ? by_width<Xor>(bits) : nullptr;
    case Op::not_: return nsrc == 1 && in.type != DT::pred ? by_width<Not>(bits) : nullptr;
    case Op::shl: return nsrc == 2 ? by_width<Shl>(bits) : nullptr;
    case Op::shr: return nsrc == 2 ? (sg ? by_width<ShrS>(bits) : by_width<ShrU>(bits)) : nullptr;
    default: break;
  }
  if (in.type == DT::f32 && rn_plain && !in.flag) {
    switch (in.op) {
      case Op::add: return nsrc == 2 ? &k_bin<uint32_t, f32_add> : nullptr;
      case Op::sub: return nsrc == 2 ? &k_bin<uint32_t, f32_sub> : nullptr;
      case Op::mul_lo: return nsrc == 2 ? &k_bin<uint32_t, f32_mul> : nullptr;
      case Op::fma: return nsrc == 3 ? &k_tern<uint32_t, f32_fma> : nullptr;
      default: return nullptr;
    }
  }
  if (in.type == DT::f64 && rn_plain && !in.flag) {
    switch (in.op) {
      case Op::add: return nsrc == 2 ? &k_bin<uint64_t, f64_add> : nullptr;
      case Op::sub: return nsrc == 2 ? &k_bin<uint64_t, f64_sub> : nullptr;
      case Op::mul_lo: return nsrc == 2 ? &k_bin<uint64_t, f64_mul> : nullptr;
      case Op::fma: return nsrc == 3 ? &k_tern<uint64_t, f64_fma> : nullptr;
      default: return nullptr;
    }
  }
  if (!plain_int(in.type)) return nullptr;
  if (in.fm.sat) return nullptr;  // add.sat.s32, mad.hi.sat, min/max .relu
  switch (in.op) {
    case Op::add: return nsrc == 2 ? by_width<Add>(bits) : nullptr;
    case Op::sub: return nsrc == 2 ? by_width<Sub>(bits) : nullptr;
    case Op::mul_lo: return nsrc == 2 ? by_width<Mul>(bits) : nullptr;
    case Op::mad_lo: return nsrc == 3 ? by_width<Mad>(bits) : nullptr;
    case Op::min: return nsrc == 2 ? (sg ? by_width<MinS>(bits) : by_width<MinU>(bits)) : nullptr;
    case Op::max: return nsrc == 2 ? (sg ? by_width<MaxS>(bits) : by_width<MaxU>(bits)) : nullptr;
    case Op::mul_wide:
      if (nsrc != 2 || bits != 32) return nullptr;
      return sg ? &k_mul_wide<true> : &k_mul_wide<false>;
    case Op::cvt: {
      const alu::CvtMode none{};
      const alu::CvtMode& c = in.cvt;
      bool plain_cvt = !c.sat && !c.satfinite && !c.relu && !c.ftz && !c.rna && c.irnd == none.irnd;
      if (nsrc != 1 || !plain_cvt || !plain_int(in.type2)) return nullptr;
      return int_cvt(in.type, in.type2);
    }
    default: return nullptr;
  }
}

}  // namespace

FastKernel fast_kernel(const Inst& in) {
  if (in.op == Op::nop) return nullptr;
  return choose(in);
}

void set_fast_paths(bool on) { g_fast.store(on); }
bool fast_paths() { return g_fast.load(); }

}  // namespace ptxforge::emu
