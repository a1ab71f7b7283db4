// The golden forms' table (golden_forms.h): opcode x type x modifiers, each with the engine's
// evaluation through alu.h (or, for the plain integer forms the interpreter computes inline,
// the same one-line arithmetic). Families group forms a generator can emit as one kernel:
// same operand types, one instruction per form. Append only: a form's index is its id.
#include "emu/golden_forms.h"

#include <string_view>
#include <utility>

#include "emu/alu.h"

namespace ptxforge::emu {
namespace {

using namespace alu;  // NOLINT: the table reads as PTX
using GT = GoldenType;
using In = std::span<const uint64_t>;

constexpr std::pair<Round, std::string_view> kRounds[] = {
    {Round::rn, ".rn"}, {Round::rz, ".rz"}, {Round::rm, ".rm"}, {Round::rp, ".rp"}};

uint32_t u32(uint64_t v) { return static_cast<uint32_t>(v); }
uint16_t u16(uint64_t v) { return static_cast<uint16_t>(v); }
int32_t s32(uint64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); }
int64_t s64(uint64_t v) { return static_cast<int64_t>(v); }
uint64_t w32(int32_t v) { return static_cast<uint32_t>(v); }

struct Table {
  std::vector<GoldenForm> forms;
  void add(std::string family, std::string ptx, GT result, std::vector<GT> inputs,
           std::function<uint64_t(In)> eval, GoldenCheck check = GoldenCheck::exact, double bound = 0) {
    forms.push_back(GoldenForm{std::move(family), std::move(ptx), result, std::move(inputs), check, bound,
                               std::move(eval)});
  }
};

std::string mods(std::string_view rnd, bool ftz, bool sat) {
  std::string s(rnd);
  if (ftz) s += ".ftz";
  if (sat) s += ".sat";
  return s;
}

void float_forms(Table& t) {
  for (auto [r, rn] : kRounds) {
    for (bool ftz : {false, true}) {
      for (bool sat : {false, true}) {
        const FMode m{r, ftz, sat};
        const std::string md = mods(rn, ftz, sat);
        t.add("arith.f32", "add" + md + ".f32 %d, %a, %b", GT::f32, {GT::f32, GT::f32},
              [m](In x) { return add_f32(u32(x[0]), u32(x[1]), m); });
        t.add("arith.f32", "sub" + md + ".f32 %d, %a, %b", GT::f32, {GT::f32, GT::f32},
              [m](In x) { return sub_f32(u32(x[0]), u32(x[1]), m); });
        t.add("arith.f32", "mul" + md + ".f32 %d, %a, %b", GT::f32, {GT::f32, GT::f32},
              [m](In x) { return mul_f32(u32(x[0]), u32(x[1]), m); });
        t.add("fma.f32", "fma" + md + ".f32 %d, %a, %b, %c", GT::f32, {GT::f32, GT::f32, GT::f32},
              [m](In x) { return fma_f32(u32(x[0]), u32(x[1]), u32(x[2]), m); });
      }
      const FMode m{r, ftz, false};
      const std::string md = mods(rn, ftz, false);
      t.add("div.f32", "div" + md + ".f32 %d, %a, %b", GT::f32, {GT::f32, GT::f32},
            [m](In x) { return div_f32(u32(x[0]), u32(x[1]), m); });
      t.add("unary.f32", "sqrt" + md + ".f32 %d, %a", GT::f32, {GT::f32},
            [m](In x) { return sqrt_f32(u32(x[0]), m); });
      t.add("unary.f32", "rcp" + md + ".f32 %d, %a", GT::f32, {GT::f32},
            [m](In x) { return rcp_f32(u32(x[0]), m); });
    }
    const std::string s(rn);
    t.add("arith.f64", "add" + s + ".f64 %d, %a, %b", GT::f64, {GT::f64, GT::f64},
          [r](In x) { return add_f64(x[0], x[1], r); });
    t.add("arith.f64", "sub" + s + ".f64 %d, %a, %b", GT::f64, {GT::f64, GT::f64},
          [r](In x) { return sub_f64(x[0], x[1], r); });
    t.add("arith.f64", "mul" + s + ".f64 %d, %a, %b", GT::f64, {GT::f64, GT::f64},
          [r](In x) { return mul_f64(x[0], x[1], r); });
    t.add("arith.f64", "div" + s + ".f64 %d, %a, %b", GT::f64, {GT::f64, GT::f64},
          [r](In x) { return div_f64(x[0], x[1], r); });
    t.add("fma.f64", "fma" + s + ".f64 %d, %a, %b, %c", GT::f64, {GT::f64, GT::f64, GT::f64},
          [r](In x) { return fma_f64(x[0], x[1], x[2], r); });
    t.add("unary.f64", "sqrt" + s + ".f64 %d, %a", GT::f64, {GT::f64}, [r](In x) { return sqrt_f64(x[0], r); });
    t.add("unary.f64", "rcp" + s + ".f64 %d, %a", GT::f64, {GT::f64}, [r](In x) { return rcp_f64(x[0], r); });
  }
  for (bool ftz : {false, true}) {
    for (bool nan : {false, true}) {
      const std::string md = std::string(ftz ? ".ftz" : "") + (nan ? ".NaN" : "");
      t.add("minmax.f32", "min" + md + ".f32 %d, %a, %b", GT::f32, {GT::f32, GT::f32},
            [ftz, nan](In x) { return min_f32(u32(x[0]), u32(x[1]), ftz, nan); });
      t.add("minmax.f32", "max" + md + ".f32 %d, %a, %b", GT::f32, {GT::f32, GT::f32},
            [ftz, nan](In x) { return max_f32(u32(x[0]), u32(x[1]), ftz, nan); });
    }
    const std::string f = ftz ? ".ftz" : "";
    t.add("unary.f32", "abs" + f + ".f32 %d, %a", GT::f32, {GT::f32}, [ftz](In x) { return abs_f32(u32(x[0]), ftz); });
    t.add("unary.f32", "neg" + f + ".f32 %d, %a", GT::f32, {GT::f32}, [ftz](In x) { return neg_f32(u32(x[0]), ftz); });
  }
  t.add("minmax.f64", "min.f64 %d, %a, %b", GT::f64, {GT::f64, GT::f64}, [](In x) { return min_f64(x[0], x[1], false); });
  t.add("minmax.f64", "max.f64 %d, %a, %b", GT::f64, {GT::f64, GT::f64}, [](In x) { return max_f64(x[0], x[1], false); });
}

void compare_forms(Table& t) {
  constexpr std::pair<Cmp, std::string_view> kCmps[] = {
      {Cmp::eq, "eq"},   {Cmp::ne, "ne"},   {Cmp::lt, "lt"},   {Cmp::le, "le"},   {Cmp::gt, "gt"},
      {Cmp::ge, "ge"},   {Cmp::equ, "equ"}, {Cmp::neu, "neu"}, {Cmp::ltu, "ltu"}, {Cmp::leu, "leu"},
      {Cmp::gtu, "gtu"}, {Cmp::geu, "geu"}, {Cmp::num, "num"}, {Cmp::nan, "nan"}};
  for (auto [c, name] : kCmps) {
    const std::string n(name);
    t.add("setp.f32", "setp." + n + ".f32 %d, %a, %b", GT::pred, {GT::f32, GT::f32},
          [c](In x) { return uint64_t{cmp_f32(u32(x[0]), u32(x[1]), c, false)}; });
    t.add("setp.f64", "setp." + n + ".f64 %d, %a, %b", GT::pred, {GT::f64, GT::f64},
          [c](In x) { return uint64_t{cmp_f64(x[0], x[1], c)}; });
  }
  t.add("setp.f32", "setp.lt.ftz.f32 %d, %a, %b", GT::pred, {GT::f32, GT::f32},
        [](In x) { return uint64_t{cmp_f32(u32(x[0]), u32(x[1]), Cmp::lt, true)}; });
  t.add("setp.f32", "setp.eq.ftz.f32 %d, %a, %b", GT::pred, {GT::f32, GT::f32},
        [](In x) { return uint64_t{cmp_f32(u32(x[0]), u32(x[1]), Cmp::eq, true)}; });
  constexpr std::pair<Cmp, std::string_view> kInt[] = {{Cmp::lt, "lt"}, {Cmp::le, "le"}, {Cmp::lo, "lo"}, {Cmp::hs, "hs"}};
  for (auto [c, name] : kInt) {
    const std::string n(name);
    t.add("setp.int", "setp." + n + ".s32 %d, %a, %b", GT::pred, {GT::s32, GT::s32},
          [c](In x) { return uint64_t{cmp_int(x[0], x[1], c, 32, true)}; });
    t.add("setp.int", "setp." + n + ".u64 %d, %a, %b", GT::pred, {GT::u64, GT::u64},
          [c](In x) { return uint64_t{cmp_int(x[0], x[1], c, 64, false)}; });
  }
}

void integer_forms(Table& t) {
  t.add("int.arith", "add.s32 %d, %a, %b", GT::s32, {GT::s32, GT::s32}, [](In x) { return uint64_t{u32(x[0] + x[1])}; });
  t.add("int.arith", "sub.s64 %d, %a, %b", GT::s64, {GT::s64, GT::s64}, [](In x) { return x[0] - x[1]; });
  t.add("int.arith", "add.sat.s32 %d, %a, %b", GT::s32, {GT::s32, GT::s32}, [](In x) { return w32(add_sat_s32(s32(x[0]), s32(x[1]))); });
  t.add("int.arith", "sub.sat.s32 %d, %a, %b", GT::s32, {GT::s32, GT::s32}, [](In x) { return w32(sub_sat_s32(s32(x[0]), s32(x[1]))); });
  t.add("int.arith", "mul.lo.s32 %d, %a, %b", GT::s32, {GT::s32, GT::s32}, [](In x) { return uint64_t{u32(x[0] * x[1])}; });
  t.add("int.arith", "mul.hi.u32 %d, %a, %b", GT::u32, {GT::u32, GT::u32}, [](In x) { return uint64_t{mul_hi_u32(u32(x[0]), u32(x[1]))}; });
  t.add("int.arith", "mul.hi.s32 %d, %a, %b", GT::s32, {GT::s32, GT::s32}, [](In x) { return w32(mul_hi_s32(s32(x[0]), s32(x[1]))); });
  t.add("int.arith", "mul.hi.u64 %d, %a, %b", GT::u64, {GT::u64, GT::u64}, [](In x) { return mul_hi_u64(x[0], x[1]); });
  t.add("int.arith", "mul.hi.s64 %d, %a, %b", GT::s64, {GT::s64, GT::s64},
        [](In x) { return static_cast<uint64_t>(mul_hi_s64(s64(x[0]), s64(x[1]))); });
  t.add("int.arith", "mul.wide.s32 %d, %a, %b", GT::s64, {GT::s32, GT::s32},
        [](In x) { return static_cast<uint64_t>(int64_t{s32(x[0])} * s32(x[1])); });
  t.add("int.arith", "mul.wide.u32 %d, %a, %b", GT::u64, {GT::u32, GT::u32},
        [](In x) { return uint64_t{u32(x[0])} * u32(x[1]); });
  t.add("int.mad", "mad.lo.s32 %d, %a, %b, %c", GT::s32, {GT::s32, GT::s32, GT::s32},
        [](In x) { return uint64_t{u32(x[0] * x[1] + x[2])}; });
  t.add("int.mad", "mad.hi.u32 %d, %a, %b, %c", GT::u32, {GT::u32, GT::u32, GT::u32},
        [](In x) { return uint64_t{u32(mul_hi_u32(u32(x[0]), u32(x[1])) + x[2])}; });
  struct Shift { const char* ptx; GT ty; int bits; int kind; };  // kind: 0 shl, 1 shr.u, 2 shr.s
  const Shift shifts[] = {{"shl.b16", GT::b16, 16, 0}, {"shr.u16", GT::u16, 16, 1}, {"shr.s16", GT::s16, 16, 2},
                          {"shl.b32", GT::b32, 32, 0}, {"shr.u32", GT::u32, 32, 1}, {"shr.s32", GT::s32, 32, 2},
                          {"shl.b64", GT::b64, 64, 0}, {"shr.u64", GT::u64, 64, 1}, {"shr.s64", GT::s64, 64, 2}};
  for (const Shift& s : shifts) {
    const int bits = s.bits, kind = s.kind;
    t.add("int.shift", std::string(s.ptx) + " %d, %a, %b", s.ty, {s.ty, GT::u32}, [bits, kind](In x) {
      const uint32_t n = u32(x[1]);
      return kind == 0 ? shl(x[0], n, bits) : kind == 1 ? shr_u(x[0], n, bits) : shr_s(x[0], n, bits);
    });
  }
  for (bool wrap : {true, false}) {
    const std::string m = wrap ? ".wrap" : ".clamp";
    t.add("int.shf", "shf.l" + m + ".b32 %d, %a, %b, %c", GT::b32, {GT::b32, GT::b32, GT::u32},
          [wrap](In x) { return uint64_t{shf_l(u32(x[0]), u32(x[1]), u32(x[2]), wrap)}; });
    t.add("int.shf", "shf.r" + m + ".b32 %d, %a, %b, %c", GT::b32, {GT::b32, GT::b32, GT::u32},
          [wrap](In x) { return uint64_t{shf_r(u32(x[0]), u32(x[1]), u32(x[2]), wrap)}; });
  }
  constexpr std::string_view kPrmt[] = {"", ".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16"};
  for (uint8_t mode = 0; mode < 7; ++mode) {
    t.add("int.prmt", "prmt.b32" + std::string(kPrmt[mode]) + " %d, %a, %b, %c", GT::b32, {GT::b32, GT::b32, GT::b32},
          [mode](In x) { return uint64_t{prmt(u32(x[0]), u32(x[1]), u32(x[2]), mode)}; });
  }
  for (int bits : {32, 64}) {
    const std::string w = std::to_string(bits);
    const GT ut = bits == 32 ? GT::u32 : GT::u64, st = bits == 32 ? GT::s32 : GT::s64, bt = bits == 32 ? GT::b32 : GT::b64;
    t.add("int.bfe", "bfe.u" + w + " %d, %a, %b, %c", ut, {ut, GT::u32, GT::u32},
          [bits](In x) { return bfe_u(x[0], u32(x[1]), u32(x[2]), bits); });
    t.add("int.bfe", "bfe.s" + w + " %d, %a, %b, %c", st, {st, GT::u32, GT::u32},
          [bits](In x) { return bfe_s(x[0], u32(x[1]), u32(x[2]), bits); });
    t.add("int.bfi", "bfi.b" + w + " %d, %a, %b, %c, %e", bt, {bt, bt, GT::u32, GT::u32},
          [bits](In x) { return bfi(x[0], x[1], u32(x[2]), u32(x[3]), bits); });
    t.add("int.bitcount", "bfind.u" + w + " %d, %a", GT::u32, {ut}, [bits](In x) { return uint64_t{bfind(x[0], bits, false, false)}; });
    t.add("int.bitcount", "bfind.s" + w + " %d, %a", GT::u32, {st}, [bits](In x) { return uint64_t{bfind(x[0], bits, true, false)}; });
    t.add("int.bitcount", "bfind.shiftamt.u" + w + " %d, %a", GT::u32, {ut},
          [bits](In x) { return uint64_t{bfind(x[0], bits, false, true)}; });
    t.add("int.bitcount", "brev.b" + w + " %d, %a", bt, {bt}, [bits](In x) { return brev(x[0], bits); });
    t.add("int.bitcount", "popc.b" + w + " %d, %a", GT::u32, {bt}, [bits](In x) { return uint64_t{popc(x[0], bits)}; });
    t.add("int.bitcount", "clz.b" + w + " %d, %a", GT::u32, {bt}, [bits](In x) { return uint64_t{clz(x[0], bits)}; });
  }
  for (uint8_t lut : {uint8_t{0x96}, uint8_t{0xe8}, uint8_t{0x3c}, uint8_t{0xf8}}) {
    t.add("int.lop3", "lop3.b32 %d, %a, %b, %c, " + std::to_string(lut), GT::b32, {GT::b32, GT::b32, GT::b32},
          [lut](In x) { return uint64_t{lop3(u32(x[0]), u32(x[1]), u32(x[2]), lut)}; });
  }
  for (bool as : {false, true}) {
    for (bool bs : {false, true}) {
      const std::string ty = std::string(as ? ".s32" : ".u32") + (bs ? ".s32" : ".u32");
      const GT dt = (as || bs) ? GT::s32 : GT::u32;
      t.add("int.dp", "dp4a" + ty + " %d, %a, %b, %c", dt, {GT::b32, GT::b32, dt},
            [as, bs](In x) { return w32(dp4a(u32(x[0]), u32(x[1]), s32(x[2]), as, bs)); });
      for (bool hi : {false, true}) {
        t.add("int.dp", std::string("dp2a") + (hi ? ".hi" : ".lo") + ty + " %d, %a, %b, %c", dt, {GT::b32, GT::b32, dt},
              [as, bs, hi](In x) { return w32(dp2a(u32(x[0]), u32(x[1]), s32(x[2]), as, bs, hi)); });
      }
    }
  }
}

void half_forms(Table& t) {
  for (Half h : {Half::f16, Half::bf16}) {
    const std::string ty = h == Half::f16 ? ".f16" : ".bf16";
    const GT gt = h == Half::f16 ? GT::f16 : GT::bf16;
    const std::string fam = "arith" + ty;
    for (bool ftz : {false, true}) {
      if (ftz && h == Half::bf16) continue;  // bf16 arithmetic has no .ftz
      const FMode m{Round::rn, ftz, false};
      const std::string md = mods(".rn", ftz, false);
      t.add(fam, "add" + md + ty + " %d, %a, %b", gt, {gt, gt}, [h, m](In x) { return uint64_t{add_h(u16(x[0]), u16(x[1]), h, m)}; });
      t.add(fam, "sub" + md + ty + " %d, %a, %b", gt, {gt, gt}, [h, m](In x) { return uint64_t{sub_h(u16(x[0]), u16(x[1]), h, m)}; });
      t.add(fam, "mul" + md + ty + " %d, %a, %b", gt, {gt, gt}, [h, m](In x) { return uint64_t{mul_h(u16(x[0]), u16(x[1]), h, m)}; });
      t.add("fma" + ty, "fma" + md + ty + " %d, %a, %b, %c", gt, {gt, gt, gt},
            [h, m](In x) { return uint64_t{fma_h(u16(x[0]), u16(x[1]), u16(x[2]), h, m, false)}; });
    }
    if (h == Half::f16) {
      const FMode m{Round::rn, false, true};
      t.add(fam, "add.rn.sat.f16 %d, %a, %b", gt, {gt, gt}, [h, m](In x) { return uint64_t{add_h(u16(x[0]), u16(x[1]), h, m)}; });
      t.add("fma" + ty, "fma.rn.sat.f16 %d, %a, %b, %c", gt, {gt, gt, gt},
            [h, m](In x) { return uint64_t{fma_h(u16(x[0]), u16(x[1]), u16(x[2]), h, m, false)}; });
    }
    t.add("fma" + ty, "fma.rn.relu" + ty + " %d, %a, %b, %c", gt, {gt, gt, gt},
          [h](In x) { return uint64_t{fma_h(u16(x[0]), u16(x[1]), u16(x[2]), h, FMode{}, true)}; });
    for (bool nan : {false, true}) {
      const std::string md = nan ? ".NaN" : "";
      t.add("minmax" + ty, "min" + md + ty + " %d, %a, %b", gt, {gt, gt}, [h, nan](In x) { return uint64_t{min_h(u16(x[0]), u16(x[1]), h, nan)}; });
      t.add("minmax" + ty, "max" + md + ty + " %d, %a, %b", gt, {gt, gt}, [h, nan](In x) { return uint64_t{max_h(u16(x[0]), u16(x[1]), h, nan)}; });
    }
    t.add("setp" + ty, "setp.ltu" + ty + " %d, %a, %b", GT::pred, {gt, gt}, [h](In x) { return uint64_t{cmp_h(u16(x[0]), u16(x[1]), h, Cmp::ltu, false)}; });
    t.add("setp" + ty, "setp.ge" + ty + " %d, %a, %b", GT::pred, {gt, gt}, [h](In x) { return uint64_t{cmp_h(u16(x[0]), u16(x[1]), h, Cmp::ge, false)}; });
  }
}

GT gt_of(Ty t) {
  switch (t) {
    case Ty::u8: return GT::u8;
    case Ty::u16: return GT::u16;
    case Ty::u32: return GT::u32;
    case Ty::u64: return GT::u64;
    case Ty::s8: return GT::s8;
    case Ty::s16: return GT::s16;
    case Ty::s32: return GT::s32;
    case Ty::s64: return GT::s64;
    case Ty::f16: return GT::f16;
    case Ty::bf16: return GT::bf16;
    case Ty::f64: return GT::f64;
    case Ty::tf32: return GT::b32;
    default: return GT::f32;
  }
}

void cvt_forms(Table& t) {
  struct C { const char* ptx; Ty from, to; CvtMode m; };
  auto mode = [](Round r, IntRound ir = IntRound::none) { CvtMode m; m.rnd = r; m.irnd = ir; return m; };
  CvtMode sat; sat.sat = true;
  CvtMode ftz_rzi = mode(Round::rn, IntRound::rzi); ftz_rzi.ftz = true;
  CvtMode rna; rna.rna = true;
  CvtMode rna_sf = rna; rna_sf.satfinite = true;
  CvtMode f32sat; f32sat.sat = true;
  CvtMode relu_rn; relu_rn.relu = true;
  CvtMode sf_rn; sf_rn.satfinite = true;
  const C cs[] = {
      {"cvt.rni.s32.f32", Ty::f32, Ty::s32, mode(Round::rn, IntRound::rni)},
      {"cvt.rzi.s32.f32", Ty::f32, Ty::s32, mode(Round::rn, IntRound::rzi)},
      {"cvt.rmi.s32.f32", Ty::f32, Ty::s32, mode(Round::rn, IntRound::rmi)},
      {"cvt.rpi.s32.f32", Ty::f32, Ty::s32, mode(Round::rn, IntRound::rpi)},
      {"cvt.rzi.ftz.s32.f32", Ty::f32, Ty::s32, ftz_rzi},
      {"cvt.rzi.u32.f32", Ty::f32, Ty::u32, mode(Round::rn, IntRound::rzi)},
      {"cvt.rni.u8.f32", Ty::f32, Ty::u8, mode(Round::rn, IntRound::rni)},
      {"cvt.rni.s16.f32", Ty::f32, Ty::s16, mode(Round::rn, IntRound::rni)},
      {"cvt.rzi.s64.f32", Ty::f32, Ty::s64, mode(Round::rn, IntRound::rzi)},
      {"cvt.rni.s32.f64", Ty::f64, Ty::s32, mode(Round::rn, IntRound::rni)},
      {"cvt.rzi.u64.f64", Ty::f64, Ty::u64, mode(Round::rn, IntRound::rzi)},
      {"cvt.rni.s32.f16", Ty::f16, Ty::s32, mode(Round::rn, IntRound::rni)},
      {"cvt.rn.f32.s32", Ty::s32, Ty::f32, mode(Round::rn)},
      {"cvt.rz.f32.u32", Ty::u32, Ty::f32, mode(Round::rz)},
      {"cvt.rm.f32.s64", Ty::s64, Ty::f32, mode(Round::rm)},
      {"cvt.rp.f64.u64", Ty::u64, Ty::f64, mode(Round::rp)},
      {"cvt.rn.f16.s32", Ty::s32, Ty::f16, mode(Round::rn)},
      {"cvt.f32.f16", Ty::f16, Ty::f32, mode(Round::rn)},
      {"cvt.f32.bf16", Ty::bf16, Ty::f32, mode(Round::rn)},
      {"cvt.f64.f32", Ty::f32, Ty::f64, mode(Round::rn)},
      {"cvt.rni.f32.f32", Ty::f32, Ty::f32, mode(Round::rn, IntRound::rni)},
      {"cvt.rmi.f64.f64", Ty::f64, Ty::f64, mode(Round::rn, IntRound::rmi)},
      {"cvt.sat.f32.f32", Ty::f32, Ty::f32, f32sat},
      {"cvt.rn.tf32.f32", Ty::f32, Ty::tf32, mode(Round::rn)},
      {"cvt.rz.tf32.f32", Ty::f32, Ty::tf32, mode(Round::rz)},
      {"cvt.rna.tf32.f32", Ty::f32, Ty::tf32, rna},
      {"cvt.rna.satfinite.tf32.f32", Ty::f32, Ty::tf32, rna_sf},
      {"cvt.rn.relu.f16.f32", Ty::f32, Ty::f16, relu_rn},
      {"cvt.rn.satfinite.f16.f32", Ty::f32, Ty::f16, sf_rn},
      {"cvt.sat.s8.s32", Ty::s32, Ty::s8, sat},
      {"cvt.sat.u16.s32", Ty::s32, Ty::u16, sat},
      {"cvt.sat.s32.u32", Ty::u32, Ty::s32, sat},
      {"cvt.sat.u32.s64", Ty::s64, Ty::u32, sat},
      {"cvt.s32.s8", Ty::s8, Ty::s32, CvtMode{}},
      {"cvt.u32.s16", Ty::s16, Ty::u32, CvtMode{}},
      {"cvt.s64.s32", Ty::s32, Ty::s64, CvtMode{}},
      {"cvt.u8.u32", Ty::u32, Ty::u8, CvtMode{}},
  };
  for (const C& c : cs) {
    const Ty from = c.from, to = c.to;
    const CvtMode m = c.m;
    t.add("cvt", std::string(c.ptx) + " %d, %a", gt_of(to), {gt_of(from)}, [from, to, m](In x) { return cvt(x[0], from, to, m); });
  }
  for (auto [r, rn] : kRounds) {
    const CvtMode m = mode(r);
    const std::string s(rn);
    t.add("cvt", "cvt" + s + ".f16.f32 %d, %a", GT::f16, {GT::f32}, [m](In x) { return cvt(x[0], Ty::f32, Ty::f16, m); });
    t.add("cvt", "cvt" + s + ".bf16.f32 %d, %a", GT::bf16, {GT::f32}, [m](In x) { return cvt(x[0], Ty::f32, Ty::bf16, m); });
    t.add("cvt", "cvt" + s + ".f32.f64 %d, %a", GT::f32, {GT::f64}, [m](In x) { return cvt(x[0], Ty::f64, Ty::f32, m); });
  }
  // The packed narrow formats: two f32 in, `a` to the upper byte (PTX ISA cvt).
  struct P { const char* ptx; Ty to; bool relu; int width; };
  const P ps[] = {{"cvt.rn.satfinite.e4m3x2.f32", Ty::e4m3, false, 8},
                  {"cvt.rn.satfinite.relu.e4m3x2.f32", Ty::e4m3, true, 8},
                  {"cvt.rn.satfinite.e5m2x2.f32", Ty::e5m2, false, 8},
                  {"cvt.rn.satfinite.relu.e5m2x2.f32", Ty::e5m2, true, 8},
                  {"cvt.rn.satfinite.e2m3x2.f32", Ty::e2m3, false, 8},
                  {"cvt.rn.satfinite.e3m2x2.f32", Ty::e3m2, false, 8},
                  {"cvt.rn.satfinite.e2m1x2.f32", Ty::e2m1, false, 4}};
  for (const P& p : ps) {
    CvtMode m;
    m.satfinite = true;
    m.relu = p.relu;
    const Ty to = p.to;
    const int w = p.width;
    const GT out = w == 8 ? GT::b16 : GT::u8;
    t.add("cvt.pack", std::string(p.ptx) + " %d, %a, %b", out, {GT::f32, GT::f32}, [to, m, w](In x) {
      return (cvt(x[0], Ty::f32, to, m) << w) | cvt(x[1], Ty::f32, to, m);
    });
  }
  for (Round r : {Round::rz, Round::rp}) {
    CvtMode m;
    m.rnd = r;
    m.satfinite = true;
    t.add("cvt.pack", std::string("cvt") + (r == Round::rz ? ".rz" : ".rp") + ".satfinite.ue8m0x2.f32 %d, %a, %b", GT::b16,
          {GT::f32, GT::f32}, [m](In x) { return (cvt(x[0], Ty::f32, Ty::ue8m0, m) << 8) | cvt(x[1], Ty::f32, Ty::ue8m0, m); });
  }
  t.add("cvt.unpack", "cvt.rn.f16x2.e4m3x2 %d, %a", GT::b32, {GT::b16}, [](In x) {
    return (cvt((x[0] >> 8) & 0xff, Ty::e4m3, Ty::f16, CvtMode{}) << 16) | cvt(x[0] & 0xff, Ty::e4m3, Ty::f16, CvtMode{});
  });
  t.add("cvt.unpack", "cvt.rn.f16x2.e5m2x2 %d, %a", GT::b32, {GT::b16}, [](In x) {
    return (cvt((x[0] >> 8) & 0xff, Ty::e5m2, Ty::f16, CvtMode{}) << 16) | cvt(x[0] & 0xff, Ty::e5m2, Ty::f16, CvtMode{});
  });
  t.add("cvt.unpack", "cvt.rn.bf16x2.ue8m0x2 %d, %a", GT::b32, {GT::b16}, [](In x) {
    return (cvt((x[0] >> 8) & 0xff, Ty::ue8m0, Ty::bf16, CvtMode{}) << 16) | cvt(x[0] & 0xff, Ty::ue8m0, Ty::bf16, CvtMode{});
  });
}

void approx_forms(Table& t) {
  using Fn = uint32_t (*)(uint32_t, bool);
  struct A { const char* op; Fn fn; GoldenCheck check; double bound; };
  // Bounds from the PTX ISA (docs/emu.md section 5); sin/cos: 2^-20.5 absolute on [-2pi, 2pi].
  const A as[] = {{"ex2.approx", ex2_approx_f32, GoldenCheck::ulp, 2},
                  {"lg2.approx", lg2_approx_f32, GoldenCheck::abs_or_rel, -22},
                  {"sin.approx", sin_approx_f32, GoldenCheck::abs, -20.5},
                  {"cos.approx", cos_approx_f32, GoldenCheck::abs, -20.5},
                  {"rsqrt.approx", rsqrt_approx_f32, GoldenCheck::rel, -22.9},
                  {"sqrt.approx", sqrt_approx_f32, GoldenCheck::rel, -23},
                  {"rcp.approx", rcp_approx_f32, GoldenCheck::ulp, 1}};
  for (const A& a : as) {
    for (bool ftz : {false, true}) {
      const Fn fn = a.fn;
      t.add("approx.f32", std::string(a.op) + (ftz ? ".ftz" : "") + ".f32 %d, %a", GT::f32, {GT::f32},
            [fn, ftz](In x) { return uint64_t{fn(u32(x[0]), ftz)}; }, a.check, a.bound);
    }
  }
  t.add("approx.f32", "tanh.approx.f32 %d, %a", GT::f32, {GT::f32}, [](In x) { return uint64_t{tanh_approx_f32(u32(x[0]))}; },
        GoldenCheck::rel, -11);
  for (bool ftz : {false, true}) {
    const std::string f = ftz ? ".ftz" : "";
    t.add("approx.div", "div.approx" + f + ".f32 %d, %a, %b", GT::f32, {GT::f32, GT::f32},
          [ftz](In x) { return uint64_t{div_approx_f32(u32(x[0]), u32(x[1]), ftz)}; }, GoldenCheck::ulp, 2);
    t.add("approx.div", "div.full" + f + ".f32 %d, %a, %b", GT::f32, {GT::f32, GT::f32},
          [ftz](In x) { return uint64_t{div_full_f32(u32(x[0]), u32(x[1]), ftz)}; }, GoldenCheck::ulp, 2);
  }
  t.add("approx.f64", "rsqrt.approx.f64 %d, %a", GT::f64, {GT::f64}, [](In x) { return rsqrt_approx_f64(x[0]); },
        GoldenCheck::rel, -22.9);
  t.add("approx.f64", "rcp.approx.ftz.f64 %d, %a", GT::f64, {GT::f64}, [](In x) { return rcp_approx_ftz_f64(x[0]); },
        GoldenCheck::rel, -22.9);
  t.add("approx.h", "ex2.approx.f16 %d, %a", GT::f16, {GT::f16}, [](In x) { return uint64_t{ex2_approx_h(u16(x[0]), Half::f16)}; },
        GoldenCheck::rel, -9.9);
  t.add("approx.h", "ex2.approx.ftz.bf16 %d, %a", GT::bf16, {GT::bf16},
        [](In x) { return uint64_t{ex2_approx_h(u16(x[0]), Half::bf16)}; }, GoldenCheck::rel, -7);
  t.add("approx.h", "tanh.approx.f16 %d, %a", GT::f16, {GT::f16}, [](In x) { return uint64_t{tanh_approx_h(u16(x[0]), Half::f16)}; },
        GoldenCheck::abs, -10.987);
  t.add("approx.h", "tanh.approx.bf16 %d, %a", GT::bf16, {GT::bf16},
        [](In x) { return uint64_t{tanh_approx_h(u16(x[0]), Half::bf16)}; }, GoldenCheck::abs, -8);
}

}  // namespace

const std::vector<GoldenForm>& golden_forms() {
  static const std::vector<GoldenForm> forms = [] {
    Table t;
    float_forms(t);
    compare_forms(t);
    integer_forms(t);
    half_forms(t);
    cvt_forms(t);
    approx_forms(t);
    return std::move(t.forms);
  }();
  return forms;
}

int golden_type_bits(GoldenType t) {
  switch (t) {
    case GoldenType::pred: return 1;
    case GoldenType::u8: case GoldenType::s8: return 8;
    case GoldenType::b16: case GoldenType::u16: case GoldenType::s16: case GoldenType::f16: case GoldenType::bf16: return 16;
    case GoldenType::b64: case GoldenType::u64: case GoldenType::s64: case GoldenType::f64: return 64;
    default: return 32;
  }
}

}  // namespace ptxforge::emu
