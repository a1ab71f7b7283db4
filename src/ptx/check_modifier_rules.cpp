// Modifier rules that ptxas enforces beyond "the family knows this modifier": modifiers that
// one form requires (a rounding mode on cvt int->float, .approx on ex2, a compare op on setp,
// .sync/.aligned on the warp-matrix instructions) and combinations it refuses (.rn on an
// integer add, .lo on a float mul, .ftz on .f64, an atomic operation with the wrong type).
// Each rule was read in the PTX ISA manual and confirmed against ptxas 13.0 by the generated
// agreement test (rules_modifiers_test.cpp), which also proves no rule fires on what ptxas
// accepts. Only the types and modifiers that test covers are judged; anything else is left
// to ptxas, since a false alarm costs more than a miss.
//   missing-modifier   a modifier this form needs is absent
//   illegal-modifier   a modifier the family knows, but not in this combination
#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "ptx/check_context.h"

namespace ptxforge::ptx {

namespace {

constexpr std::array<std::string_view, 4> kFloatRounding = {".rn", ".rz", ".rm", ".rp"};
constexpr std::array<std::string_view, 4> kIntRounding = {".rni", ".rzi", ".rmi", ".rpi"};

template <size_t N>
bool contains(const std::array<std::string_view, N>& a, std::string_view s) {
  for (auto x : a)
    if (x == s) return true;
  return false;
}

// The rounding modifier written on the instruction ("" if none); ".rna" counts too.
std::string_view rounding_of(const Instruction& ins) {
  for (auto m : ins.mods)
    if (contains(kFloatRounding, m) || contains(kIntRounding, m) || m == ".rna") return m;
  return {};
}

// Which rules apply to a family, computed once per table row: checking an instruction then
// costs one array lookup for the families no rule concerns (most of them).
enum RuleBits : uint16_t {
  kCvt = 1 << 0,
  kFloatArith = 1 << 1,   // add sub mul mad fma div sqrt rcp on .f32/.f64
  kApproxOnly = 1 << 2,   // rsqrt ex2 lg2 sin cos tanh
  kIntArith = 1 << 3,     // add sub mul mad div rem on integers
  kShuffle = 1 << 4,      // shfl, shfl.sync: a mode
  kCompare = 1 << 5,      // setp, set: a comparison, of the type's kind
  kSyncAligned = 1 << 6,  // mma ldmatrix stmatrix movmatrix wgmma.fence/commit_group/wait_group
  kSyncForm = 1 << 7,     // shfl, vote: the .sync forms on sm_70+
  kAtomic = 1 << 8,       // atom, red
  kClusterBarrier = 1 << 9,  // barrier.cluster: arrive releases, wait acquires
};

uint16_t rule_bits(std::string_view fam) {
  uint16_t b = 0;
  auto in = [&](std::initializer_list<std::string_view> names) {
    for (auto n : names)
      if (n == fam) return true;
    return false;
  };
  if (fam == "cvt") b |= kCvt;
  if (in({"add", "sub", "mul", "mad", "fma", "div", "sqrt", "rcp"})) b |= kFloatArith;
  if (in({"rsqrt", "ex2", "lg2", "sin", "cos", "tanh"})) b |= kApproxOnly;
  if (in({"add", "sub", "mul", "mad", "div", "rem"})) b |= kIntArith;
  if (in({"shfl", "shfl.sync"})) b |= kShuffle;
  if (in({"setp", "set"})) b |= kCompare;
  if (in({"mma", "ldmatrix", "stmatrix", "movmatrix", "wgmma.fence", "wgmma.commit_group", "wgmma.wait_group"}))
    b |= kSyncAligned;
  if (in({"shfl", "vote"})) b |= kSyncForm;
  if (in({"atom", "red"})) b |= kAtomic;
  if (fam == "barrier.cluster") b |= kClusterBarrier;
  return b;
}

uint16_t rules_of_family(const IsaFamily& f) {
  static const std::vector<uint16_t> table = [] {
    std::vector<uint16_t> t;
    for (auto& fam : isa_families()) t.push_back(rule_bits(fam.name));
    return t;
  }();
  return table[static_cast<size_t>(&f - isa_families().data())];
}

// The scalar types the cvt rules were confirmed on.
bool is_plain_int(std::string_view t) {
  return t == ".u32" || t == ".s32" || t == ".u64" || t == ".s64" || t == ".u16" || t == ".s16" || t == ".u8" ||
         t == ".s8";
}
bool is_plain_float(std::string_view t) { return t == ".f16" || t == ".bf16" || t == ".f32" || t == ".f64"; }

Diagnostic& report(CheckContext& ctx, const Instruction& ins, std::string message, const char* id) {
  auto& d = ctx.diags.error(ins.loc, std::move(message), id);
  d.length = static_cast<uint32_t>(ins.full_opcode().size());
  return d;
}

std::string anchor_link(const Resolved& r) { return manual_link(r.family->anchor); }

// A fix-it that inserts `mod` right after the opcode word: cvt.s32.f32 -> cvt.rzi.s32.f32.
void insert_after_opcode(Diagnostic& d, const Instruction& ins, std::string_view mod) {
  SourceLoc at = ins.loc;
  at.col += static_cast<uint32_t>(ins.opcode.size());
  d.fixit = FixIt{at, 0, std::string(mod)};
}

// cvt: which rounding a conversion takes ("Rounding modifiers" table of the cvt section).
//   int->int: none; float->int: an integer rounding (.rni .rzi .rmi .rpi); int->float and
//   narrowing float->float: a float rounding (.rn .rz .rm .rp); widening float->float: none;
//   float->same float: none or an integer rounding (round to an integral value). ptxas also
//   takes an optional float rounding on f16<->bf16 and on bf16 -> f32/f64.
void check_cvt(CheckContext& ctx, const Instruction& ins, const Resolved& r) {
  std::string_view to = r.type, from = r.src_type;
  // Conversions to packed fp8/fp6/fp4 saturate by definition: ptxas requires .satfinite
  // ("'.satfinite' modifier required ... with destination type '.e4m3x2'", checked for each).
  static constexpr std::string_view kSaturating[] = {".e4m3x2", ".e5m2x2", ".e2m1x2", ".e2m3x2", ".e3m2x2",
                                                      ".e4m3x4", ".e5m2x4", ".e2m1x4", ".e2m3x4", ".e3m2x4"};
  if (std::find(std::begin(kSaturating), std::end(kSaturating), to) != std::end(kSaturating)) {
    if (!ins.has_mod(".satfinite")) {
      auto& d = report(ctx, ins, fmt::format("'{}': a conversion to {} needs .satfinite (out-of-range values become "
                                             "the largest finite value)", ins.full_opcode(), to),
                       "missing-modifier");
      d.hint = fmt::format("write cvt{}.satfinite{}{}", ins.has_mod(".rs") ? ".rs" : ".rn", to, from);
    }
    return;
  }
  bool int_to = is_plain_int(to), int_from = is_plain_int(from);
  bool float_to = is_plain_float(to), float_from = is_plain_float(from);
  if (!(int_to || float_to) || !(int_from || float_from)) return;
  auto op = [&ins] { return ins.full_opcode(); };  // built only for a finding
  if ((to == ".bf16" && (from == ".u8" || from == ".s8")) || (from == ".bf16" && (to == ".u8" || to == ".s8"))) {
    auto& d = report(ctx, ins, fmt::format("'{}': cvt has no conversion between {} and {}", op(), from, to),
                     "illegal-modifier");
    d.hint = "convert through a 16-bit integer (.u16 or .s16)";
    return;
  }
  if (ins.has_mod(".sat")) {
    // .sat clamps to the destination's range: refused where nothing can overflow, and on .bf16.
    bool bf16 = to == ".bf16" || from == ".bf16";
    int tb = type_bits(to), fb = type_bits(from);
    bool fits = int_to && int_from &&
                (type_kind(from) == 'u' ? (type_kind(to) == 'u' ? tb >= fb : tb > fb) : (type_kind(to) == 's' && tb >= fb));
    if (bf16 || fits) {
      auto& d = report(ctx, ins, fmt::format("'{}': .sat {}", op(), bf16 ? "does not apply to .bf16 conversions"
                                                                        : "has nothing to clamp: every source value fits"),
                       "illegal-modifier");
      d.hint = bf16 ? "drop '.sat' (use .satfinite where the conversion offers it)" : "drop '.sat'";
      return;
    }
  }
  std::string_view rnd = rounding_of(ins);
  enum class Want { none, int_rounding, float_rounding, none_or_int, none_or_float } want;
  if (int_to && int_from) want = Want::none;
  else if (float_from && int_to) want = Want::int_rounding;
  else if (int_from && float_to) want = Want::float_rounding;
  else if (to == from) want = Want::none_or_int;
  else if ((to == ".f16" && from == ".bf16") || (to == ".bf16" && from == ".f16") ||
           (from == ".bf16" && (to == ".f32" || to == ".f64")))
    want = Want::none_or_float;
  else if (type_bits(to) < type_bits(from)) want = Want::float_rounding;
  else want = Want::none;

  bool is_int_rnd = contains(kIntRounding, rnd), is_float_rnd = contains(kFloatRounding, rnd);
  std::string kinds = fmt::format("{} to {}", from, to);
  switch (want) {
    case Want::int_rounding:
      if (is_int_rnd) return;
      if (rnd.empty()) {
        auto& d = report(ctx, ins, fmt::format("'{}' converts a float to an integer and needs an integer rounding "
                                               "modifier", op()), "missing-modifier");
        d.hint = fmt::format("write cvt.rzi{}{} to truncate toward zero as C's cast does, or .rni to round to "
                             "nearest even", to, from);
        insert_after_opcode(d, ins, ".rzi");
      } else {
        auto& d = report(ctx, ins, fmt::format("'{}' rounds a float to an integer: '{}' is not an integer rounding "
                                               "modifier", op(), rnd), "illegal-modifier");
        d.hint = fmt::format("float-to-integer conversions take .rni, .rzi, .rmi or .rpi (e.g. cvt.rzi{}{})", to, from);
      }
      return;
    case Want::float_rounding:
      if (is_float_rnd) return;
      if (rnd.empty()) {
        auto& d = report(ctx, ins, fmt::format("'{}' ({}) can lose precision and needs a rounding modifier", op(), kinds),
                         "missing-modifier");
        d.hint = fmt::format("write cvt.rn{}{} (round to nearest even)", to, from);
        insert_after_opcode(d, ins, ".rn");
      } else {
        auto& d = report(ctx, ins, fmt::format("'{}' ({}) takes a floating-point rounding modifier, not '{}'", op(),
                                               kinds, rnd), "illegal-modifier");
        d.hint = fmt::format("use .rn, .rz, .rm or .rp (e.g. cvt.rn{}{})", to, from);
      }
      return;
    case Want::none:
      if (rnd.empty()) return;
      {
        auto& d = report(ctx, ins, fmt::format("'{}' ({}) is exact and takes no rounding modifier", op(), kinds),
                         "illegal-modifier");
        d.hint = fmt::format("drop '{}': cvt{}{}", rnd, to, from);
      }
      return;
    case Want::none_or_int:
      if (rnd.empty() || is_int_rnd) return;
      {
        auto& d = report(ctx, ins, fmt::format("'{}' converts {} to itself: only an integer rounding (.rni, .rzi, .rmi, "
                                               ".rpi) applies, not '{}'", op(), to, rnd), "illegal-modifier");
        d.hint = fmt::format("drop '{}', or use .rni/.rzi/.rmi/.rpi to round to an integral value", rnd);
      }
      return;
    case Want::none_or_float:
      if (rnd.empty() || is_float_rnd) return;
      {
        auto& d = report(ctx, ins, fmt::format("'{}' ({}) does not take '{}'", op(), kinds, rnd), "illegal-modifier");
        d.hint = fmt::format("drop '{}' (or use .rn)", rnd);
      }
      return;
  }
}

// add, sub, mul, mad, fma, div, sqrt, rcp and the .approx-only functions on .f32/.f64/.f32x2.
void check_float_arith(CheckContext& ctx, const Instruction& ins, const Resolved& r) {
  std::string_view fam = r.family->name, type = r.type;
  // Packed .f32x2 (add/sub/mul/fma, sm_100) follows the .f32 rules except that it never
  // saturates or takes .relu (ptxas 13: "Illegal modifier"; IsaAgreement.PackedF32x2Arithmetic).
  bool packed = type == ".f32x2";
  if (type != ".f32" && type != ".f64" && !packed) return;
  bool f64 = type == ".f64";
  std::string_view rnd = rounding_of(ins);
  bool approx = ins.has_mod(".approx"), full = ins.has_mod(".full"), ftz = ins.has_mod(".ftz");
  auto op = [&ins] { return ins.full_opcode(); };  // built only for a finding
  if (rules_of_family(*r.family) & kApproxOnly) {
    if (approx) return;
    auto& d = report(ctx, ins, fmt::format("'{}' exists only as an approximation and needs '.approx'", op()),
                     "missing-modifier");
    d.hint = fmt::format("write {}.approx{}{}", fam, ftz ? ".ftz" : "", type);
    if (fam == "ex2") d.hint += "; for e^x compute 2^(x*log2(e)): mul.f32 by 0f3FB8AA3B (1.4427) first";
    if (ins.opcode == fam) insert_after_opcode(d, ins, ".approx");
    return;
  }
  if (!(rules_of_family(*r.family) & kFloatArith)) return;
  if (contains(kIntRounding, rnd) || rnd == ".rna") {
    auto& d = report(ctx, ins, fmt::format("'{}': '{}' rounds to an integer and applies only to cvt", op(), rnd),
                     "illegal-modifier");
    d.hint = "floating-point arithmetic takes .rn, .rz, .rm or .rp";
    return;
  }
  bool has_rnd = contains(kFloatRounding, rnd);
  bool approx_form = (!f64 && (fam == "div" || fam == "sqrt" || fam == "rcp")) || (f64 && fam == "rcp");
  if (approx && !approx_form) {
    auto& d = report(ctx, ins, fmt::format("'{}': {}{} has no .approx form", op(), fam, type), "illegal-modifier");
    d.hint = fam == "div" || fam == "sqrt" ? fmt::format("use a rounding modifier: {}.rn{}", fam, type)
                                           : "drop '.approx'";
    return;
  }
  if (full && (fam != "div" || f64)) {
    auto& d = report(ctx, ins, fmt::format("'{}': .full exists only on div.f32", op()), "illegal-modifier");
    d.hint = fmt::format("use {}.rn{}", fam, type);
    return;
  }
  if (ins.has_mod(".sat") &&
      (f64 || packed || (fam != "add" && fam != "sub" && fam != "mul" && fam != "mad" && fam != "fma"))) {
    auto& d = report(ctx, ins, fmt::format("'{}': .sat applies to .f32 add, sub, mul, mad and fma only", op()),
                     "illegal-modifier");
    d.hint = packed ? "drop '.sat': packed .f32x2 arithmetic does not saturate"
                    : "drop '.sat'; clamp with min/max if you need [0, 1]";
    return;
  }
  if (packed && ins.has_mod(".relu")) {
    auto& d = report(ctx, ins, fmt::format("'{}': .relu applies to .f16 and .bf16 fma only", op()), "illegal-modifier");
    d.hint = "drop '.relu'; clamp the two halves with max.f32 if you need it";
    return;
  }
  if (ftz && f64 && fam != "rcp") {
    auto& d = report(ctx, ins, fmt::format("'{}': .ftz applies to .f32 only", op()), "illegal-modifier");
    d.hint = "drop '.ftz' (.f64 arithmetic keeps subnormals)";
    return;
  }
  if (fam == "rcp" && f64 && approx && !ftz) {
    auto& d = report(ctx, ins, fmt::format("'{}' needs '.ftz' (the only .approx form of rcp.f64 is rcp.approx.ftz.f64)",
                                           op()), "missing-modifier");
    d.hint = "write rcp.approx.ftz.f64, or rcp.rn.f64 for the correctly rounded result";
    return;
  }
  bool needs_rounding = fam == "mad" || fam == "fma" || fam == "div" || fam == "sqrt" || fam == "rcp";
  if (!needs_rounding || has_rnd || approx || full) return;
  auto& d = report(ctx, ins, fmt::format("'{}' needs a rounding modifier{}", op(), approx_form ? " or '.approx'" : ""),
                   "missing-modifier");
  if (ins.opcode == fam) insert_after_opcode(d, ins, ".rn");
  if (fam == "mad" || fam == "fma")
    d.hint = fmt::format("write {}.rn{}{} (a fused multiply-add rounded once)", fam, ftz ? ".ftz" : "", type);
  else if (approx_form && !f64)
    d.hint = fmt::format("write {0}.rn{1}{2} for the IEEE result, or {0}.approx{1}{2} for the fast one",
                         fam, ftz ? ".ftz" : "", type);
  else
    d.hint = fmt::format("write {}.rn{}{}", fam, ftz ? ".ftz" : "", type);
}

// Integer arithmetic: no rounding, no .ftz; mul/mad need .lo, .hi or .wide, which floats refuse.
void check_int_arith(CheckContext& ctx, const Instruction& ins, const Resolved& r) {
  std::string_view fam = r.family->name, type = r.type;
  if (type.empty()) return;
  char kind = type_kind(type);
  auto op = [&ins] { return ins.full_opcode(); };  // built only for a finding
  bool is_int = (kind == 'u' || kind == 's') && type_bits(type) >= 16 && type.find('x') == std::string_view::npos;
  bool lo = ins.has_mod(".lo"), hi = ins.has_mod(".hi"), wide = ins.has_mod(".wide");
  if (is_int) {
    std::string_view rnd = rounding_of(ins);
    if (!rnd.empty() || ins.has_mod(".ftz")) {
      std::string_view bad = rnd.empty() ? std::string_view(".ftz") : rnd;
      auto& d = report(ctx, ins, fmt::format("'{}': integer arithmetic takes no '{}'", op(), bad), "illegal-modifier");
      d.hint = fmt::format("drop '{}'; rounding and flush-to-zero apply to floating-point types", bad);
      return;
    }
    if ((fam == "mul" || fam == "mad") && !lo && !hi && !wide) {
      auto& d = report(ctx, ins, fmt::format("'{}' needs '.lo', '.hi' or '.wide' for an integer type", op()),
                       "missing-modifier");
      d.hint = fmt::format("write {}.lo{} for the low half of the product (what C's '*' gives), .wide for the "
                           "full double-width product", fam, type);
      insert_after_opcode(d, ins, ".lo");
      return;
    }
    if (wide && type_bits(type) == 64) {
      auto& d = report(ctx, ins, fmt::format("'{}': .wide doubles a 16- or 32-bit product; there is no 128-bit result", op()),
                       "illegal-modifier");
      d.hint = fmt::format("use {}.lo{} or {}.hi{}", fam, type, fam, type);
    }
    return;
  }
  if ((kind == 'f') && (fam == "mul" || fam == "mad") && (lo || hi || wide)) {
    std::string_view bad = lo ? ".lo" : hi ? ".hi" : ".wide";
    auto& d = report(ctx, ins, fmt::format("'{}': '{}' applies to integer products only", op(), bad), "illegal-modifier");
    d.hint = fmt::format("drop '{}': {}{} keeps the float result", bad, fam, fam == "mad" ? ".rn" : "");
  }
}

// shfl needs a mode, setp/set a comparison.
void check_required_choice(CheckContext& ctx, const Instruction& ins, const Resolved& r) {
  std::string_view fam = r.family->name;
  auto op = [&ins] { return ins.full_opcode(); };  // built only for a finding
  if (fam == "shfl" || fam == "shfl.sync") {
    for (auto m : {".up", ".down", ".bfly", ".idx"})
      if (ins.has_mod(m)) return;
    auto& d = report(ctx, ins, fmt::format("'{}' needs a shuffle mode: .up, .down, .bfly or .idx", op()), "missing-modifier");
    d.hint = "e.g. shfl.sync.bfly.b32 for a butterfly reduction, shfl.sync.idx.b32 to read one lane";
    return;
  }
  if (fam == "setp" || fam == "set") {
    static const std::array<std::string_view, 18> cmp = {".eq", ".ne", ".lt", ".le", ".gt", ".ge", ".lo", ".ls", ".hi",
                                                          ".hs", ".equ", ".neu", ".ltu", ".leu", ".gtu", ".geu", ".num", ".nan"};
    for (auto m : ins.mods)
      if (contains(cmp, m)) return;
    auto& d = report(ctx, ins, fmt::format("'{}' needs a comparison (.eq, .ne, .lt, .le, .gt, .ge, ...)", op()),
                     "missing-modifier");
    d.hint = fmt::format("e.g. {}.lt{}", fam, r.type.empty() ? ".s32" : std::string(r.type) + std::string(r.src_type));
  }
}

// setp/set: which comparisons each kind of type has ("Comparison and Selection Instructions").
void check_compare_type(CheckContext& ctx, const Instruction& ins, const Resolved& r) {
  std::string_view fam = r.family->name;
  if (fam != "setp" && fam != "set") return;
  std::string_view type = fam == "set" ? r.src_type : r.type;
  char kind = type_kind(type);
  if (kind != 'b' && kind != 'u' && kind != 's' && kind != 'f') return;
  // The comparisons in the manual's order: 2 for bits, 6 signed, 10 unsigned; floats take the
  // first 6 and the 8 from .equ on.
  static constexpr std::array<std::string_view, 18> all = {".eq", ".ne", ".lt", ".le", ".gt", ".ge", ".lo", ".ls", ".hi",
                                                           ".hs", ".equ", ".neu", ".ltu", ".leu", ".gtu", ".geu", ".num", ".nan"};
  auto allowed = [&](size_t i) {
    switch (kind) {
      case 'b': return i < 2;
      case 's': return i < 6;
      case 'u': return i < 10;
      default: return i < 6 || i >= 10;
    }
  };
  for (auto m : ins.mods) {
    size_t i = 0;
    while (i < all.size() && all[i] != m) ++i;
    if (i == all.size() || allowed(i)) continue;
    auto& d = report(ctx, ins, fmt::format("'{}': the comparison '{}' does not apply to {}", ins.full_opcode(), m, type),
                     "illegal-modifier");
    if (kind == 'b')
      d.hint = fmt::format("bit types compare only .eq/.ne; for an ordered compare use .u{0} or .s{0}", type_bits(type));
    else if (kind == 's' && (m == ".lo" || m == ".ls" || m == ".hi" || m == ".hs"))
      d.hint = fmt::format(".lo/.ls/.hi/.hs are unsigned compares: use .u{} or the signed .lt/.le/.gt/.ge", type_bits(type));
    else if (kind == 'f')
      d.hint = "floating-point compares are .eq .ne .lt .le .gt .ge, their unordered forms (.ltu, ...), .num and .nan";
    else
      d.hint = "the unordered compares (.equ, .ltu, ...), .num and .nan apply to floating-point types";
    return;
  }
}

// Warp-wide matrix instructions state that every thread runs them: .sync (and .aligned).
void check_sync_aligned(CheckContext& ctx, const Instruction& ins, const Resolved& r) {
  std::string_view fam = r.family->name;
  bool needs_aligned = fam == "mma" || fam == "ldmatrix" || fam == "stmatrix" || fam == "movmatrix";
  bool needs_sync = needs_aligned || fam == "wgmma.fence" || fam == "wgmma.commit_group" || fam == "wgmma.wait_group";
  if (!needs_sync) return;
  if (fam == "mma" && ins.has_mod(".sp")) return;
  bool sync = ins.has_mod(".sync"), aligned = ins.has_mod(".aligned");
  if (sync && (aligned || !needs_aligned)) return;
  std::string missing = !sync && needs_aligned ? ".sync.aligned" : !sync ? ".sync" : ".aligned";
  auto& d = report(ctx, ins, fmt::format("'{}' needs '{}': every thread of the warp{} executes it together",
                                         ins.full_opcode(), missing, fam.substr(0, 5) == "wgmma" ? "group" : ""),
                   "missing-modifier");
  d.hint = fmt::format("write {}.sync{}...", fam, needs_aligned ? ".aligned" : "");
}

// Since PTX 6.4, shfl and vote without .sync do not exist for sm_70 and later.
void check_needs_sync_form(CheckContext& ctx, const Instruction& ins, const Resolved& r) {
  std::string_view fam = r.family->name;
  if (fam != "shfl" && fam != "vote") return;
  if (!ctx.facts.version || *ctx.facts.version < PtxVersion{6, 4}) return;
  bool volta = false;
  for (auto& t : ctx.facts.targets) volta |= t.sm >= 70;
  if (!volta) return;
  auto& d = report(ctx, ins, fmt::format("'{}' without '.sync' does not exist for sm_70 and later (PTX ISA 6.4+)",
                                         ins.full_opcode()), "missing-modifier");
  d.hint = fam == "shfl" ? "write shfl.sync.<mode>.b32 d, a, b, c, membermask; with membermask -1 (0xffffffff) for "
                           "the whole warp"
                         : "write vote.sync.<mode> d, p, membermask; with membermask -1 (0xffffffff) for the whole warp";
}

// atom/red: which types each operation takes.
void check_atomic_op_type(CheckContext& ctx, const Instruction& ins, const Resolved& r) {
  std::string_view fam = r.family->name, type = r.type;
  if ((fam != "atom" && fam != "red") || type.empty()) return;
  struct OpTypes {
    std::string_view op;
    std::array<std::string_view, 9> types;
  };
  static const std::array<OpTypes, 9> table = {{
      {".and", {".b32", ".b64"}}, {".or", {".b32", ".b64"}}, {".xor", {".b32", ".b64"}},
      {".cas", {".b16", ".b32", ".b64", ".b128"}}, {".exch", {".b32", ".b64", ".b128"}},
      {".inc", {".u32"}}, {".dec", {".u32"}},
      {".add", {".u32", ".s32", ".u64", ".f32", ".f64", ".f16", ".f16x2", ".bf16", ".bf16x2"}},
      {".min", {".u32", ".s32", ".u64", ".s64", ".f16", ".f16x2", ".bf16", ".bf16x2"}},
  }};
  static const OpTypes max_row = {".max", {".u32", ".s32", ".u64", ".s64", ".f16", ".f16x2", ".bf16", ".bf16x2"}};
  for (auto m : ins.mods) {
    const OpTypes* row = m == ".max" ? &max_row : nullptr;
    for (auto& t : table)
      if (t.op == m) row = &t;
    if (!row) continue;
    if (contains(row->types, type)) {
      bool half = type == ".f16" || type == ".f16x2" || type == ".bf16" || type == ".bf16x2";
      if (!half || m == ".cas") return;
      if (!ins.has_mod(".noftz")) {
        auto& d = report(ctx, ins, fmt::format("'{}': {} on {} needs '.noftz'", ins.full_opcode(), m, type),
                         "missing-modifier");
        d.hint = fmt::format("write {}{}.noftz{} (half-precision atomics keep subnormals, and say so)", fam, m, type);
      } else if ((m == ".min" || m == ".max") && !ins.has_mod(".v2") && !ins.has_mod(".v4") && !ins.has_mod(".v8")) {
        auto& d = report(ctx, ins, fmt::format("'{}': {} on {} exists only in vector form", ins.full_opcode(), m, type),
                         "missing-modifier");
        d.hint = fmt::format("use {}.v2{}.noftz{} with {{ }} operands", fam, m, type);
      }
      return;
    }
    std::string list;
    for (auto t : row->types)
      if (!t.empty()) list += (list.empty() ? "" : ", ") + std::string(t);
    auto& d = report(ctx, ins, fmt::format("'{}': {}{} does not take {} (it takes {})", ins.full_opcode(), fam, m, type,
                                           list), "illegal-modifier");
    char kind = type_kind(type);
    if ((m == ".and" || m == ".or" || m == ".xor" || m == ".cas" || m == ".exch") && type_bits(type) >= 32)
      d.hint = fmt::format("bitwise operations use bit types: write .b{}", type_bits(type));
    else if (m == ".add" && type == ".s64")
      d.hint = "two's complement addition is the same for both: write .u64";
    else if ((m == ".add" || m == ".min" || m == ".max") && kind == 'b')
      d.hint = fmt::format("arithmetic needs a signed or unsigned type: write .u{0} or .s{0}", type_bits(type));
    else if (m == ".inc" || m == ".dec")
      d.hint = "write .u32: inc/dec wrap a 32-bit unsigned counter";
    else
      d.hint = fmt::format("see {}", anchor_link(r));
    return;
  }
}

// barrier.cluster: .arrive takes .release or .relaxed, .wait takes .acquire only (ptxas 13.0:
// "Illegal modifier '.acquire' for instruction 'barrier.cluster.arrive'", and '.release' or
// '.relaxed' for '.wait').
void check_cluster_barrier(CheckContext& ctx, const Instruction& ins) {
  bool arrive = ins.has_mod(".arrive"), wait = ins.has_mod(".wait");
  if (arrive == wait) return;  // neither or both: the form is another rule's concern
  for (std::string_view sem : {".acquire", ".release", ".relaxed"}) {
    if (!ins.has_mod(sem)) continue;
    bool allowed = arrive ? sem != ".acquire" : sem == ".acquire";
    if (allowed) continue;
    auto& d = report(ctx, ins, fmt::format("'{}': barrier.cluster.{} does not take '{}'", ins.full_opcode(),
                                           arrive ? "arrive" : "wait", sem),
                     "illegal-modifier");
    d.hint = arrive ? "arrive takes .release (the default) or .relaxed; the acquire side is barrier.cluster.wait.acquire"
                    : "wait takes .acquire (the default) only; the release side is barrier.cluster.arrive.release";
    return;
  }
}

}  // namespace

void check_modifier_rules(CheckContext& ctx, const Instruction& ins, const Resolved& r) {
  uint16_t rules = rules_of_family(*r.family);
  if (!rules) return;
  if (rules & kCvt) check_cvt(ctx, ins, r);
  if (rules & (kFloatArith | kApproxOnly)) check_float_arith(ctx, ins, r);
  if (rules & kIntArith) check_int_arith(ctx, ins, r);
  if (rules & (kShuffle | kCompare)) check_required_choice(ctx, ins, r);
  if (rules & kCompare) check_compare_type(ctx, ins, r);
  if (rules & kSyncAligned) check_sync_aligned(ctx, ins, r);
  if (rules & kSyncForm) check_needs_sync_form(ctx, ins, r);
  if (rules & kAtomic) check_atomic_op_type(ctx, ins, r);
  if (rules & kClusterBarrier) check_cluster_barrier(ctx, ins);
}

}  // namespace ptxforge::ptx
