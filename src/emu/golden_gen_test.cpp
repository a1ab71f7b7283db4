// The golden vectors' generator: its kernels pass the checker and assemble for sm_90, only the
// forms of newer targets are left out, the instances are reproducible, masked to their types
// and carry the planted edge values, and the kernels' plumbing gives hand-worked results on
// the engine (so a recording's numbers come from the form's instruction and nothing else).
#include "emu/golden_gen.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "emu/engine.h"
#include "ptx/front_end.h"
#include "toolchain/ptxas.h"
#include "util/paths.h"

namespace ptxforge::emu {
namespace {

uint32_t form_id(std::string_view ptx) {
  const auto& forms = golden_forms();
  for (uint32_t i = 0; i < forms.size(); ++i) {
    if (forms[i].ptx == ptx) return i;
  }
  ADD_FAILURE() << "no form " << ptx;
  return 0;
}

TEST(GoldenGen, EveryFormIsGeneratedOrLeftOutForANewerTarget) {
  const auto& plan = golden_plan();
  std::set<uint32_t> seen;
  for (const auto& fam : plan.families) {
    EXPECT_FALSE(fam.forms.empty()) << fam.name;
    for (uint32_t id : fam.forms) {
      EXPECT_TRUE(seen.insert(id).second) << id;
      EXPECT_EQ(golden_forms()[id].family, fam.name);
    }
  }
  // PTX ISA, cvt: the e2m1x2, e2m3x2, e3m2x2 and ue8m0x2 conversions need sm_100a. PTX ISA,
  // setp: .lo and .hs compare unsigned integers only, so setp.lo.s32 and setp.hs.s32 assemble
  // nowhere (ptxas: "Mismatch between instruction type and comparison qualifier").
  std::set<std::string> skipped;
  for (const auto& s : plan.skipped) {
    EXPECT_TRUE(seen.insert(s.form).second) << s.form;
    skipped.insert(golden_forms()[s.form].ptx);
    EXPECT_FALSE(s.why.empty());
  }
  for (const auto& f : golden_forms()) {
    const bool newer = f.ptx.find("e2m1x2") != std::string::npos || f.ptx.find("e2m3x2") != std::string::npos ||
                       f.ptx.find("e3m2x2") != std::string::npos || f.ptx.find("ue8m0x2") != std::string::npos;
    const bool invalid = f.ptx.starts_with("setp.lo.s32") || f.ptx.starts_with("setp.hs.s32");
    EXPECT_EQ(skipped.count(f.ptx), newer || invalid ? 1u : 0u) << f.ptx;
  }
  EXPECT_EQ(seen.size(), golden_forms().size());
  EXPECT_GE(golden_forms().size() - plan.skipped.size(), 150u);
}

TEST(GoldenGen, EveryModulePassesTheChecker) {
  for (const auto& fam : golden_plan().families) {
    const std::string text = golden_module(fam);
    EXPECT_NE(text.find(".target sm_90\n"), std::string::npos);
    auto r = ptx::check_source(text);
    EXPECT_TRUE(r.ok()) << fam.name << ": " << (r.diags.list().empty() ? "" : r.diags.list()[0].message);
  }
}

TEST(GoldenGen, EveryKernelAssembles) {
  if (!find_cuda_tool("ptxas")) GTEST_SKIP() << "ptxas not installed";
  std::vector<const GoldenFamily*> all;
  for (const auto& fam : golden_plan().families) all.push_back(&fam);
  toolchain::AssembleOptions opts;
  opts.arch = std::string(kGoldenTarget);
  opts.source_name = "golden.ptx";
  auto r = toolchain::assemble_with_ptxas(golden_module(all), opts);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->ok) << r->log.substr(0, 4000);
  for (const auto* fam : all) EXPECT_NE(r->find(fam->entry), nullptr) << fam->entry;
}

TEST(GoldenGen, InstancesAreReproducibleMaskedAndPlantEdges) {
  size_t total = 0;
  for (const auto& fam : golden_plan().families) {
    for (uint32_t id : fam.forms) {
      const GoldenForm& f = golden_forms()[id];
      auto a = golden_instances(id), b = golden_instances(id);
      ASSERT_GE(a.size(), 64u);
      total += a.size();
      for (size_t j = 0; j < a.size(); ++j) {
        EXPECT_EQ(a[j].form, id);
        EXPECT_EQ(a[j].in, b[j].in) << f.ptx << " instance " << j << " is not reproducible";
        for (size_t k = 0; k < f.inputs.size(); ++k) {
          EXPECT_EQ(a[j].in[k] & ~golden_mask(golden_type_bits(f.inputs[k])), 0u) << f.ptx;
          if (j % 3 == 0) {  // a third: every operand an edge value of its type
            auto e = golden_edges(f.inputs[k], golden_is_count(f, k));
            EXPECT_NE(std::find(e.begin(), e.end(), a[j].in[k]), e.end()) << f.ptx << " " << j;
          }
        }
      }
    }
  }
  EXPECT_GE(total, 20000u);
  // The edge values docs/emu.md names turn up: f32 NaNs, infinities, -0, the smallest subnormal; ints'
  // INT_MIN and INT_MAX; shift counts 0, 31, 32, 33, 63, 64, 255.
  auto seen = [](std::string_view ptx, size_t k) {
    std::set<uint64_t> s;
    for (auto& in : golden_instances(form_id(ptx))) s.insert(in.in[k]);
    return s;
  };
  auto f32 = seen("add.rn.f32 %d, %a, %b", 0);
  for (uint64_t v : {0x7fc00000ull, 0x7f800001ull, 0x7f800000ull, 0xff800000ull, 0x80000000ull, 1ull, 0x3f800000ull})
    EXPECT_TRUE(f32.count(v)) << std::hex << v;
  auto s32 = seen("add.sat.s32 %d, %a, %b", 1);
  EXPECT_TRUE(s32.count(0x80000000u) && s32.count(0x7fffffffu) && s32.count(0xffffffffu));
  std::set<uint64_t> counts;
  for (std::string_view p : {"shl.b32 %d, %a, %b", "shr.s64 %d, %a, %b", "shr.u16 %d, %a, %b"}) {
    auto c = seen(p, 1);
    counts.insert(c.begin(), c.end());
  }
  for (uint64_t v : {0, 31, 32, 33, 63, 64, 255}) EXPECT_TRUE(counts.count(v)) << v;
}

// The kernel of a family on the engine, over instances with hand-picked inputs.
std::vector<uint64_t> run(const GoldenFamily& fam, const std::vector<GoldenInstance>& inst) {
  auto checked = ptx::check_source(golden_module(fam));
  auto made = Machine::create(checked.module);
  if (auto* f = std::get_if<Finding>(&made)) {
    ADD_FAILURE() << fam.name << ": " << f->message;
    return {};
  }
  auto& m = *std::get<std::unique_ptr<Machine>>(made);
  auto slots = golden_input_slots(fam, inst);
  uint64_t in = m.alloc("in", slots.size() * 8, Init::written);
  m.write(in, {reinterpret_cast<const uint8_t*>(slots.data()), slots.size() * 8});
  uint64_t out = m.alloc("out", inst.size() * 8, Init::unwritten);
  uint32_t n = static_cast<uint32_t>(inst.size());
  std::vector<ParamBytes> p(3, ParamBytes(8));
  p[2].resize(4);
  std::memcpy(p[0].data(), &in, 8);
  std::memcpy(p[1].data(), &out, 8);
  std::memcpy(p[2].data(), &n, 4);
  LaunchConfig cfg;
  cfg.block = {kGoldenBlock, 1, 1};
  auto r = m.launch(fam.entry, cfg, p);
  EXPECT_TRUE(r.ok()) << r.finding->message;
  auto bytes = m.read(out, n * 8);
  std::vector<uint64_t> v(n);
  std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

GoldenInstance inst(std::string_view ptx, std::initializer_list<uint64_t> in) {
  GoldenInstance g;
  g.form = form_id(ptx);
  std::copy(in.begin(), in.end(), g.in.begin());
  return g;
}

TEST(GoldenGen, KernelsGiveHandWorkedResultsOnTheEngine) {
  const auto& plan = golden_plan();
  // 1 + 2 = 3; 0.5 * -4 = -2; an unknown form id stores the no-form marker.
  auto v = run(*plan.find("arith.f32"), {inst("add.rn.f32 %d, %a, %b", {0x3f800000, 0x40000000}),
                                         inst("mul.rz.f32 %d, %a, %b", {0x3f000000, 0xc0800000}),
                                         GoldenInstance{9999, {}}});
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0], 0x40400000u);
  EXPECT_EQ(v[1], 0xc0000000u);
  EXPECT_EQ(v[2], kGoldenNoForm);
  // -1 < 1 signed, not unsigned (pred stored as 0/1); 2^64-1 < 1 is false as u64.
  v = run(*plan.find("setp.int"), {inst("setp.lt.s32 %d, %a, %b", {0xffffffff, 1}), inst("setp.lo.u64 %d, %a, %b", {~0ull, 1}),
                                   inst("setp.lt.u64 %d, %a, %b", {~0ull, 1})});
  EXPECT_EQ(v, (std::vector<uint64_t>{1, 0, 0}));
  // PTX ISA shl/shr: counts past the width give 0 (shl, shr.u) or the sign (shr.s).
  v = run(*plan.find("int.shift"), {inst("shl.b32 %d, %a, %b", {1, 33}), inst("shr.s32 %d, %a, %b", {0x80000000, 255}),
                                    inst("shl.b16 %d, %a, %b", {0x8001, 1}), inst("shr.u64 %d, %a, %b", {1ull << 63, 63})});
  EXPECT_EQ(v, (std::vector<uint64_t>{0, 0xffffffff, 0x0002, 1}));
  // -2 * 3 as a 64-bit product; 0x33221100/0x77665544 through selector 0x4567 is 0x44556677.
  v = run(*plan.find("int.arith"), {inst("mul.wide.s32 %d, %a, %b", {0xfffffffe, 3})});
  EXPECT_EQ(v, (std::vector<uint64_t>{0xfffffffffffffffaull}));
  v = run(*plan.find("int.prmt"), {inst("prmt.b32 %d, %a, %b, %c", {0x33221100, 0x77665544, 0x4567})});
  EXPECT_EQ(v, (std::vector<uint64_t>{0x44556677}));
  // cvt.rni: 2.5 rounds to even 2; cvt.sat.s8: 300 clamps to 127 (in a 16-bit register).
  v = run(*plan.find("cvt"), {inst("cvt.rni.s32.f32 %d, %a", {0x40200000}), inst("cvt.sat.s8.s32 %d, %a", {300})});
  EXPECT_EQ(v, (std::vector<uint64_t>{2, 127}));
}

}  // namespace
}  // namespace ptxforge::emu
