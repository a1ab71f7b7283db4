// The tcgen05 rules (check_tcgen05.cpp) against ptxas: for each form, instructions generated
// over its modifier groups, operand shapes and immediates, accepted and rejected ones alike,
// assembled with ptxas once per class. We must raise no error where ptxas accepts and flag,
// at the line, every case it rejects. The classes run at PTX 9.0 on sm_100a; every class is
// run again on the other targets that have tcgen05 (no false alarm may appear there), and the
// accepted forms must be refused on sm_90a by the target rule.
#include <gtest/gtest.h>

#include "testing/rule_agreement.h"
#include "util/paths.h"

namespace ptxforge::ptx {
namespace {

using testing::agree_with_ptxas;
using testing::RuleCase;
using testing::RuleHeader;

const RuleHeader kSm100{"9.0", "sm_100a"};

testing::AgreementStats expect_agreement(const std::string& rule_class, const std::vector<RuleCase>& cases,
                                         const RuleHeader& h = kSm100, bool need_both = true) {
  auto st = agree_with_ptxas(cases, h);
  std::printf("%s (%s, PTX %s)\n", st.summary(rule_class).c_str(), h.target.c_str(), h.version.c_str());
  for (auto& p : st.problems) ADD_FAILURE() << rule_class << " on " << h.target << ": " << p;
  EXPECT_EQ(st.false_alarms, 0);
  EXPECT_EQ(st.we_flag, st.ptxas_rejects);
  if (need_both) {
    EXPECT_GT(st.ptxas_rejects, 0) << "the class has no rejected case: it tests nothing";
    EXPECT_LT(st.ptxas_rejects, st.cases) << "the class has no accepted case: it cannot show a false alarm";
  }
  return st;
}

// Enough .b32 registers for the widest tcgen05.ld/st vector (128).
const std::string kWide = ".reg .b32 %v<130>;\n";

std::string regs(int n, const std::string& prefix = "%v") {
  std::string s = "{";
  for (int i = 0; i < n; ++i) s += (i ? ", " : "") + prefix + std::to_string(i);
  return s + "}";
}

std::vector<RuleCase> ld_st_shapes() {
  std::vector<RuleCase> cases;
  for (std::string shape : {".16x64b", ".16x128b", ".16x256b", ".32x32b", ".16x32bx2"})
    for (int n : {1, 2, 3, 4, 8, 16, 32, 64, 128, 256}) {
      int per = shape == ".16x128b" ? 2 : shape == ".16x256b" ? 4 : 1;
      int want = std::min(per * n, 128);
      for (int have : {want - 1, want, want + 1}) {
        if (have < 1 || have > 128) continue;
        std::string mods = ".sync.aligned" + shape + ".x" + std::to_string(n) + ".b32";
        std::string off = shape == ".16x32bx2" ? ", 16" : "";
        cases.push_back({"tcgen05.ld" + mods + " " + regs(have) + ", [%r1]" + off + ";", kWide});
        cases.push_back({"tcgen05.st" + mods + " [%r1]" + off + ", " + regs(have) + ";", kWide});
      }
    }
  return cases;
}

std::vector<RuleCase> ld_st_modifiers() {
  std::vector<RuleCase> cases;
  for (std::string sync : {".sync.aligned", ".sync", ".aligned", "", ".aligned.sync", ".sync.sync", ".sync.aligned.aligned",
                           ".sync.sync.aligned"})
    for (std::string pack : {"", ".pack::16b", ".unpack::16b"})
      for (std::string type : {".b32", ".u32", ".b64", ""}) {
        cases.push_back({"tcgen05.ld" + sync + ".32x32b.x2" + pack + type + " {%r1, %r2}, [%r3];"});
        cases.push_back({"tcgen05.st" + sync + ".32x32b.x2" + pack + type + " [%r3], {%r1, %r2};"});
      }
  for (std::string mods : {".32x32b", ".x2", ".32x32b.16x64b.x2", ".32x32b.x2.x4", ".32x32.x2", ".32x32b.x3",
                           ".x2.32x32b", ".16x32bx2.x2", ".32x32b.x2.pack::32b"}) {
    cases.push_back({"tcgen05.ld.sync.aligned" + mods + ".b32 {%r1, %r2}, [%r3];"});
    cases.push_back({"tcgen05.st.sync.aligned" + mods + ".b32 [%r3], {%r1, %r2};"});
  }
  // Operands: the half-split offset, vector forms, register widths, address widths.
  for (std::string shape : {".32x32b", ".16x32bx2"})
    for (std::string off : {"", ", 16", ", 0", ", -2", ", %r5"}) {
      cases.push_back({"tcgen05.ld.sync.aligned" + shape + ".x1.b32 {%r1}, [%r3]" + off + ";"});
      cases.push_back({"tcgen05.st.sync.aligned" + shape + ".x1.b32 [%r3]" + off + ", {%r1};"});
    }
  for (std::string dst : {"{%r1, %r2}", "{%f1, %f2}", "{%u1, %s2}", "{%h1, %h2}", "{%rd1, %rd2}", "{%r1, %rd2}",
                          "{%r1, _}", "%r1", "{%fd1, %fd2}"})
    cases.push_back({"tcgen05.ld.sync.aligned.32x32b.x2.b32 " + dst + ", [%r3];"});
  for (std::string src : {"{%r1, %r2}", "{%r1, 5}", "{%h1, %h2}", "{%rd1, %rd2}", "%r1"})
    cases.push_back({"tcgen05.st.sync.aligned.32x32b.x2.b32 [%r3], " + src + ";"});
  for (std::string addr : {"[%r3]", "[%r3+8]", "[%rd3]", "[%rd3+8]", "%r3", "[16]"}) {
    cases.push_back({"tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r1}, " + addr + ";"});
    cases.push_back({"tcgen05.st.sync.aligned.32x32b.x1.b32 " + addr + ", {%r1};"});
  }
  cases.push_back({"tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r1}, [%r3], [%r4];"});
  cases.push_back({"tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r1};"});
  return cases;
}

TEST(RuleAgreement, Tcgen05LoadStoreShapes) {
  if (!find_cuda_tool("ptxas")) GTEST_SKIP() << "ptxas not installed";
  expect_agreement("tcgen05-ld-st-shapes", ld_st_shapes());
}

TEST(RuleAgreement, Tcgen05LoadStoreModifiers) {
  if (!find_cuda_tool("ptxas")) GTEST_SKIP() << "ptxas not installed";
  expect_agreement("tcgen05-ld-st-modifiers", ld_st_modifiers());
}

std::vector<RuleCase> alloc_cases() {
  std::vector<RuleCase> cases;
  for (std::string cta : {".cta_group::1", ".cta_group::2", "", ".cta_group::3", ".cta_group::1.cta_group::2"})
    for (std::string sync : {".sync.aligned", ".sync", ".aligned", ".sync.aligned.aligned", ".sync.sync.aligned"}) {
      cases.push_back({"tcgen05.alloc" + cta + sync + ".shared::cta.b32 [smem], 64;"});
      cases.push_back({"tcgen05.dealloc" + cta + sync + ".b32 %r1, 64;"});
      cases.push_back({"tcgen05.relinquish_alloc_permit" + cta + sync + ";"});
    }
  for (std::string space : {"", ".shared::cta", ".shared", ".shared::cluster", ".global", ".shared::cta.shared::cta"})
    for (std::string type : {".b32", ".b64", ".u32", ""})
      cases.push_back({"tcgen05.alloc.cta_group::1.sync.aligned" + space + type + " [smem], 32;"});
  for (std::string type : {".b32", ".b64", ""}) {
    cases.push_back({"tcgen05.dealloc.cta_group::1.sync.aligned" + type + " %r1, 32;"});
    cases.push_back({"tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned" + type + ";"});
  }
  for (std::string n : {"0", "16", "31", "32", "33", "48", "64", "96", "128", "192", "256", "384", "512", "544",
                        "1024", "2048", "-32", "0x40", "64U"}) {
    cases.push_back({"tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [smem], " + n + ";"});
    cases.push_back({"tcgen05.alloc.cta_group::2.sync.aligned.b32 [%rd1], " + n + ";"});
    cases.push_back({"tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r1, " + n + ";"});
  }
  for (std::string ops : {"[smem], %r2", "[%r1], %r2", "[%rd1], %r2", "[smem+8], 32", "smem, 32", "%rd1, 32",
                          "[smem], %rd2", "[smem], %h2", "[smem], %f2", "[smem], %u2", "[smem], 32, 1", "[smem]"})
    cases.push_back({"tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 " + ops + ";"});
  for (std::string ops : {"%r1, %r2", "32, 32", "%rd1, 32", "%r1, %rd2", "%h1, 32", "%f1, 32", "[%r1], 32",
                          "%r1, 32, 1", "%r1", "%u1, %s2"})
    cases.push_back({"tcgen05.dealloc.cta_group::1.sync.aligned.b32 " + ops + ";"});
  cases.push_back({"tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned %r1;"});
  return cases;
}

TEST(RuleAgreement, Tcgen05Allocation) {
  if (!find_cuda_tool("ptxas")) GTEST_SKIP() << "ptxas not installed";
  expect_agreement("tcgen05-alloc", alloc_cases());
}

const std::vector<std::string> kKinds = {".kind::f16",  ".kind::tf32",     ".kind::f8f6f4", ".kind::i8",
                                         ".kind::mxf8f6f4", ".kind::mxf4", ".kind::mxf4nvf4", ".kind::mxf6f4",
                                         ".kind::f32"};

std::vector<RuleCase> mma_kind_cases() {
  std::vector<RuleCase> cases;
  for (std::string form : {"", ".sp", ".ws"})
    for (std::string cta : {".cta_group::1", ".cta_group::2"})
      for (auto& kind : kKinds)
        for (std::string bs : {"", ".block_scale"})
          for (std::string sv : {"", ".scale_vec::1X", ".scale_vec::2X", ".scale_vec::4X", ".block16", ".block32"}) {
            std::string meta = form == ".sp" ? ", [%r6]" : "";
            std::string tail = bs.empty() ? ", %p1;" : ", [%r4], [%r5], %p1;";
            cases.push_back({"tcgen05.mma" + form + cta + kind + bs + sv + " [%r1], %rd1, %rd2" + meta + ", %r3" + tail});
          }
  // Modifier sets beyond kind and scale: cta_group, collector usage, ashift, order.
  for (std::string mods : {".kind::f16", ".cta_group::1", ".cta_group::3.kind::f16", ".kind::f16.cta_group::1",
                           ".cta_group::1.kind::f16.kind::tf32", ".cta_group::1.kind::f16.sync.aligned",
                           ".cta_group::1.block_scale.kind::mxf8f6f4", ".cta_group::1.kind::mxf4nvf4.block_scale.block32.block16",
                           ".cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::2X.scale_vec::4X",
                           ".cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X.block16"}) {
    bool bs = mods.find("block_scale") != std::string::npos;
    cases.push_back({"tcgen05.mma" + mods + " [%r1], %rd1, %rd2, %r3" + (bs ? ", [%r4], [%r5], %p1;" : ", %p1;")});
  }
  for (std::string form : {"", ".ws"})
    for (std::string coll : {".collector::a::fill", ".collector::a::use", ".collector::a::lastuse",
                             ".collector::a::discard", ".collector::b0::fill", ".collector::b3::lastuse",
                             ".collector::b1::use", ".collector::b4::fill", ".collector::a::keep",
                             ".collector::a::fill.collector::a::use"})
      for (std::string a : {"%rd1", "[%r7]"})
        cases.push_back({"tcgen05.mma" + form + ".cta_group::1.kind::f16" + coll + " [%r1], " + a + ", %rd2, %r3, %p1;"});
  for (std::string a : {"%rd1", "[%r7]"})
    for (std::string mods : {".ashift", ".ashift.collector::a::lastuse", ".collector::a::fill.ashift"}) {
      cases.push_back({"tcgen05.mma.cta_group::1.kind::f16" + mods + " [%r1], " + a + ", %rd2, %r3, %p1;"});
      cases.push_back({"tcgen05.mma.cta_group::2.kind::tf32" + mods + " [%r1], " + a + ", %rd2, %r3, %p1;"});
    }
  cases.push_back({"tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X.collector::a::fill [%r1], %rd1, %rd2, %r3, [%r4], [%r5], %p1;"});
  return cases;
}

TEST(RuleAgreement, Tcgen05MmaKinds) {
  if (!find_cuda_tool("ptxas")) GTEST_SKIP() << "ptxas not installed";
  expect_agreement("tcgen05-mma-kinds", mma_kind_cases());
}

std::vector<RuleCase> mma_operand_cases() {
  std::vector<RuleCase> cases;
  for (std::string cta : {".cta_group::1", ".cta_group::2"})
    for (std::string kind : {".kind::f16", ".kind::tf32", ".kind::f8f6f4", ".kind::i8"})
      for (std::string sp : {"", ".sp"}) {
        std::string head = "tcgen05.mma" + sp + cta + kind + " [%r1], %rd1, %rd2" + (sp.empty() ? "" : ", [%r6]") + ", %r3";
        for (int lanes : {0, 3, 4, 5, 8, 9})
          for (std::string scale : {"", ", 0", ", 3", ", 15", ", 16", ", -1", ", %r9"}) {
            std::string mask = lanes ? ", " + regs(lanes, "%v") : "";
            cases.push_back({head + mask + ", %p1" + scale + ";", kWide});
          }
      }
  // Each operand position with the wrong kind or width.
  const std::string k = "tcgen05.mma.cta_group::1.kind::f16 ";
  for (std::string ops :
       {"[%r1], %rd1, %rd2, %r3, %p1", "[%rd1], %rd1, %rd2, %r3, %p1", "%r1, %rd1, %rd2, %r3, %p1",
        "[%r1], [%r2], %rd2, %r3, %p1", "[%r1], [%rd2], %rd2, %r3, %p1", "[%r1], %r2, %rd2, %r3, %p1",
        "[%r1], 5, %rd2, %r3, %p1", "[%r1], %rd1, %r2, %r3, %p1", "[%r1], %rd1, 7, %r3, %p1",
        "[%r1], %rd1, [%r2], %r3, %p1", "[%r1], %rd1, %rd2, %rd3, %p1", "[%r1], %rd1, %rd2, %h3, %p1",
        "[%r1], %rd1, %rd2, %f3, %p1", "[%r1], %rd1, %rd2, 5, %p1", "[%r1], %rd1, %rd2, %u3, %p1",
        "[%r1], %rd1, %rd2, %r3, 1", "[%r1], %rd1, %rd2, %r3, %r4", "[%r1], %rd1, %rd2, %r3, !%p1",
        "[%r1], %rd1, %rd2, %r3", "[%r1], %rd1, %rd2", "[%r1], %rd1, %rd2, %r3, %p1, 1, 2",
        "[%r1], %fd1, %rd2, %r3, %p1", "[%r1], %ud1, %rd2, %r3, %p1",
        "[%r1], %rd1, %rd2, %r3, {%rd4, %rd5, %rd6, %rd7}, %p1", "[%r1], %rd1, %rd2, %r3, {%r4, %r5, %r6, 0}, %p1",
        "[%r1], %rd1, %rd2, %r3, {%r4, %r5, %r6, %r7}"})
    cases.push_back({k + ops + ";"});
  const std::string b = "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X ";
  for (std::string ops : {"[%r1], %rd1, %rd2, %r3, [%r4], [%r5], %p1", "[%r1], [%r2], %rd2, %r3, [%r4], [%r5], %p1",
                          "[%r1], %rd1, %rd2, %r3, %r4, %r5, %p1", "[%r1], %rd1, %rd2, %r3, [%rd4], [%r5], %p1",
                          "[%r1], %rd1, %rd2, %r3, [%r4], [%r5], %p1, 2", "[%r1], %rd1, %rd2, %r3, [%r4], [%r5]",
                          "[%r1], %rd1, %rd2, %r3, [%r4], [%r5], %r6", "[%r1], %rd1, %rd2, %r3, %p1",
                          "[%r1], %rd1, %rd2, %r3, {%r4, %r5, %r6, %r7}, [%r4], [%r5], %p1"})
    cases.push_back({b + ops + ";"});
  const std::string s = "tcgen05.mma.sp.cta_group::1.kind::f16 ";
  for (std::string ops : {"[%r1], %rd1, %rd2, [%r6], %r3, %p1", "[%r1], %rd1, %rd2, %r6, %r3, %p1",
                          "[%r1], %rd1, %rd2, [%rd6], %r3, %p1", "[%r1], %rd1, %rd2, %r3, %p1"})
    cases.push_back({s + ops + ";"});
  const std::string w = "tcgen05.mma.ws.cta_group::1.kind::f16 ";
  for (std::string ops : {"[%r1], %rd1, %rd2, %r3, %p1", "[%r1], %rd1, %rd2, %r3, %p1, %rd4",
                          "[%r1], %rd1, %rd2, %r3, %p1, %r4", "[%r1], %rd1, %rd2, %r3, %p1, 3",
                          "[%r1], %rd1, %rd2, %r3, {%r4, %r5, %r6, %r7}, %p1", "[%r1], [%r2], %rd2, %r3, %p1",
                          "[%r1], %rd1, %rd2, %r3, %p1, %rd4, 1"})
    cases.push_back({w + ops + ";"});
  return cases;
}

TEST(RuleAgreement, Tcgen05MmaOperands) {
  if (!find_cuda_tool("ptxas")) GTEST_SKIP() << "ptxas not installed";
  expect_agreement("tcgen05-mma-operands", mma_operand_cases());
}

std::vector<RuleCase> commit_cp_cases() {
  std::vector<RuleCase> cases;
  for (std::string cta : {".cta_group::1", ".cta_group::2", ""})
    for (std::string done : {".mbarrier::arrive::one", "", ".mbarrier::complete_tx::bytes"})
      for (std::string space : {".shared::cluster", "", ".shared::cta", ".shared"})
        for (std::string mc : {"", ".multicast::cluster"})
          for (std::string mask : {"", ", %h1", ", %r1", ", 3", ", %rd1"}) {
            if (mc.empty() != mask.empty() && mask != ", %h1" && !mask.empty()) continue;
            cases.push_back({"tcgen05.commit" + cta + done + space + mc + ".b64 [%rd2]" + mask + ";"});
          }
  for (std::string tail : {".b64 [%r2]", ".b64 [smem]", ".b64 %rd2", ".b32 [%rd2]", " [%rd2]", ".sync.aligned.b64 [%rd2]",
                           ".b64 [%rd2], [%rd3]"})
    cases.push_back({"tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster" + tail + ";"});
  for (std::string cta : {".cta_group::1", ".cta_group::2", ""})
    for (std::string shape : {".128x256b", ".4x256b", ".128x128b", ".64x128b", ".32x128b", ".16x256b", ""})
      for (std::string warp : {"", ".warpx2::02_13", ".warpx2::01_23", ".warpx4", ".warpx2"})
        cases.push_back({"tcgen05.cp" + cta + shape + warp + " [%r1], %rd2;"});
  for (std::string fmt : {".b8x16.b6x16_p32", ".b8x16.b4x16_p64", ".b8x16", ".b6x16_p32", ".b4x16_p64",
                          ".b6x16_p32.b8x16", ".b8x16.b8x16", ".b8x16.b6x16_p32.b4x16_p64"})
    for (std::string shape : {".128x256b", ".32x128b.warpx4"})
      cases.push_back({"tcgen05.cp.cta_group::1" + shape + fmt + " [%r1], %rd2;"});
  for (std::string ops : {"[%r1], %rd2", "[%rd1], %rd2", "%r1, %rd2", "[%r1], %r2", "[%r1], 5", "[%r1], [%rd2]",
                          "[%r1]", "[%r1], %rd2, %rd3", "[%r1], %fd2"})
    cases.push_back({"tcgen05.cp.cta_group::1.128x256b " + ops + ";"});
  return cases;
}

TEST(RuleAgreement, Tcgen05CommitAndCopy) {
  if (!find_cuda_tool("ptxas")) GTEST_SKIP() << "ptxas not installed";
  expect_agreement("tcgen05-commit-cp", commit_cp_cases());
}

std::vector<RuleCase> sync_cases() {
  std::vector<RuleCase> cases;
  for (std::string w : {".wait::ld", ".wait::st", ".wait"})
    for (std::string sync : {".sync.aligned", ".sync", ".aligned", "", ".sync.aligned.b32"})
      for (std::string ops : {"", " %r1"})
        cases.push_back({"tcgen05" + w + sync + ops + ";"});
  for (std::string f : {".fence::before_thread_sync", ".fence::after_thread_sync", ".fence",
                        ".fence::before_thread_sync.sync.aligned", ".fence::after_thread_sync.cta_group::1"})
    for (std::string ops : {"", " %r1"})
      cases.push_back({"tcgen05" + f + ops + ";"});
  for (std::string cta : {".cta_group::1", ".cta_group::2", ""})
    for (std::string dir : {".down", ".up", ""})
      cases.push_back({"tcgen05.shift" + cta + dir + " [%r1];"});
  for (std::string ops : {"[%rd1]", "%r1", "[%r1], %r2", "", "[%r1+16]"})
    cases.push_back({"tcgen05.shift.cta_group::1.down " + ops + ";"});
  cases.push_back({"tcgen05.shift.cta_group::1.down.sync.aligned [%r1];"});
  return cases;
}

TEST(RuleAgreement, Tcgen05WaitFenceShift) {
  if (!find_cuda_tool("ptxas")) GTEST_SKIP() << "ptxas not installed";
  expect_agreement("tcgen05-wait-fence-shift", sync_cases());
}

// One .cta_group per function: ptxas refuses a function that mixes them (with no line; the
// defect's line is the first instruction whose group differs). Whole modules, one per case.
TEST(RuleAgreement, Tcgen05OneCtaGroupPerFunction) {
  if (!find_cuda_tool("ptxas")) GTEST_SKIP() << "ptxas not installed";
  auto form = [](const std::string& which, int g) -> std::string {
    std::string cta = ".cta_group::" + std::to_string(g);
    if (which == "alloc") return "tcgen05.alloc" + cta + ".sync.aligned.shared::cta.b32 [smem], 32;";
    if (which == "dealloc") return "tcgen05.dealloc" + cta + ".sync.aligned.b32 %r1, 32;";
    if (which == "mma") return "tcgen05.mma" + cta + ".kind::f16 [%r1], %rd1, %rd2, %r2, %p1;";
    if (which == "commit") return "tcgen05.commit" + cta + ".mbarrier::arrive::one.shared::cluster.b64 [%rd3];";
    if (which == "cp") return "tcgen05.cp" + cta + ".128x256b [%r1], %rd1;";
    return "tcgen05.shift" + cta + ".down [%r1];";
  };
  const std::string head = ".version 9.0\n.target sm_100a\n.address_size 64\n.shared .align 16 .b8 smem[64];\n";
  const std::string regs = ".reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n.reg .pred %p<2>;\n";
  std::vector<testing::ModuleCase> cases;
  const std::vector<std::string> kinds = {"alloc", "dealloc", "mma", "commit", "cp", "shift"};
  for (std::string a : {"alloc", "mma"})  // the first tcgen05 instruction of a kernel, usually
    for (auto& b : kinds)
      for (int ga : {1, 2})
        for (int gb : {1, 2}) {
          std::string text = head + ".visible .entry k()\n{\n" + regs + form(a, ga) + "\n" + form(b, gb) + "\nret;\n}\n";
          cases.push_back({text, 11});
        }
  // Two functions, one group each: each function is judged on its own.
  for (int g : {1, 2}) {
    std::string text = head + ".func f()\n{\n" + regs + form("mma", 3 - g) + "\nret;\n}\n" +
                       ".visible .entry k()\n{\n" + regs + form("mma", g) + "\nret;\n}\n";
    cases.push_back({text, 16});
  }
  auto st = testing::agree_modules_with_ptxas(cases, "sm_100a");
  std::printf("%s\n", st.summary("tcgen05-one-cta-group").c_str());
  for (auto& p : st.problems) ADD_FAILURE() << p;
  EXPECT_EQ(st.false_alarms, 0);
  EXPECT_EQ(st.we_flag, st.ptxas_rejects);
  EXPECT_GT(st.ptxas_rejects, 0);
}

// Block-scaled kinds before PTX 8.8: .block16/.block32 and the implied scale vector size are
// later additions.
TEST(RuleAgreement, Tcgen05BlockScaleVersions) {
  if (!find_cuda_tool("ptxas")) GTEST_SKIP() << "ptxas not installed";
  auto cases = mma_kind_cases();
  expect_agreement("tcgen05-mma-kinds", cases, RuleHeader{"8.7", "sm_100a"});
}

std::vector<RuleCase> all_cases() {
  std::vector<RuleCase> all;
  for (auto* gen : {&ld_st_shapes, &ld_st_modifiers, &alloc_cases, &mma_kind_cases, &mma_operand_cases,
                    &commit_cp_cases, &sync_cases})
    for (auto& c : gen()) all.push_back(c);
  return all;
}

// A needs-target finding of the ISA table's target column ("'tcgen05.mma' is not supported on
// .target sm_103a"), as opposed to one of the per-feature target rules of check_tcgen05.cpp.
bool table_target_finding(const Diagnostic& d) {
  if (d.check_id != "needs-target") return false;
  size_t end = d.message.find("' is not supported");
  if (end == std::string::npos || d.message.rfind("'tcgen05.", 0) != 0) return false;
  std::string word = d.message.substr(9, end - 9);
  return word.find_first_of(".:") == std::string::npos;
}

// The other targets with tcgen05: the same verdicts, and no false alarm on what they accept.
// Which targets provide tcgen05 at all is the ISA table's target column, judged by
// IsaAgreement; here the version and target findings are set aside so that only the tcgen05
// rules are compared.
TEST(RuleAgreement, Tcgen05OtherTargets) {
  if (!find_cuda_tool("ptxas")) GTEST_SKIP() << "ptxas not installed";
  auto all = all_cases();
  for (std::string target : {"sm_103a", "sm_110a", "sm_100f", "sm_103f", "sm_110f"}) {
    RuleHeader h{"9.0", target};
    std::string head = testing::rule_module_head(h), text = head;
    std::vector<int> lines;
    for (auto& c : all) {
      lines.push_back(testing::count_lines(text) + 2 + testing::count_lines(c.setup));
      text += testing::case_text(c);
    }
    text += "ret;\n}\n";
    auto rejected = testing::ptxas_rejected_lines(text, target);
    int rejects = 0, flagged = 0, false_alarms = 0;
    for (size_t i = 0; i < all.size(); ++i) {
      auto ours = check_source(head + testing::case_text(all[i]) + "ret;\n}\n", ValidateOptions{false});
      int line = testing::count_lines(head) + 2 + testing::count_lines(all[i].setup);
      bool any = false, at_line = false;
      std::string first;
      for (auto& d : ours.diags.list()) {
        if (d.severity != Severity::error || d.check_id == "needs-version" || table_target_finding(d)) continue;
        any = true;
        at_line |= static_cast<int>(d.loc.line) == line;
        if (first.empty()) first = d.message + " [" + d.check_id + "]";
      }
      // Whether the instruction exists on the target at all is the table's target column.
      if (rejected.count(lines[i]) && rejected[lines[i]].rfind("Instruction '", 0) == 0) continue;
      if (rejected.count(lines[i])) {
        ++rejects;
        if (at_line) ++flagged;
        else ADD_FAILURE() << target << ": missed (ptxas: " << rejected[lines[i]] << "): " << all[i].line;
      } else if (any) {
        ++false_alarms;
        ADD_FAILURE() << target << ": false alarm (ptxas accepts): " << all[i].line << " -> " << first;
      }
    }
    std::printf("rules[tcgen05-all] on %s: %zu cases, ptxas rejects %d, we flag %d, %d false alarms\n", target.c_str(),
                all.size(), rejects, flagged, false_alarms);
  }
}

// On Hopper every tcgen05 instruction is refused, and we say so at the line.
TEST(RuleAgreement, Tcgen05NeedsBlackwell) {
  if (!find_cuda_tool("ptxas")) GTEST_SKIP() << "ptxas not installed";
  auto st = expect_agreement("tcgen05-on-hopper", all_cases(), RuleHeader{"9.0", "sm_90a"}, false);
  EXPECT_EQ(st.ptxas_rejects, st.cases);
}

}  // namespace
}  // namespace ptxforge::ptx
