// The fast kernels (interp_fast.h) against the general path: one generated kernel runs every
// form the fast path takes, unguarded, under a guard and inside a divergent branch (partial
// masks), on edge values (NaN, -0, subnormals, infinities, INT_MIN, shift counts past the
// width) and pseudo-random ones, on a machine made with the fast path and one without; the
// outputs must be equal bit for bit, and taint (uninitialised reads) must give the same finding.
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "emu/interp_fast.h"
#include "emu/lower.h"
#include "emu/machine_testing.h"

namespace ptxforge::emu {
namespace {

// One form: `{d}` is its 32-bit destination, `{D}` its 64-bit one (exactly one of them).
// Sources: %a %b %c (32-bit), %A %B %C (64-bit), %g (a predicate), special registers, immediates.
const std::vector<std::string>& forms() {
  static const std::vector<std::string> f = [] {
    std::vector<std::string> v = {
        "mov.u32 {d}, %a;", "mov.u32 {d}, %tid.x;", "mov.u32 {d}, %laneid;", "mov.b32 {d}, 0x89abcdef;",
        "mov.f32 {d}, 0f3F800000;", "add.u32 {d}, %a, %b;", "add.s32 {d}, %a, -5;", "sub.u32 {d}, %a, %b;",
        "sub.s32 {d}, 7, %b;", "mul.lo.u32 {d}, %a, %b;", "mul.lo.s32 {d}, %a, %b;", "mad.lo.u32 {d}, %a, %b, %c;",
        "mad.lo.s32 {d}, %a, 3, %c;", "and.b32 {d}, %a, %b;", "or.b32 {d}, %a, %c;", "xor.b32 {d}, %b, %c;",
        "not.b32 {d}, %a;", "shl.b32 {d}, %a, %b;", "shl.b32 {d}, %a, 5;", "shr.u32 {d}, %a, %b;",
        "shr.s32 {d}, %a, %b;", "shr.b32 {d}, %a, %c;", "shr.s32 {d}, %a, 40;", "min.u32 {d}, %a, %b;",
        "max.u32 {d}, %a, %b;", "min.s32 {d}, %a, %b;", "max.s32 {d}, %a, %c;", "selp.b32 {d}, %a, %b, %g;",
        "selp.u32 {d}, 4, %c, %g;", "add.f32 {d}, %a, %b;", "add.rn.f32 {d}, %a, %c;", "sub.f32 {d}, %a, %b;",
        "sub.rn.f32 {d}, %c, %a;", "mul.rn.f32 {d}, %a, %b;", "mul.f32 {d}, %a, 0f40000000;",
        "fma.rn.f32 {d}, %a, %b, %c;", "mad.rn.f32 {d}, %a, %b, %c;", "cvt.u32.u64 {d}, %A;",
        "cvt.s32.s64 {d}, %A;", "cvt.u32.s32 {d}, %a;", "cvt.s32.u32 {d}, %b;",
        "mov.u64 {D}, %A;", "mov.u64 {D}, %clock64;", "add.u64 {D}, %A, %B;", "add.s64 {D}, %A, -3;",
        "sub.s64 {D}, %A, %B;", "mul.lo.u64 {D}, %A, %B;", "mad.lo.s64 {D}, %A, %B, %C;", "and.b64 {D}, %A, %B;",
        "or.b64 {D}, %A, %C;", "xor.b64 {D}, %B, %C;", "not.b64 {D}, %A;", "shl.b64 {D}, %A, %b;",
        "shr.u64 {D}, %A, %b;", "shr.s64 {D}, %A, %b;", "shr.s64 {D}, %A, 70;", "min.s64 {D}, %A, %B;",
        "max.u64 {D}, %A, %B;", "min.u64 {D}, %A, %C;", "max.s64 {D}, %B, %C;", "selp.b64 {D}, %A, %B, %g;",
        "mul.wide.u32 {D}, %a, %b;", "mul.wide.s32 {D}, %a, %b;", "mul.wide.s32 {D}, %a, -7;",
        "cvt.u64.u32 {D}, %a;", "cvt.s64.s32 {D}, %a;", "cvt.u64.s32 {D}, %b;", "cvt.s64.u32 {D}, %c;",
        "add.rn.f64 {D}, %A, %B;", "sub.f64 {D}, %A, %C;", "mul.rn.f64 {D}, %A, %B;",
        "fma.rn.f64 {D}, %A, %B, %C;",
    };
    for (const char* c : {"eq", "ne", "lt", "le", "gt", "ge"}) {
      v.push_back(fmt::format("setp.{}.s32 %p, %a, %b; selp.b32 {{d}}, 1, 0, %p;", c));
      v.push_back(fmt::format("setp.{}.s64 %p, %A, %B; selp.b32 {{d}}, 1, 0, %p;", c));
    }
    for (const char* c : {"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"}) {
      v.push_back(fmt::format("setp.{}.u32 %p, %a, %c; selp.b32 {{d}}, 1, 0, %p;", c));
      v.push_back(fmt::format("setp.{}.u64 %p, %A, %C; selp.b32 {{d}}, 1, 0, %p;", c));
    }
    for (const char* c : {"eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"}) {
      v.push_back(fmt::format("setp.{}.f32 %p, %a, %b; selp.b32 {{d}}, 1, 0, %p;", c));
      v.push_back(fmt::format("setp.{}.f64 %p, %A, %B; selp.b32 {{d}}, 1, 0, %p;", c));
    }
    v.push_back("setp.lt.f32 %p|%q, %a, %c; selp.b32 {d}, 1, 0, %p; @%q add.u32 {d}, {d}, 2;");
    v.push_back("setp.hi.u32 %p|%q, %a, %b; selp.b32 {d}, 4, 0, %q; @%p add.u32 {d}, {d}, 8;");
    v.push_back("setp.eq.b32 %p, %a, 0; selp.b32 {d}, 1, 0, %p;");
    return v;
  }();
  return f;
}

bool wide(const std::string& f) { return f.find("{D}") != std::string::npos; }

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t i = s.find(from); i != std::string::npos; i = s.find(from, i + to.size())) s.replace(i, from.size(), to);
  return s;
}

// Each form three times (plain, under @%g, in the branch only the lanes with !%g take), its
// destination first set to a marker so masked-off lanes store something defined. Output per
// thread: 32-bit results, then 64-bit ones.
struct Gen {
  std::string ptx;
  uint32_t n32 = 0, n64 = 0;
  std::vector<uint32_t> lines;  // the line of each form's first instruction
};

Gen generate() {
  Gen g;
  std::vector<std::string> body;
  std::vector<std::pair<std::string, bool>> dests;  // register, wide
  int line = 0;
  std::string head = std::string(kHeader) + R"(.visible .entry k(.param .u64 in32, .param .u64 in64, .param .u64 out)
{
  .reg .pred %p, %q, %g;
  .reg .b32 %a, %b, %c, %t, %d<400>;
  .reg .b64 %A, %B, %C, %pa, %pb, %po, %o, %D<400>;
  mov.u32 %t, %tid.x;
  ld.param.u64 %pa, [in32];
  ld.param.u64 %pb, [in64];
  ld.param.u64 %po, [out];
  mul.wide.u32 %o, %t, 12;
  add.u64 %o, %pa, %o;
  ld.global.u32 %a, [%o];
  ld.global.u32 %b, [%o+4];
  ld.global.u32 %c, [%o+8];
  mul.wide.u32 %o, %t, 24;
  add.u64 %o, %pb, %o;
  ld.global.u64 %A, [%o];
  ld.global.u64 %B, [%o+8];
  ld.global.u64 %C, [%o+16];
  and.b32 %t, %t, 3;
  setp.ne.u32 %g, %t, 0;
)";
  for (char ch : head) line += ch == '\n';
  std::vector<std::string> plain, guarded, branch;
  for (int variant = 0; variant < 3; ++variant)
    for (const std::string& f : forms()) {
      bool w = wide(f);
      std::string reg = w ? fmt::format("%D{}", g.n64++) : fmt::format("%d{}", g.n32++);
      dests.push_back({reg, w});
      std::string text = replace_all(replace_all(f, "{d}", reg), "{D}", reg);
      if (variant == 1) text = "@%g " + text;
      std::string init = fmt::format("  mov.b{} {}, {};", w ? 64 : 32, reg, w ? "0x5a5a5a5a5a5a5a5a" : "0x5a5a5a5a");
      (variant == 0 ? plain : variant == 1 ? guarded : branch).push_back(init);
      (variant == 0 ? plain : variant == 1 ? guarded : branch).push_back("  " + text);
    }
  std::string out = head;
  auto emit = [&](const std::string& s) {
    out += s + "\n";
    ++line;
  };
  auto emit_forms = [&](const std::vector<std::string>& v) {
    for (size_t i = 0; i < v.size(); ++i) {
      if (i % 2 == 1) g.lines.push_back(static_cast<uint32_t>(line + 1));
      emit(v[i]);
    }
  };
  emit_forms(plain);
  emit_forms(guarded);
  // Only the lanes with !%g run the third copy; the rest wait at the join.
  for (size_t i = 0; i < branch.size(); i += 2) emit(branch[i]);
  emit("  @%g bra JOIN;");
  for (size_t i = 1; i < branch.size(); i += 2) {
    g.lines.push_back(static_cast<uint32_t>(line + 1));
    emit(branch[i]);
  }
  emit("JOIN:");
  uint32_t rec = g.n32 * 4 + g.n64 * 8;
  emit("  mov.u32 %t, %tid.x;");
  emit(fmt::format("  mul.wide.u32 %o, %t, {};", rec));
  emit("  add.u64 %o, %po, %o;");
  uint32_t off32 = 0, off64 = g.n32 * 4;
  for (auto& [reg, w] : dests) {
    if (w) emit(fmt::format("  st.global.b64 [%o+{}], {};", off64, reg)), off64 += 8;
    else emit(fmt::format("  st.global.b32 [%o+{}], {};", off32, reg)), off32 += 4;
  }
  emit("  ret;");
  emit("}");
  g.ptx = out;
  return g;
}

uint64_t mix(uint64_t& s) {
  s += 0x9e3779b97f4a7c15ull;
  uint64_t z = s;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

const uint32_t kEdge32[] = {0, 1, 2, 31, 32, 33, 255, 0x7fffffffu, 0x80000000u, 0xffffffffu, 0x7fc00000u,
                            0x7f800001u, 0xffc00000u, 0x00000001u, 0x807fffffu, 0x7f800000u, 0xff800000u,
                            0x3f800000u, 0xbf800000u, 0x7f7fffffu, 0x00800000u, 0x4b800000u};
const uint64_t kEdge64[] = {0, 1, 63, 64, 65, 0x7fffffffffffffffull, 0x8000000000000000ull, ~uint64_t{0},
                            0x7ff8000000000000ull, 0x7ff0000000000001ull, 0x7ff0000000000000ull,
                            0xfff0000000000000ull, 1, 0x3ff0000000000000ull, 0x00000000ffffffffull,
                            0xffffffff80000000ull, 0x000fffffffffffffull, 0x7fefffffffffffffull};

// Runs the generated kernel on a machine made with or without the fast path.
std::vector<uint8_t> run(const Gen& g, bool fast, uint32_t threads) {
  set_fast_paths(fast);
  auto b = build(g.ptx);
  set_fast_paths(true);
  EXPECT_TRUE(b.m) << (b.finding ? b.finding->message : "");
  if (!b.m) return {};
  uint32_t total = threads;
  std::vector<uint32_t> in32(size_t{total} * 3);
  std::vector<uint64_t> in64(size_t{total} * 3);
  uint64_t s = 42;
  for (size_t i = 0; i < in32.size(); ++i) {
    uint64_t r = mix(s);
    in32[i] = (r & 3) != 0 ? kEdge32[(r >> 8) % std::size(kEdge32)] : static_cast<uint32_t>(r >> 32);
  }
  for (size_t i = 0; i < in64.size(); ++i) {
    uint64_t r = mix(s);
    in64[i] = (r & 3) != 0 ? kEdge64[(r >> 8) % std::size(kEdge64)] : mix(s);
  }
  uint64_t p32 = b.m->alloc("in32", in32.size() * 4, Init::written);
  b.m->write(p32, {reinterpret_cast<const uint8_t*>(in32.data()), in32.size() * 4});
  uint64_t p64 = b.m->alloc("in64", in64.size() * 8, Init::written);
  b.m->write(p64, {reinterpret_cast<const uint8_t*>(in64.data()), in64.size() * 8});
  uint64_t rec = g.n32 * 4 + g.n64 * 8;
  uint64_t out = b.m->alloc("out", rec * total, Init::unwritten, true);
  LaunchConfig cfg;
  cfg.block = {total, 1, 1};
  auto r = b.m->launch("k", cfg, std::vector<ParamBytes>{u64p(p32), u64p(p64), u64p(out)});
  EXPECT_TRUE(r.ok()) << r.finding->message;
  return b.m->read(out, rec * total);
}

TEST(FastPath, EveryFormTakesAFastKernel) {
  Gen g = generate();
  auto checked = ptx::check_source(g.ptx);
  ASSERT_TRUE(checked.ok());
  auto lowered = lower(checked.module);
  ASSERT_TRUE(std::holds_alternative<Program>(lowered)) << std::get<Finding>(lowered).message;
  const Function& fn = std::get<Program>(lowered).fns[0];
  ASSERT_EQ(g.lines.size(), forms().size() * 3);
  size_t fast = 0;
  for (uint32_t line : g.lines)
    for (const Inst& in : fn.code)
      if (in.line == line) {
        EXPECT_NE(fast_kernel(in), nullptr) << "line " << line << ": " << fn.opcodes[&in - fn.code.data()];
        ++fast;
        break;
      }
  EXPECT_EQ(fast, g.lines.size());
  // And forms the fast path leaves alone.
  for (const Inst& in : fn.code) {
    if (in.op == Op::ld || in.op == Op::st || in.op == Op::bra) {
      EXPECT_EQ(fast_kernel(in), nullptr);
    }
  }
}

TEST(FastPath, MatchesTheGeneralPathBitForBit) {
  Gen g = generate();
  // 100 threads: three full warps and one of 4 lanes (absent lanes in the last one).
  auto slow = run(g, false, 100);
  auto fast = run(g, true, 100);
  ASSERT_EQ(slow.size(), fast.size());
  ASSERT_FALSE(slow.empty());
  uint32_t rec = g.n32 * 4 + g.n64 * 8;
  for (size_t i = 0; i < slow.size(); ++i)
    ASSERT_EQ(slow[i], fast[i]) << "thread " << i / rec << ", byte " << i % rec << " of the record";
  // The outputs are not all the markers (0x5a bytes): the forms ran.
  size_t changed = 0;
  for (size_t i = 0; i + 4 <= slow.size(); i += 4) changed += std::memcmp(&slow[i], "\x5a\x5a\x5a\x5a", 4) != 0;
  EXPECT_GT(changed, slow.size() / 8);
}

// A register never written, through fast ops into an output: the same uninit finding.
TEST(FastPath, TaintGivesTheSameFinding) {
  std::string src = std::string(kHeader) + R"(
.visible .entry k(.param .u64 out)
{
  .reg .pred %p;
  .reg .b32 %t, %u, %r, %s;
  .reg .b64 %po, %o;
  ld.param.u64 %po, [out];
  mov.u32 %t, %tid.x;
  mul.wide.u32 %o, %t, 4;
  add.u64 %o, %po, %o;
  setp.lt.u32 %p, %t, 40;
  mov.u32 %r, 1;
  @%p add.u32 %r, %u, %t;
  shl.b32 %s, %r, 2;
  st.global.u32 [%o], %s;
  ret;
}
)";
  std::optional<Finding> found[2];
  for (int fast = 0; fast < 2; ++fast) {
    set_fast_paths(fast == 1);
    auto b = build(src);
    set_fast_paths(true);
    ASSERT_TRUE(b.m);
    uint64_t out = b.m->alloc("out", 64 * 4, Init::unwritten, true);
    LaunchConfig cfg;
    cfg.block = {64, 1, 1};
    auto r = b.m->launch("k", cfg, std::vector<ParamBytes>{u64p(out)});
    found[fast] = r.finding;
  }
  ASSERT_TRUE(found[0] && found[1]);
  EXPECT_EQ(found[0]->kind, FindingKind::uninit);
  EXPECT_EQ(found[1]->kind, FindingKind::uninit);
  EXPECT_EQ(found[0]->message, found[1]->message);
  EXPECT_EQ(found[0]->pos.line, found[1]->pos.line);
  ASSERT_TRUE(found[0]->who && found[1]->who);
  EXPECT_EQ(*found[0]->who, *found[1]->who);
}

}  // namespace
}  // namespace ptxforge::emu
