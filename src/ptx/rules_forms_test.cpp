// The opcode-shape rules of check_async_forms.cpp and the tensor reduction, prefetch and
// gather/scatter forms of check_tma.cpp, against ptxas: each class generates accepted and
// rejected forms from real instructions of the Hopper and Blackwell families (a modifier
// written twice, a type dropped or added, a predicate as an address, memory order and scope
// pairs, barrier.cluster's operation word, cluster launch control), assembles them with ptxas
// in one run, and requires no error where ptxas accepts and an error at the line where it
// rejects.
#include <gtest/gtest.h>

#include "ptx/isa.h"
#include "testing/rule_agreement.h"
#include "testing/rule_expect.h"
#include "util/paths.h"
#include "util/text.h"

namespace ptxforge::ptx {
namespace {

using testing::agree_with_ptxas;
using testing::RuleCase;
using testing::RuleHeader;

const RuleHeader kHopper{"8.4", "sm_90a"};
const RuleHeader kBlackwell{"8.7", "sm_100a"};
const std::string kSetup = ".reg .b128 %q<4>;\n";

using testing::expect_agreement;

// Real instructions of each family, as nvcc and the libraries write them (all accepted).
const std::vector<std::string> kBlackwellLines = {
    "mbarrier.init.shared::cta.b64 [smem], 32;",
    "mbarrier.arrive.release.cta.shared::cta.b64 %rd1, [smem];",
    "mbarrier.arrive.expect_tx.shared::cta.b64 _, [smem], 16;",
    "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p1, [smem], %r1;",
    "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [smem], 16;",
    "mbarrier.pending_count.b64 %r1, %rd1;",
    "cp.async.bulk.commit_group;",
    "cp.async.bulk.wait_group.read 0;",
    "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [smem], [%rd1], 16, [smem+1024];",
    "cp.async.bulk.global.shared::cta.bulk_group [%rd1], [smem], 16;",
    "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%rd1], [smem], 16;",
    "cp.async.bulk.prefetch.L2.global [%rd1], 16;",
    "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint [smem], "
    "[%rd1, {%r1, %r2}], [smem+1024], %rd2;",
    "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%rd1, {%r1, %r2}], [smem];",
    "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%rd1, {%r1, %r2}], [smem];",
    "cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%rd1, {%r1, %r2}];",
    "prefetch.tensormap [%rd1];",
    "prefetch.global.L2::evict_last [%rd1];",
    "tensormap.replace.tile.global_address.global.b1024.b64 [%rd1], %rd2;",
    "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%rd1], [smem], 128;",
    "setmaxnreg.inc.sync.aligned.u32 64;",
    "elect.sync %r1|%p1, -1;",
    "fence.proxy.async.shared::cta;",
    "fence.mbarrier_init.release.cluster;",
    "fence.acq_rel.gpu;",
    "fence.proxy.tensormap::generic.release.gpu;",
    "stmatrix.sync.aligned.m8n8.x4.trans.shared::cta.b16 [smem], {%r1, %r2, %r3, %r4};",
    "ldmatrix.sync.aligned.m8n8.x4.trans.shared::cta.b16 {%r1, %r2, %r3, %r4}, [smem];",
    "movmatrix.sync.aligned.m8n8.trans.b16 %r1, %r2;",
    "griddepcontrol.wait;",
    "clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.multicast::cluster::all.b128 "
    "[smem], [smem+16];",
    "clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 %p1, %q1;",
    "clusterlaunchcontrol.query_cancel.get_first_ctaid.v4.b32.b128 {%r1, %r2, %r3, _}, %q1;",
    "clusterlaunchcontrol.query_cancel.get_first_ctaid::y.b32.b128 %r1, %q1;",
    "multimem.ld_reduce.relaxed.sys.global.add.u32 %r1, [%rd1];",
    "multimem.st.relaxed.sys.global.u32 [%rd1], %r1;",
    "redux.sync.min.abs.NaN.f32 %f1, %f2, -1;",
    "mapa.shared::cluster.u32 %r1, %r2, %r3;",
    "barrier.cluster.arrive.release.aligned;",
    "barrier.cluster.wait.acquire.aligned;",
    "add.rn.ftz.f32x2 %rd1, %rd2, %rd3;",
    "fma.rn.f32x2 %rd1, %rd2, %rd3, %rd4;",
    "cvt.rn.satfinite.relu.e4m3x2.f32 %h1, %f1, %f2;",
    "cvt.rn.f16x2.e4m3x2 %r1, %h1;",
    "cvt.rn.bf16x2.f32 %r1, %f1, %f2;",
    "cvt.rz.satfinite.ue8m0x2.f32 %h1, %f1, %f2;",
};
const std::vector<std::string> kHopperLines = {
    "wgmma.fence.sync.aligned;",
    "wgmma.commit_group.sync.aligned;",
    "wgmma.wait_group.sync.aligned 0;",
    "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%f1, %f2, %f3, %f4}, %rd1, %rd2, 1, 1, 1, 0, 0;",
    "wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.u8.satfinite {%r1, %r2, %r3, %r4}, %rd1, %rd2, 1;",
    "setmaxnreg.dec.sync.aligned.u32 40;",
    "mapa.u64 %rd1, %rd2, %r3;",
    "barrier.cluster.arrive.relaxed;",
};

// The opcode and operand text of a line, and the opcode's words ("cp", ".async", ...).
std::pair<std::string, std::string> split_line(const std::string& line) {
  size_t sp = line.find(' ');
  if (sp == std::string::npos) return {line.substr(0, line.size() - 1), ";"};
  return {line.substr(0, sp), line.substr(sp)};
}
std::vector<std::string> words(const std::string& opcode) {
  std::vector<std::string> w;
  size_t start = 0;
  for (size_t i = 1; i <= opcode.size(); ++i)
    if (i == opcode.size() || opcode[i] == '.') {
      w.push_back(opcode.substr(start, i - start));
      start = i;
    }
  return w;
}
std::string join(const std::vector<std::string>& w) {
  std::string s;
  for (auto& x : w) s += x;
  return s;
}

// Each modifier written twice, each type dropped, the last type written again.
std::vector<RuleCase> repeated_and_type_cases(const std::vector<std::string>& lines) {
  std::vector<RuleCase> cases;
  for (auto& line : lines) {
    cases.push_back({line, kSetup});
    auto [opcode, rest] = split_line(line);
    auto w = words(opcode);
    for (size_t i = 1; i < w.size(); ++i) {
      auto dup = w;
      dup.insert(dup.begin() + static_cast<long>(i), w[i]);
      cases.push_back({join(dup) + rest, kSetup});
      if (is_type_name(w[i])) {
        auto drop = w;
        drop.erase(drop.begin() + static_cast<long>(i));
        cases.push_back({join(drop) + rest, kSetup});
      }
    }
    if (is_type_name(w.back())) cases.push_back({opcode + ".b32" + rest, kSetup});
  }
  return cases;
}

TEST(RuleAgreement, RepeatedModifiersAndTypeCounts) {
  expect_agreement("repeated-and-types", repeated_and_type_cases(kBlackwellLines), kBlackwell);
  expect_agreement("repeated-and-types", repeated_and_type_cases(kHopperLines), kHopper);
}

// Every address of the lines above through a predicate register.
std::vector<RuleCase> pred_address_cases() {
  std::vector<RuleCase> cases;
  for (auto& line : kBlackwellLines) {
    for (std::string from : {"[smem]", "[%rd1]", "[%rd1, "}) {
      size_t at = line.find(from);
      if (at == std::string::npos) continue;
      std::string to = from == "[%rd1, " ? "[%p1, " : "[%p1]";
      cases.push_back({line.substr(0, at) + to + line.substr(at + from.size()), kSetup});
      cases.push_back({line, kSetup});
    }
  }
  return cases;
}

TEST(RuleAgreement, PredicateAddresses) { expect_agreement("pred-address", pred_address_cases(), kBlackwell); }

// The tensor-memory addresses of tcgen05 through a predicate. ptxas refuses each ("Arguments
// mismatch for instruction 'add'") but reports it once per module, so each case is a module.
TEST(RuleAgreement, TensorMemoryAddressesThroughAPredicate) {
  std::vector<testing::ModuleCase> cases;
  for (std::string a : {"%r2", "%p1"})
    for (std::string line : {"tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r1}, [A];",
                             "tcgen05.st.sync.aligned.32x32b.x1.b32 [A], {%r1};",
                             "tcgen05.mma.cta_group::1.kind::f16 [A], %rd1, %rd2, %r3, %p2;",
                             "tcgen05.cp.cta_group::1.128x256b [A], %rd1;", "tcgen05.shift.cta_group::1.down [A];"}) {
      line.replace(line.find('A'), 1, a);
      cases.push_back({".version 8.7\n.target sm_100a\n.address_size 64\n.visible .entry k()\n{\n"
                       "  .reg .b32 %r<4>;\n  .reg .b64 %rd<4>;\n  .reg .pred %p<3>;\n  setp.eq.u32 %p1, %r1, 0;\n"
                       "  setp.eq.u32 %p2, %r1, 1;\n  " + line + "\n  ret;\n}\n",
                       11});
    }
  testing::expect_module_agreement("tcgen05-pred-address", cases, "sm_100a");
}

// Memory order and scope: mbarrier, fence (plain, proxy, mbarrier_init), barrier.cluster.
std::vector<RuleCase> order_scope_cases() {
  std::vector<RuleCase> cases;
  for (std::string sem : {"", ".release", ".relaxed", ".acquire"})
    for (std::string scope : {"", ".cta", ".cluster", ".gpu"}) {
      cases.push_back({"mbarrier.arrive" + sem + scope + ".shared::cta.b64 %rd1, [smem];"});
      cases.push_back({"mbarrier.arrive_drop" + sem + scope + ".shared::cta.b64 %rd1, [smem];"});
      cases.push_back({"mbarrier.arrive.expect_tx" + sem + scope + ".shared::cta.b64 %rd1, [smem], 16;"});
      cases.push_back({"mbarrier.try_wait" + sem + scope + ".shared::cta.b64 %p1, [smem], %rd1;"});
      cases.push_back({"mbarrier.test_wait.parity" + sem + scope + ".shared::cta.b64 %p1, [smem], %r1;"});
      cases.push_back({"mbarrier.expect_tx" + sem + scope + ".shared::cta.b64 [smem], 16;"});
    }
  for (std::string kind : {"", ".proxy", ".proxy.async", ".proxy.async.shared::cta", ".proxy.async.shared",
                           ".proxy.alias", ".proxy.tensormap::generic", ".mbarrier_init"})
    for (std::string sem : {"", ".sc", ".acq_rel", ".release", ".acquire"})
      for (std::string scope : {"", ".cta", ".cluster", ".gpu"}) {
        if (kind == ".proxy.tensormap::generic" && sem == ".acquire") continue;  // takes operands
        if (kind.empty() && sem.empty() && scope.empty()) continue;
        cases.push_back({"fence" + kind + sem + scope + ";"});
      }
  cases.push_back({"fence.proxy.tensormap::generic.acquire.gpu [%rd1], 128;"});
  cases.push_back({"fence.proxy.async.shared::cta.shared::cluster;"});
  cases.push_back({"fence.proxy.async.global.shared::cta;"});
  cases.push_back({"fence.proxy.tensormap::generic.acquire [%rd1], 128;"});
  for (std::string op : {"", ".arrive", ".wait", ".arrive.wait", ".wait.arrive"})
    for (std::string sem : {"", ".release", ".relaxed", ".acquire"})
      for (std::string al : {"", ".aligned"}) {
        cases.push_back({"barrier.cluster" + op + sem + al + ";"});
        if (!op.empty() && (!sem.empty() || !al.empty())) cases.push_back({"barrier.cluster" + sem + al + op + ";"});
      }
  return cases;
}

TEST(RuleAgreement, MemoryOrderAndScope) { expect_agreement("order-scope", order_scope_cases(), kBlackwell); }

std::vector<RuleCase> cluster_launch_control_cases() {
  std::vector<RuleCase> cases;
  const std::string T = "clusterlaunchcontrol.try_cancel";
  for (std::string a : {".async", ""})
    for (std::string sp : {".shared::cta", "", ".shared::cluster", ".global"})
      for (std::string cm : {".mbarrier::complete_tx::bytes", ""})
        for (std::string mc : {"", ".multicast::cluster::all", ".multicast::cluster"})
          for (std::string t : {".b128", "", ".b64"}) {
            if ((a.empty() + sp.empty() + cm.empty() + !mc.empty() + (t != ".b128")) > 2) continue;
            cases.push_back({T + a + sp + cm + mc + t + " [smem], [smem+16];", kSetup});
          }
  for (std::string ops : {"[%r1], [%r2]", "[%rd1], [%rd2]", "%r1, [%r2]", "[%r1], %r2", "[%r1]", "[%r1], [%r2], [%r3]"})
    cases.push_back({T + ".async.shared::cta.mbarrier::complete_tx::bytes.b128 " + ops + ";", kSetup});
  const std::string Q = "clusterlaunchcontrol.query_cancel";
  for (std::string q : {".is_canceled", ".get_first_ctaid", ".get_first_ctaid::x", ".get_first_ctaid::z",
                        ".get_first_ctaid::w", "", ".is_canceled.get_first_ctaid::x"})
    for (std::string t : {".pred.b128", ".v4.b32.b128", ".b32.b128", ".b128", ".pred", ".b64.b128", ".v2.b32.b128"})
      for (std::string ops : {"%p1, %q1", "{%r1, %r2, %r3, _}, %q1", "%r1, %q1"})
        cases.push_back({Q + q + t + " " + ops + ";", kSetup});
  for (std::string ops : {"%p1, %rd1", "%r1, %q1", "%p1, %q1, %q1", "%p1", "%p1, [smem]"})
    cases.push_back({Q + ".is_canceled.pred.b128 " + ops + ";", kSetup});
  for (std::string ops : {"{%r1, %r2, %r3}, %q1", "{%r1, %r2, %r3, %r4}, %q1", "{%rd1, %rd2, %rd3, _}, %q1",
                          "%r1, %q1"})
    cases.push_back({Q + ".get_first_ctaid.v4.b32.b128 " + ops + ";", kSetup});
  for (std::string ops : {"%rd1, %q1", "%r1, %rd1", "%f1, %q1", "%p1, %q1"})
    cases.push_back({Q + ".get_first_ctaid::x.b32.b128 " + ops + ";", kSetup});
  return cases;
}

TEST(RuleAgreement, ClusterLaunchControl) {
  expect_agreement("clusterlaunchcontrol", cluster_launch_control_cases(), kBlackwell);
}

// The tensor forms beside the plain copy: reductions, prefetches, gather4/scatter4 rows,
// .cta_group, and the dimension count every form needs.
std::vector<RuleCase> tensor_form_cases() {
  std::vector<RuleCase> cases;
  auto co = [](int n) {
    std::string s = "{";
    for (int i = 0; i < n; ++i) s += (i ? ", %r" : "%r") + std::to_string(i + 1);
    return s + "}";
  };
  const std::string L = "cp.async.bulk.tensor";
  for (std::string mode : {".tile::gather4", ".tile::scatter4", ".tile"})
    for (std::string d : {".2d", ".3d", ""})
      for (int n : {2, 4, 5}) {
        cases.push_back({L + d + ".shared::cluster.global" + mode + ".mbarrier::complete_tx::bytes [smem], [%rd1, " +
                         co(n) + "], [smem+1024];"});
        cases.push_back({L + d + ".global.shared::cta" + mode + ".bulk_group [%rd1, " + co(n) + "], [smem];"});
        cases.push_back({"cp.async.bulk.prefetch.tensor" + d + ".L2.global" + mode + " [%rd1, " + co(n) + "];"});
      }
  for (std::string cg : {".cta_group::1", ".cta_group::2"}) {
    cases.push_back({L + ".2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes" + cg +
                     " [smem], [%rd1, {%r1, %r2}], [smem+1024];"});
    cases.push_back({L + ".2d" + cg + ".shared::cta.global.tile.mbarrier::complete_tx::bytes"
                     " [smem], [%rd1, {%r1, %r2}], [smem+1024];"});
    cases.push_back({L + ".2d.global.shared::cta.tile.bulk_group" + cg + " [%rd1, {%r1, %r2}], [smem];"});
    cases.push_back({"cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group" + cg +
                     " [%rd1, {%r1, %r2}], [smem];"});
  }
  const std::string R = "cp.reduce.async.bulk.tensor";
  for (std::string d : {".2d", ""})
    for (std::string sp : {".global.shared::cta", ".shared::cta.global", ".shared::cluster.global"})
      for (std::string redop : {".add", ".min", ".xor", ""})
        for (std::string cm : {".bulk_group", "", ".mbarrier::complete_tx::bytes"})
          for (std::string ops : {"[%rd1, {%r1, %r2}], [smem]", "[%rd1, {%r1, %r2, %r3}], [smem]",
                                  "[%rd1, {%r1, %r2}], [smem], [smem]"}) {
            if (d.empty() + (sp != ".global.shared::cta") + redop.empty() + (cm != ".bulk_group") +
                    (ops != "[%rd1, {%r1, %r2}], [smem]") > 1)
              continue;
            cases.push_back({R + d + sp + redop + ".tile" + cm + " " + ops + ";"});
          }
  cases.push_back({R + ".2d.global.shared::cta.add.tile.bulk_group.L2::cache_hint [%rd1, {%r1, %r2}], [smem], %rd2;"});
  cases.push_back({R + ".2d.global.shared::cta.add.tile.bulk_group.L2::cache_hint [%rd1, {%r1, %r2}], [smem];"});
  const std::string P = "cp.async.bulk.prefetch.tensor";
  for (std::string lvl : {".L2.global", ".global", ".L2"})
    for (std::string d : {".2d", ""})
      for (std::string ops : {"[%rd1, {%r1, %r2}]", "[%rd1, {%r1, %r2, %r3}]", "[%rd1, {%r1, %r2}], %rd2", ""}) {
        if (d.empty() + (lvl != ".L2.global") + (ops != "[%rd1, {%r1, %r2}]") > 1) continue;
        cases.push_back({P + d + lvl + (ops.empty() ? ";" : " " + ops + ";")});
      }
  cases.push_back({P + ".2d.L2.global.L2::cache_hint [%rd1, {%r1, %r2}], %rd2;"});
  cases.push_back({P + ".3d.L2.global.im2col [%rd1, {%r1, %r2, %r3}], {%h1};"});
  cases.push_back({P + ".3d.L2.global.im2col [%rd1, {%r1, %r2, %r3}];"});
  cases.push_back({P + ".3d.L2.global.im2col [%rd1, {%r1, %r2, %r3}], {%h1, %h2};"});
  cases.push_back({L + ".shared::cluster.global.tile.mbarrier::complete_tx::bytes [smem], [%rd1, {%r1, %r2}], "
                       "[smem+1024];"});
  // ptxas takes the shared-memory operands of a tensor copy bare (a register of any type, or a
  // variable), but not as an immediate; the tensor operand is always [tmap, {coordinates}].
  const std::string L2 = L + ".2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes ";
  for (std::string dst : {"%r1", "%rd3", "%f1", "%h1", "smem", "16", "[smem]"})
    cases.push_back({L2 + dst + ", [%rd1, {%r1, %r2}], [smem+1024];"});
  for (std::string mbar : {"%r4", "%rd4", "smem", "64", "[%r4]"})
    cases.push_back({L2 + "[smem], [%rd1, {%r1, %r2}], " + mbar + ";"});
  cases.push_back({L2 + "[smem], %rd1, [smem+1024];"});
  for (std::string src : {"%r3", "smem", "128", "[smem]"})
    cases.push_back({L + ".2d.global.shared::cta.tile.bulk_group [%rd1, {%r1, %r2}], " + src + ";"});
  cases.push_back({L + ".global.shared::cta.tile.bulk_group [%rd1, {%r1, %r2}], [smem];"});
  return cases;
}

// Operand types ptxas is lenient about in these families: mapa's signed types, a predicate
// among ldmatrix/stmatrix registers.
std::vector<RuleCase> lenient_cases() {
  std::vector<RuleCase> cases;
  for (std::string t : {".u32", ".s32", ".b32", ".f32"}) cases.push_back({"mapa.shared::cluster" + t + " %r1, %r2, %r3;"});
  for (std::string t : {".u64", ".s64", ".b64"}) cases.push_back({"mapa" + t + " %rd1, %rd2, %r3;"});
  for (std::string v : {"{%p1}", "{%r1}", "{%rd1}", "{%h1}", "{%f1}"}) {
    cases.push_back({"stmatrix.sync.aligned.m8n8.x1.shared::cta.b16 [smem], " + v + ";"});
    cases.push_back({"ldmatrix.sync.aligned.m8n8.x1.shared::cta.b16 " + v + ", [smem];"});
  }
  cases.push_back({"stmatrix.sync.aligned.m8n8.x4.shared::cta.b16 [smem], {%p1, %r2, %r3, %r4};"});
  return cases;
}

TEST(RuleAgreement, LenientOperands) { expect_agreement("lenient", lenient_cases(), kBlackwell); }

// Shapes and operand positions: ld/st/movmatrix without a shape, ld/stmatrix without their
// matrix count (or with two), movmatrix register widths,
// mbarrier's single address and the place of .expect_tx/.parity, tcgen05 address registers,
// the order of clusterlaunchcontrol's types, tensor-copy modifiers and trailing operands.
std::vector<RuleCase> shape_cases() {
  std::vector<RuleCase> c;
  for (std::string shape : {".m8n8", ""}) {
    c.push_back({"ldmatrix.sync.aligned.x4.trans" + shape + ".shared.b16 {%r1, %r2, %r3, %r4}, [smem];"});
    c.push_back({"stmatrix.sync.aligned.x4" + shape + ".shared.b16 [smem], {%r1, %r2, %r3, %r4};"});
    c.push_back({"movmatrix.sync.aligned" + shape + ".trans.b16 %r1, %r2;"});
  }
  // Tensor copies and reductions with a state space dropped (or both).
  for (std::string sp : {".shared::cluster.global", ".global", ".shared::cluster", ""})
    c.push_back({"cp.async.bulk.tensor.2d" + sp + ".tile.mbarrier::complete_tx::bytes [smem], [%rd1, {%r1, %r2}], [smem+1024];"});
  for (std::string sp : {".global.shared::cta", ".global", ".shared::cta", ""}) {
    c.push_back({"cp.async.bulk.tensor.2d" + sp + ".tile.bulk_group [%rd1, {%r1, %r2}], [smem];"});
    c.push_back({"cp.reduce.async.bulk.tensor.2d" + sp + ".add.tile.bulk_group [%rd1, {%r1, %r2}], [smem];"});
  }
  // The matrix count (.x1, .x2, .x4): required, once.
  for (std::string num : {".x1", ".x2", ".x4", "", ".x4.x4", ".x2.x4"}) {
    c.push_back({"ldmatrix.sync.aligned" + num + ".trans.m8n8.shared.b16 {%r1, %r2, %r3, %r4}, [smem];"});
    c.push_back({"stmatrix.sync.aligned.m8n8" + num + ".shared.b16 [smem], {%r1, %r2, %r3, %r4};"});
  }
  for (std::string ops : {"%rd1, %r2", "%h1, %r2", "%r1, %h2", "%f1, %r2", "%r1, %f2", "%p1, %r2"})
    c.push_back({"movmatrix.sync.aligned.m8n8.trans.b16 " + ops + ";"});
  for (std::string line : {"mbarrier.arrive.shared::cta.b64 _, [smem], [smem];", "mbarrier.arrive.shared::cta.b64 _, [smem], 1;",
                           "mbarrier.arrive.expect_tx.shared::cta.b64 _, [smem], [smem];",
                           "mbarrier.init.shared::cta.b64 [smem], [smem];",
                           "mbarrier.try_wait.parity.shared::cta.b64 %p1, [smem], [smem];",
                           "mbarrier.arrive.shared::cta.expect_tx.b64 _, [smem], 16;",
                           "mbarrier.arrive.release.cta.expect_tx.shared::cta.b64 _, [smem], 16;",
                           "mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [smem], 16;",
                           "mbarrier.arrive.shared::cta.noComplete.b64 %rd1, [smem], 1;",
                           "mbarrier.arrive_drop.shared::cta.expect_tx.b64 _, [smem], 16;",
                           "mbarrier.try_wait.shared::cta.parity.b64 %p1, [smem], %r1;",
                           "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p1, [smem], %r1;",
                           "mbarrier.try_wait.acquire.cta.parity.shared::cta.b64 %p1, [smem], %r1;",
                           "mbarrier.test_wait.shared::cta.parity.b64 %p1, [smem], %r1;"})
    c.push_back({line});
  for (std::string a : {"[%r1]", "[%h1]", "[%p1]", "[%f1]", "[%rd1]", "[%r1+16]"}) {
    // (tcgen05.ld through a predicate: ptxas reports it once per module, so it is judged a
    // module at a time, in TensorMemoryAddressesThroughAPredicate.)
    if (a != "[%p1]") c.push_back({"tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r2}, " + a + ";"});
    c.push_back({"tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 " + a + ", 32;"});
    c.push_back({"tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 " + a + ";"});
  }
  const std::string Q = "clusterlaunchcontrol.query_cancel";
  c.push_back({Q + ".get_first_ctaid.v4.b128.b32 {%r1, %r2, %r3, _}, %q1;", kSetup});
  c.push_back({Q + ".get_first_ctaid.b32.v4.b128 {%r1, %r2, %r3, _}, %q1;", kSetup});
  c.push_back({Q + ".is_canceled.b128.pred %p1, %q1;", kSetup});
  c.push_back({Q + ".get_first_ctaid::x.b128.b32 %r1, %q1;", kSetup});
  c.push_back({Q + ".v4.get_first_ctaid.b32.b128 {%r1, %r2, %r3, _}, %q1;", kSetup});
  const std::string T = "cp.async.bulk.tensor.3d.shared::cta.global.mbarrier::complete_tx::bytes.L2::cache_hint ";
  c.push_back({T + "[smem], [%rd1, {%r1, %r2, %r3}], [smem+1024], %rd2;"});
  c.push_back({T + "[smem], [%rd1, {%r1, %r2, %r3}], %rd2, [smem+1024];"});
  for (std::string m : {".block_scale", ".satfinite", ".L2::evict_last", ".tile"}) {
    c.push_back({"cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group" + m + " [%rd1, {%r1, %r2}], [smem];"});
    c.push_back({"cp.async.bulk.prefetch.tensor.2d.L2.global.tile" + m + " [%rd1, {%r1, %r2}];"});
  }
  return c;
}

TEST(RuleAgreement, ShapesAndOperandPositions) {
  expect_agreement("shapes", shape_cases(), RuleHeader{"9.0", "sm_100a"});
  std::vector<RuleCase> hopper;
  for (std::string mods : {".m64n8k16.f32.bf16.bf16", ".f32.bf16.bf16", ".m64n8k16.f16.f32.f16", ".m64n8k16.f32.f16.f32",
                           ".m64n8k16.f32.bf16.s32"})
    hopper.push_back({"wgmma.mma_async.sync.aligned" + mods + " {%f1, %f2, %f3, %f4}, %rd1, %rd2, 1, 1, 1, 0, 0;"});
  expect_agreement("wgmma-shapes", hopper, kHopper);
}

TEST(RuleAgreement, TensorReducePrefetchGather) {
  expect_agreement("tensor-forms", tensor_form_cases(), kBlackwell);
}

// Sparse wgmma: K per input type (twice the dense K), the metadata register, the sparsity
// selector's range per type, operand counts, A in registers; and its PTX version (8.2).
std::vector<RuleCase> wgmma_sparse_cases() {
  std::vector<RuleCase> cases;
  const std::string base = "wgmma.mma_async.sp.sync.aligned.m64n8k";
  struct Kind {
    std::string types;
    int k;
    std::string acc, tail;
  };
  const std::vector<Kind> kinds = {{".f32.f16.f16", 32, "{%f1, %f2, %f3, %f4}", ", 1, 1, 1, 0, 0"},
                                   {".f32.bf16.bf16", 32, "{%f1, %f2, %f3, %f4}", ", 1, 1, 1, 0, 0"},
                                   {".f32.tf32.tf32", 16, "{%f1, %f2, %f3, %f4}", ", 1, 1, 1"},
                                   {".f32.e4m3.e5m2", 64, "{%f1, %f2, %f3, %f4}", ", 1, 1, 1"},
                                   {".s32.s8.s8", 64, "{%r1, %r2, %r3, %r4}", ", 1"}};
  for (auto& kd : kinds) {
    for (int k : {kd.k / 2, kd.k, kd.k * 2})
      cases.push_back({base + std::to_string(k) + kd.types + " " + kd.acc + ", %rd1, %rd2, %r9, 0" + kd.tail + ";"});
    std::string head = base + std::to_string(kd.k) + kd.types + " " + kd.acc + ", %rd1, %rd2, ";
    for (std::string sel : {"0", "1", "2", "3", "-1", "%r8"}) cases.push_back({head + "%r9, " + sel + kd.tail + ";"});
    for (std::string meta : {"%rd3", "%h1", "0", "%f9", "%p1", "[smem]"}) cases.push_back({head + meta + ", 0" + kd.tail + ";"});
    cases.push_back({head + "0" + kd.tail + ";"});
    cases.push_back({head + "%r9, 0" + kd.tail + ", 1;"});
    cases.push_back({head + "%r9" + kd.tail + ";"});
    cases.push_back({head + "%r9, 0, 1, 2" + kd.tail.substr(std::min<size_t>(kd.tail.size(), 6)) + ";"});
  }
  cases.push_back({base + "32.f32.bf16.bf16 {%f1, %f2, %f3, %f4}, {%r3, %r4, %r5, %r6}, %rd2, %r9, 0, 1, 1, 1, 0;"});
  cases.push_back({base + "32.f32.bf16.bf16 {%f1, %f2, %f3, %f4}, {%r3, %r4, %r5, %r6}, %rd2, %r9, 0, 1, 1, 1, 0, 0;"});
  cases.push_back({base + "32.f32.bf16.bf16 {%f1, %f2, %f3, %f4}, %r3, %rd2, %r9, 0, 1, 1, 1, 0, 0;"});
  cases.push_back({base + "256.s32.b1.b1.and.popc {%r1, %r2, %r3, %r4}, %rd1, %rd2, %r9, 0, 1;"});
  cases.push_back({"wgmma.mma_async.sp.aligned.m64n8k32.f32.bf16.bf16 {%f1, %f2, %f3, %f4}, %rd1, %rd2, %r9, 0, 1, 1, 1, 0, 0;"});
  return cases;
}

TEST(RuleAgreement, WgmmaSparse) {
  expect_agreement("wgmma.sp", wgmma_sparse_cases(), RuleHeader{"8.2", "sm_90a"});
  expect_agreement("wgmma.sp", wgmma_sparse_cases(), kHopper);
}

TEST(RuleAgreement, WgmmaSparseNeedsPtx82) {
  if (!find_cuda_tool("ptxas")) GTEST_SKIP() << "ptxas not installed";
  std::vector<RuleCase> cases = {
      {"wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.bf16.bf16 {%f1, %f2, %f3, %f4}, %rd1, %rd2, %r9, 0, 1, 1, 1, 0, 0;"},
      {"wgmma.mma_async.sp.sync.aligned.m64n8k64.s32.s8.s8 {%r1, %r2, %r3, %r4}, %rd1, %rd2, %r9, 0, 1;"},
      {"wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%f1, %f2, %f3, %f4}, %rd1, %rd2, 1, 1, 1, 0, 0;"}};
  auto st = agree_with_ptxas(cases, RuleHeader{"8.1", "sm_90a"});
  for (auto& p : st.problems) ADD_FAILURE() << p;
  EXPECT_EQ(st.ptxas_rejects, 2);
  EXPECT_EQ(st.we_flag, 2);
  EXPECT_EQ(st.false_alarms, 0);
}

// The plain bulk copies (no tensor map): directions, completion mechanisms, multicast, byte
// masks, cache hints, the size operand, and the reduction and prefetch forms.
std::vector<RuleCase> bulk_copy_cases() {
  std::vector<RuleCase> cases;
  const std::string C = "cp.async.bulk";
  const std::vector<std::string> spaces = {".shared::cluster", ".shared::cta", ".global"};
  for (auto& dst : spaces)
    for (auto& src : spaces)
      for (std::string cm : {".mbarrier::complete_tx::bytes", ".bulk_group", ""}) {
        std::string d = dst == ".global" ? "[%rd1]" : dst == ".shared::cluster" ? "[%r1]" : "[smem]";
        std::string sr = src == ".global" ? "[%rd2]" : "[smem+512]";
        bool group = dst == ".global";
        cases.push_back({C + dst + src + cm + " " + d + ", " + sr + ", 16" + (group ? "" : ", [smem+1024]") + ";"});
        cases.push_back({"cp.reduce.async.bulk" + dst + src + cm + ".add.u32 " + d + ", " + sr + ", 16" +
                         (group ? "" : ", [smem+1024]") + ";"});
      }
  const std::string L = C + ".shared::cluster.global.mbarrier::complete_tx::bytes";
  const std::string S = C + ".global.shared::cta.bulk_group";
  for (std::string size : {"16", "12", "0", "%r3", "%rd3", "%h3"}) {
    cases.push_back({L + " [smem], [%rd1], " + size + ", [smem+1024];"});
    cases.push_back({S + " [%rd1], [smem], " + size + ";"});
    cases.push_back({C + ".prefetch.L2.global [%rd1], " + size + ";"});
  }
  for (std::string mods : {"", ".multicast::cluster", ".L2::cache_hint", ".multicast::cluster.L2::cache_hint", ".cta_group::1"})
    for (std::string extra : {"", ", %h1", ", %r1", ", %rd2", ", %h1, %rd2"}) {
      cases.push_back({L + mods + " [smem], [%rd1], 16, [smem+1024]" + extra + ";"});
      cases.push_back({C + ".shared::cta.global.mbarrier::complete_tx::bytes" + mods + " [smem], [%rd1], 16, [smem+1024]" +
                       extra + ";"});
    }
  for (std::string mods : {"", ".L2::cache_hint", ".cp_mask", ".L2::cache_hint.cp_mask", ".multicast::cluster"})
    for (std::string extra : {"", ", %h1", ", %rd2", ", %rd2, %h1", ", [smem+1024]"})
      cases.push_back({S + mods + " [%rd1], [smem], 16" + extra + ";"});
  for (std::string ops : {"[smem], %rd1, 16, [smem+1024]", "smem, [%rd1], 16, [smem+1024]", "[smem], [%rd1], 16, %rd3",
                          "[smem], [%rd1], 16"})
    cases.push_back({L + " " + ops + ";"});
  for (std::string mods : {".L2.global", ".global", ".L2", ".L2.global.L2::cache_hint"})
    for (std::string extra : {"", ", %rd2"}) cases.push_back({C + ".prefetch" + mods + " [%rd1], 16" + extra + ";"});
  cases.push_back({C + ".prefetch.L2.global [%rd1];"});
  const std::string R = "cp.reduce.async.bulk.global.shared::cta";
  for (std::string m : {".bulk_group.add.u32", ".bulk_group.u32", ".add.u32", ".bulk_group.add.noftz.f16",
                        ".bulk_group.inc.u32", ".bulk_group.and.b32", ".bulk_group.add.f32"})
    cases.push_back({R + m + " [%rd1], [smem], 16;"});
  cases.push_back({R + ".bulk_group.add.u32 [%rd1], [smem], 16, [smem];"});
  return cases;
}

TEST(RuleAgreement, BulkCopies) { expect_agreement("bulk-copy", bulk_copy_cases(), kBlackwell); }

// cvt between a narrow packed float and another type: every pairing, each written with the
// rounding, saturation and operands its destination takes, so that the pairing is the only
// question (fp8 from .bf16x2, .f16x2 from .ue8m0x2, .bf16x2 from .f16x2, ...).
std::vector<RuleCase> cvt_pair_cases() {
  std::vector<RuleCase> cases;
  auto narrow = [](const std::string& t) { return t.find('e') == 1 || t.find("ue8m0") == 1; };
  auto dest = [](const std::string& t) {
    return t == ".e2m1x2" ? "%c1" : t == ".f32" ? "%f1" : t.back() == '4' || t.find("16x2") != std::string::npos ? "%r1" : "%h1";
  };
  for (std::string to : {".e4m3x2", ".e5m2x2", ".e2m1x2", ".e2m3x2", ".ue8m0x2", ".e4m3x4", ".f16x2", ".bf16x2", ".f32"})
    for (std::string from : {".f32", ".f16x2", ".bf16x2", ".e4m3x2", ".e5m2x2", ".e2m1x2", ".e3m2x2", ".ue8m0x2"}) {
      bool half = (to == ".f16x2" || to == ".bf16x2") && (from == ".f16x2" || from == ".bf16x2");
      if (to == from || !(narrow(to) || narrow(from) || half)) continue;
      bool x4 = to.back() == '4';
      std::string src = from == ".f32" ? (x4 ? "{%f1, %f2, %f3, %f4}, %r2" : "%f1, %f2")
                        : from.find("16x2") != std::string::npos ? (x4 ? "{%r3, %r4}, %r2" : "%r2")
                        : from == ".e2m1x2" ? "%c2" : "%h2";
      std::string mods = x4 ? ".rs.satfinite" : to == ".ue8m0x2" ? ".rz.satfinite" : narrow(to) ? ".rn.satfinite" : ".rn";
      std::string head = "cvt" + mods + to + from + " " + dest(to) + ", ";
      cases.push_back({head + src + ";", ".reg .b8 %c<4>;\n"});
      // One operand too many, and the last one dropped (where there are two or more).
      cases.push_back({head + src + ", " + dest(to) + ";", ".reg .b8 %c<4>;\n"});
      size_t comma = src.rfind(", ");
      if (comma != std::string::npos && src.back() != '}')
        cases.push_back({head + src.substr(0, comma) + ";", ".reg .b8 %c<4>;\n"});
      // The destination register's width and type: widening, and the pair from two .f32
      // (.f16x2 takes .b32, .b64 or .f16x2; .bf16x2 only .b32; .u32, .s32 and .f32 neither).
      if (narrow(from) && !narrow(to))
        for (std::string d : {"%rd1", "%f1", "%h1", "%x1", "%u1", "%s1"})
          cases.push_back({"cvt" + mods + to + from + " " + d + ", " + src + ";",
                           ".reg .b8 %c<4>;\n.reg .f16x2 %x1;\n.reg .u32 %u1;\n.reg .s32 %s1;\n"});
    }
  // The pair from two .f32 into each kind of register, with the modifiers these forms take.
  for (std::string to : {".f16x2", ".bf16x2"})
    for (std::string mods : {".rn", ".rz.relu", ".rn.satfinite"})
      for (std::string d : {"%r1", "%rd1", "%f1", "%h1", "%x1", "%u1", "%s1"})
        cases.push_back({"cvt" + mods + to + ".f32 " + d + ", %f1, %f2;",
                         ".reg .f16x2 %x1;\n.reg .u32 %u1;\n.reg .s32 %s1;\n"});
  // A 16-bit pair goes to a .b16 register only.
  for (std::string head : {"cvt.rn.satfinite.e4m3x2.f32", "cvt.rn.satfinite.e5m2x2.f32", "cvt.rn.satfinite.e2m3x2.f32",
                           "cvt.rn.satfinite.e3m2x2.f32", "cvt.rz.satfinite.ue8m0x2.f32"})
    for (std::string d : {"%h1", "%uh1", "%sh1", "%fh1", "%r1"})
      cases.push_back({head + " " + d + ", %f1, %f2;", ".reg .u16 %uh1;\n.reg .s16 %sh1;\n.reg .f16 %fh1;\n"});
  return cases;
}

TEST(RuleAgreement, NarrowCvtPairs) { expect_agreement("cvt-pairs", cvt_pair_cases(), kBlackwell); }

}  // namespace
}  // namespace ptxforge::ptx
