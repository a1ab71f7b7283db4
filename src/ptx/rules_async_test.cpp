// The asynchronous-instruction rules (check_async_ops.cpp) against ptxas: for each rule class,
// forms generated over shapes, types, modifiers and operand lists, accepted and rejected ones
// alike, on sm_90a and sm_100a. We must raise no error where ptxas accepts and flag, at the
// line, every form ptxas rejects.
#include <gtest/gtest.h>

#include "testing/rule_agreement.h"
#include "testing/rule_expect.h"
#include "util/paths.h"

namespace ptxforge::ptx {
namespace {

using testing::agree_with_ptxas;
using testing::RuleCase;
using testing::RuleHeader;

using testing::expect_agreement;

const RuleHeader kHopper{"8.0", "sm_90a"};
const RuleHeader kHopper84{"8.4", "sm_90a"};
const RuleHeader kBlackwell{"8.7", "sm_100a"};

std::string regs(const std::string& prefix, int n) {
  std::string s = "{";
  for (int i = 0; i < n; ++i) s += (i ? ", " : "") + prefix + std::to_string(i);
  return s + "}";
}
// Accumulators beyond the prelude's registers: each case declares its own.
const std::string kAccSetup = ".reg .f32 %a<130>;\n.reg .b32 %ai<130>;\n";

std::vector<RuleCase> wgmma_cases() {
  std::vector<RuleCase> cases;
  auto add = [&](std::string line) { cases.push_back({std::move(line), kAccSetup}); };
  const std::string base = "wgmma.mma_async.sync.aligned";
  struct In {
    std::string a, b;
  };
  // Shapes: every input kind with K in {8,16,32,256} and a few N, both accumulators.
  for (std::string t : {".f16", ".bf16", ".tf32", ".e4m3", ".e5m2", ".s8", ".u8", ".b1"})
    for (int k : {8, 16, 32, 256})
      for (int n : {8, 24, 40, 48, 256}) {
        bool integer = t == ".s8" || t == ".u8" || t == ".b1";
        bool half = t == ".f16" || t == ".bf16";
        std::string d = integer ? ".s32" : ".f32";
        std::string acc = regs(integer ? "%ai" : "%a", n / 2);
        std::string tail = integer ? "1" : half ? "1, 1, 1, 0, 0" : "1, 1, 1";
        std::string op = t == ".b1" ? ".and.popc" : "";
        add(base + ".m64n" + std::to_string(n) + "k" + std::to_string(k) + d + t + t + op + " " + acc +
            ", %rd1, %rd2, " + tail + ";");
      }
  // Pairing and accumulator types.
  for (std::string a : {".f16", ".bf16", ".tf32", ".e4m3", ".e5m2", ".s8", ".u8"})
    for (std::string b : {".f16", ".bf16", ".tf32", ".e4m3", ".e5m2", ".s8", ".u8"})
      for (std::string d : {".f32", ".f16", ".s32"}) {
        int k = a == ".tf32" ? 8 : (a == ".f16" || a == ".bf16") ? 16 : 32;
        bool half = a == ".f16" || a == ".bf16";
        bool integer = a == ".s8" || a == ".u8";
        std::string acc = d == ".f16" ? regs("%ai", 2) : regs(d == ".s32" ? "%ai" : "%a", 4);
        std::string tail = integer ? "1" : half ? "1, 1, 1, 0, 0" : "1, 1, 1";
        add(base + ".m64n8k" + std::to_string(k) + d + a + b + " " + acc + ", %rd1, %rd2, " + tail + ";");
      }
  // Operands: descriptors, scale-d, imm-scale-a/b, imm-trans-a/b, counts, A in registers.
  const std::string f16 = base + ".m64n8k16.f32.f16.f16 " + regs("%a", 4) + ", ";
  const std::string fp8 = base + ".m64n8k32.f32.e4m3.e5m2 " + regs("%a", 4) + ", ";
  const std::string s8 = base + ".m64n8k32.s32.s8.s8 " + regs("%ai", 4) + ", ";
  for (std::string desc : {"%rd1", "%ud1", "%sd1", "%r1", "%u1", "%fd1", "%f1", "%h1"}) {
    add(f16 + desc + ", %rd2, 1, 1, 1, 0, 0;");
    add(f16 + "%rd2, " + desc + ", 1, 1, 1, 0, 0;");
    add(s8 + "%rd2, " + desc + ", 1;");
  }
  for (std::string v : {"0", "1", "2", "-1", "%p1", "!%p1", "%r1"}) {
    add(f16 + "%rd1, %rd2, " + v + ", 1, 1, 0, 0;");
    add(f16 + "%rd1, %rd2, 1, " + v + ", 1, 0, 0;");
    add(f16 + "%rd1, %rd2, 1, 1, " + v + ", 0, 0;");
    add(f16 + "%rd1, %rd2, 1, 1, 1, " + v + ", 0;");
    add(f16 + "%rd1, %rd2, 1, 1, 1, 0, " + v + ";");
    add(f16 + "{%r1, %r2, %r3, %r4}, %rd2, 1, 1, 1, " + v + ";");
    add(fp8 + "%rd1, %rd2, " + v + ", 1, " + v + ";");
    add(s8 + "%rd1, %rd2, " + v + ";");
  }
  for (int n = 1; n <= 9; ++n) {
    std::string tail;
    for (int i = 3; i < n; ++i) tail += i == 3 ? ", 1" : i < 6 ? ", 1" : ", 0";
    add(f16 + "%rd1, %rd2" + tail + ";");
    add(f16 + "{%r1, %r2, %r3, %r4}, %rd2" + tail + ";");
    add(fp8 + "%rd1, %rd2" + tail + ";");
    add(s8 + "%rd1, %rd2" + tail + ";");
  }
  // .sync/.aligned, and .b1's operation.
  for (std::string q : {"", ".sync", ".aligned", ".sync.aligned"})
    add("wgmma.mma_async" + q + ".m64n8k16.f32.bf16.bf16 " + regs("%a", 4) + ", %rd1, %rd2, 1, 1, 1, 0, 0;");
  for (std::string op : {"", ".and", ".popc", ".and.popc", ".xor.popc"})
    add(base + ".m64n8k256.s32.b1.b1" + op + " " + regs("%ai", 4) + ", %rd1, %rd2, 1;");
  return cases;
}

TEST(RuleAgreement, WgmmaOperands) {
  auto cases = wgmma_cases();
  expect_agreement("wgmma", cases, kHopper);
  expect_agreement("wgmma", cases, kHopper84);
}

std::vector<RuleCase> tensor_copy_cases() {
  std::vector<RuleCase> cases;
  const std::string P = "cp.async.bulk.tensor";
  auto co = [](int n) { return regs("%r", n); };
  // Dimensions against the coordinate vector, loads and stores, tile and im2col.
  for (int d = 1; d <= 5; ++d)
    for (int n : {d - 1, d, d + 1}) {
      if (n < 1) continue;
      std::string dd = "." + std::to_string(d) + "d";
      cases.push_back({P + dd + ".shared::cluster.global.tile.mbarrier::complete_tx::bytes [smem], [%rd1, " + co(n) +
                       "], [smem+1024];"});
      cases.push_back({P + dd + ".global.shared::cta.tile.bulk_group [%rd1, " + co(n) + "], [smem];"});
      cases.push_back({P + dd + ".global.shared::cta.im2col_no_offs.bulk_group [%rd1, " + co(n) + "], [smem];"});
      for (int k : {d - 3, d - 2, d - 1})
        if (k >= 1)
          cases.push_back({P + dd + ".shared::cluster.global.im2col.mbarrier::complete_tx::bytes [smem], [%rd1, " + co(d) +
                           "], [smem+1024], " + regs("%h", k) + ";"});
    }
  // Directions and completion mechanisms.
  const std::vector<std::string> spaces = {".shared::cluster", ".shared::cta", ".global"};
  for (auto& dst : spaces)
    for (auto& src : spaces)
      for (std::string cm : {"", ".mbarrier::complete_tx::bytes", ".bulk_group"})
        for (std::string mode : {".tile", ""}) {
          std::string head = P + ".2d" + dst + src + mode + cm;
          if (dst == ".global") cases.push_back({head + " [%rd1, " + co(2) + "], [smem];"});
          else cases.push_back({head + " [smem], [%rd1, " + co(2) + "], [smem+1024];"});
        }
  // Multicast, cache hints and their operands; im2col operand kinds.
  const std::string L = P + ".2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes";
  const std::string S = P + ".2d.global.shared::cta.tile.bulk_group";
  for (std::string mods : {"", ".multicast::cluster", ".L2::cache_hint", ".multicast::cluster.L2::cache_hint"})
    for (std::string extra : {"", ", %h1", ", 3", ", %r3", ", %rd3", ", %h1, %rd3", ", %h1, %r3", ", %r3, %rd3"}) {
      cases.push_back({L + mods + " [smem], [%rd1, " + co(2) + "], [smem+1024]" + extra + ";"});
      cases.push_back({S + mods + " [%rd1, " + co(2) + "], [smem]" + extra + ";"});
    }
  for (std::string off : {"%h1", "{%r1}", "{%h1}", "{%h1, %h2}", "{%us1}"})
    cases.push_back({P + ".3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [smem], [%rd1, " + co(3) +
                     "], [smem+1024], " + off + ";"});
  for (std::string c : {"{%r1, %r2}", "{%u1, %s2}", "{%rd1, %rd2}", "{%h1, %h2}", "{%f1, %f2}", "{1, 2}"})
    cases.push_back({L + " [smem], [%rd1, " + c + "], [smem+1024];"});
  cases.push_back({L + " [smem], [%rd1], [smem+1024];"});
  cases.push_back({S + " [%rd1], [smem];"});
  return cases;
}

TEST(RuleAgreement, TensorCopyOperands) {
  auto cases = tensor_copy_cases();
  expect_agreement("cp.async.bulk.tensor", cases, kHopper);
  expect_agreement("cp.async.bulk.tensor", cases, kBlackwell);
}

std::vector<RuleCase> misc_cases() {
  std::vector<RuleCase> cases;
  for (std::string dir : {"", ".inc", ".dec", ".inc.dec"})
    for (std::string q : {"", ".sync", ".aligned", ".sync.aligned"})
      for (std::string t : {".u32", ".s32", ""}) cases.push_back({"setmaxnreg" + dir + q + t + " 64;"});
  for (std::string d : {"%r1|%p1", "_|%p1", "%r1|_", "%p1|%r1", "%u1|%p1", "%rd1|%p1", "%h1|%p1", "%r1|%r2", "%p1|%p2"})
    cases.push_back({"elect.sync " + d + ", -1;"});
  for (std::string f : {"mbarrier.arrive", "mbarrier.arrive_drop"})
    for (std::string m : {".expect_tx", ".noComplete", ".noComplete.expect_tx", ""})
      for (std::string ops : {"%rd1, [smem]", "%rd1, [smem], 16", "%rd1, [smem], %r1", "_, [smem], 16"}) {
        cases.push_back({f + m + ".shared.b64 " + ops + ";"});
        cases.push_back({f + m + ".release.cta.shared::cta.b64 " + ops + ";"});
      }
  for (std::string m : {"", ".wait", ".launch_dependents", ".wait.launch_dependents"})
    cases.push_back({"griddepcontrol" + m + ";"});
  return cases;
}

TEST(RuleAgreement, WarpgroupControlOperands) {
  auto cases = misc_cases();
  expect_agreement("async-control", cases, RuleHeader{"8.3", "sm_90a"});
  expect_agreement("async-control", cases, kBlackwell);
}

std::vector<RuleCase> tensormap_cases() {
  std::vector<RuleCase> cases;
  const std::string F = "tensormap.cp_fenceproxy";
  for (std::string sp : {".global.shared::cta", ".shared::cta.global"})
    for (std::string m : {".tensormap::generic.release.gpu.sync.aligned", ".tensormap::generic.release.cta.sync.aligned",
                          ".release.gpu.sync.aligned", ".tensormap::generic.acquire.gpu.sync.aligned",
                          ".tensormap::generic.release.gpu.sync", ".tensormap::generic.release.gpu.aligned",
                          ".tensormap::generic.release.gpu"})
      for (std::string n : {"128", "64", "%r1"}) {
        bool g = sp == ".global.shared::cta";
        cases.push_back({F + sp + m + (g ? " [%rd1], [smem], " : " [smem], [%rd1], ") + n + ";"});
      }
  const std::string R = "tensormap.replace";
  for (std::string field : {".global_address", ".rank", ".global_dim", ".global_stride", ".element_stride", ".box_dim",
                            ".elemtype", ".interleave_layout", ".swizzle_mode", ".fill_mode"})
    for (std::string t : {".b32", ".b64"})
      for (std::string ops : {"%r2", "%rd2", "1", "0, %r2", "1, %rd2", "4, %r2", "5, %r2", "%r1, %r2", "3", "7"})
        cases.push_back({R + ".tile" + field + ".global.b1024" + t + " [%rd1], " + ops + ";"});
  cases.push_back({R + ".global_address.global.b1024.b64 [%rd1], %rd2;"});
  cases.push_back({R + ".tile.global_address.global.b64 [%rd1], %rd2;"});
  cases.push_back({R + ".tile.global_address.shared::cta.b1024.b64 [smem], %rd2;"});
  // The forms real code writes, one thing changed: a scope dropped or doubled, a modifier the
  // instruction lacks, an operand added or dropped, an address without brackets, the operands
  // the wrong way round; and the tensormap proxy fence's size.
  const std::string ok = ".global.shared::cta.tensormap::generic.release";
  for (std::string scope : {".gpu", ".cta", ".cluster", ".sys", "", ".gpu.cta"})
    for (std::string extra : {"", ".ws", ".relaxed", ".b64"})
      cases.push_back({F + ok + scope + ".sync.aligned" + extra + " [%rd1], [smem], 128;"});
  for (std::string ops : {"[%rd1], [smem], 128, 128", "[%rd1], [smem]", "%rd1, [smem], 128", "[%rd1], %r1, 128",
                          "[smem], [%rd1], 128", "[%rd1], [%rd2], 128"})
    cases.push_back({F + ok + ".gpu.sync.aligned " + ops + ";"});
  for (std::string ops : {"[%rd1], %rd2", "%rd1, %rd2", "%rd2, [%rd1]", "[%rd1], [%rd2]"})
    cases.push_back({R + ".tile.global_address.global.b1024.b64 " + ops + ";"});
  for (std::string ops : {"[%rd1], 1, %r2", "%rd1, 1, %r2", "%r2, 1, [%rd1]"})
    cases.push_back({R + ".tile.global_dim.global.b1024.b32 " + ops + ";"});
  for (std::string sp : {"", ".global", ".shared::cta", ".shared::cluster"}) {
    cases.push_back({"fence.proxy.tensormap::generic.acquire.gpu" + sp + " [%rd1], 128;"});
    cases.push_back({"fence.proxy.tensormap::generic.release.gpu" + sp + ";"});
  }
  for (std::string field : {".global_address", ""})
    cases.push_back({R + ".tile" + field + ".global.b1024.b64 [%rd1], %rd2;"});
  for (std::string n : {"128", "127", "129", "1000", "0", "%r1"})
    for (std::string sem : {".acquire", ".release"})
      cases.push_back({"fence.proxy.tensormap::generic" + sem + ".gpu [%rd1], " + n + ";"});
  return cases;
}

TEST(RuleAgreement, TensormapOperands) {
  auto cases = tensormap_cases();
  expect_agreement("tensormap", cases, RuleHeader{"8.3", "sm_90a"});
  expect_agreement("tensormap", cases, kBlackwell);
}

std::vector<RuleCase> narrow_cvt_cases(bool blackwell) {
  std::vector<RuleCase> cases;
  struct Form {
    std::string to, from, ops;
  };
  std::vector<Form> forms = {{".e4m3x2", ".f32", "%h1, %f1, %f2"}, {".e5m2x2", ".f32", "%h1, %f1, %f2"},
                             {".e4m3x2", ".f16x2", "%h1, %r1"},    {".e5m2x2", ".f16x2", "%h1, %r1"},
                             {".f16x2", ".e4m3x2", "%r1, %h1"},    {".f16x2", ".e5m2x2", "%r1, %h1"}};
  if (blackwell) {
    for (Form f : std::vector<Form>{{".e2m1x2", ".f32", "%c1, %f1, %f2"},  {".e2m3x2", ".f32", "%h1, %f1, %f2"},
                                    {".e3m2x2", ".f32", "%h1, %f1, %f2"},  {".ue8m0x2", ".f32", "%h1, %f1, %f2"},
                                    {".ue8m0x2", ".bf16x2", "%h1, %r1"},   {".bf16x2", ".ue8m0x2", "%r1, %h1"},
                                    {".f16x2", ".e2m1x2", "%r1, %c1"},     {".f16x2", ".e2m3x2", "%r1, %h1"},
                                    {".f16x2", ".e3m2x2", "%r1, %h1"}})
      forms.push_back(f);
  }
  for (auto& f : forms)
    for (std::string rnd : {"", ".rn", ".rz", ".rm", ".rp", ".rna", ".rs", ".rni"})
      for (std::string extra : {".satfinite", "", ".satfinite.relu", ".relu"})
        cases.push_back({"cvt" + rnd + extra + f.to + f.from + " " + f.ops + ";", ".reg .b8 %c<4>;\n"});
  // The two sources of a pair from .f32 take 32-bit registers only, not a wider one.
  std::vector<std::pair<std::string, std::string>> pairs = {{".e4m3x2", "%h1"}, {".f16x2", "%r1"}, {".bf16x2", "%r1"}};
  if (blackwell) pairs.push_back({".ue8m0x2", "%h1"});
  for (auto& [to, d] : pairs)
    for (std::string src : {"%f1, %f2", "%r2, %r3", "%u1, %f2", "%rd1, %f2", "%f1, %rd2", "%fd1, %f2", "%f1, %h2", "%f1, %ud1"}) {
      std::string rnd = to == ".ue8m0x2" ? ".rz" : ".rn";
      cases.push_back({"cvt" + rnd + ".satfinite" + to + ".f32 " + d + ", " + src + ";", ".reg .b8 %c<4>;\n"});
    }
  return cases;
}

TEST(RuleAgreement, NarrowFloatConversions) {
  expect_agreement("cvt-narrow-float", narrow_cvt_cases(false), RuleHeader{"8.1", "sm_90a"});
  expect_agreement("cvt-narrow-float", narrow_cvt_cases(true), kBlackwell);
}

}  // namespace
}  // namespace ptxforge::ptx
