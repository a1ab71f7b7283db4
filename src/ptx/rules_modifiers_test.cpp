// Modifier and immediate rules against ptxas: for each rule class, instructions generated over
// types, rounding modes and modifiers, accepted and rejected ones alike. ptxas judges them all;
// we must raise no error where ptxas accepts, and flag at the line every case ptxas rejects.
#include <gtest/gtest.h>

#include "ptx/isa.h"
#include "testing/rule_agreement.h"
#include "testing/rule_expect.h"
#include "util/paths.h"

namespace ptxforge::ptx {
namespace {

using testing::agree_with_ptxas;
using testing::RuleCase;
using testing::RuleHeader;

// A register of the prelude (rule_agreement.h) that holds a value of `type`.
std::string reg_for(std::string_view type, int n) {
  std::string r;
  if (type == ".f32") r = "%f";
  else if (type == ".f64") r = "%fd";
  else if (type == ".u64" || type == ".s64" || type == ".b64") r = "%rd";
  else if (type == ".u16" || type == ".s16" || type == ".b16" || type == ".f16" || type == ".bf16") r = "%h";
  else r = "%r";  // 8- and 32-bit integers, packed halves
  return r + std::to_string(n);
}

using testing::expect_agreement;

const std::vector<std::string> kScalarTypes = {".u8", ".s8", ".u16", ".s16", ".u32", ".s32", ".u64", ".s64",
                                               ".f16", ".bf16", ".f32", ".f64"};
const std::vector<std::string> kRoundings = {"", ".rn", ".rz", ".rm", ".rp", ".rni", ".rzi", ".rmi", ".rpi", ".rna"};

TEST(RuleAgreement, CvtRounding) {
  std::vector<RuleCase> cases;
  for (auto& to : kScalarTypes)
    for (auto& from : kScalarTypes)
      for (auto& rnd : kRoundings)
        for (std::string extra : {"", ".sat"}) {
          if (!extra.empty() && rnd != ".rn" && rnd != ".rzi" && !rnd.empty()) continue;
          cases.push_back({"cvt" + rnd + extra + to + from + " " + reg_for(to, 1) + ", " + reg_for(from, 2) + ";"});
        }
  expect_agreement("cvt-rounding", cases);
}

TEST(RuleAgreement, FloatArithmeticModifiers) {
  std::vector<RuleCase> cases;
  struct Op {
    std::string name;
    int sources;
  };
  for (auto& op : std::vector<Op>{{"add", 2}, {"sub", 2}, {"mul", 2}, {"mad", 3}, {"fma", 3}, {"div", 2}, {"sqrt", 1},
                                  {"rcp", 1}, {"rsqrt", 1}, {"ex2", 1}, {"lg2", 1}, {"sin", 1}, {"cos", 1}, {"tanh", 1}})
    for (std::string type : {".f32", ".f64"})
      for (std::string mods : {"", ".rn", ".rz", ".rm", ".rp", ".approx", ".full", ".approx.ftz", ".rn.ftz", ".ftz",
                               ".rni", ".rzi", ".sat", ".rn.sat"}) {
        std::string line = op.name + mods + type + " " + reg_for(type, 1);
        for (int s = 0; s < op.sources; ++s) line += ", " + reg_for(type, 2 + s);
        cases.push_back({line + ";"});
      }
  expect_agreement("float-arith-modifiers", cases);
}

TEST(RuleAgreement, IntegerArithmeticModifiers) {
  std::vector<RuleCase> cases;
  for (std::string op : {"add", "sub", "mul", "mad", "div", "rem"})
    for (std::string type : {".u16", ".s16", ".u32", ".s32", ".u64", ".s64", ".f32"})
      for (std::string mods : {"", ".lo", ".hi", ".wide", ".rn", ".rz", ".ftz", ".lo.rn"}) {
        bool wide = mods == ".wide";
        int bits = type_bits(type);
        auto wide_reg = [&](int n) {
          return bits == 16 ? "%r" + std::to_string(n) : bits == 32 ? "%rd" + std::to_string(n) : reg_for(type, n);
        };
        std::string d = wide ? wide_reg(1) : reg_for(type, 1);
        std::string line = op + mods + type + " " + d + ", " + reg_for(type, 2) + ", " + reg_for(type, 3);
        if (op == "mad") line += ", " + (wide ? wide_reg(4) : reg_for(type, 4));
        cases.push_back({line + ";"});
      }
  expect_agreement("int-arith-modifiers", cases);
}

TEST(RuleAgreement, RequiredChoices) {
  std::vector<RuleCase> cases;
  for (std::string mode : {"", ".up", ".down", ".bfly", ".idx"}) {
    cases.push_back({"shfl.sync" + mode + ".b32 %r1, %r2, 1, 31, -1;"});
    cases.push_back({"shfl.sync" + mode + ".b32 %r1|%p1, %r2, 1, 31, -1;"});
  }
  for (std::string cmp : {"", ".eq", ".lt", ".ge", ".hi", ".ltu", ".nan"})
    for (std::string type : {".s32", ".u32", ".f32", ".b32"}) {
      std::string r = type == ".f32" ? "%f" : "%r";
      cases.push_back({"setp" + cmp + type + " %p1, " + r + "1, " + r + "2;"});
      cases.push_back({"setp" + cmp + ".and" + type + " %p1, " + r + "1, " + r + "2, %p2;"});
      cases.push_back({"set" + cmp + ".u32" + type + " %r1, " + r + "2, " + r + "3;"});
    }
  expect_agreement("required-choice", cases);
}

TEST(RuleAgreement, SyncAndAlignedForms) {
  std::vector<RuleCase> cases;
  for (std::string q : {"", ".sync", ".aligned", ".sync.aligned"}) {
    cases.push_back({"mma" + q + ".m16n8k16.row.col.f32.f16.f16.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, "
                     "{%f5,%f6,%f7,%f8};"});
    cases.push_back({"mma" + q + ".m16n8k8.row.col.f16.f16.f16.f16 {%r1,%r2}, {%r3,%r4}, {%r5}, {%r6,%r7};"});
    cases.push_back({"ldmatrix" + q + ".m8n8.x1.shared.b16 {%r1}, [smem];"});
    cases.push_back({"ldmatrix" + q + ".m8n8.x4.trans.shared.b16 {%r1,%r2,%r3,%r4}, [smem];"});
    cases.push_back({"stmatrix" + q + ".m8n8.x1.shared.b16 [smem], {%r1};"});
    cases.push_back({"movmatrix" + q + ".m8n8.trans.b16 %r1, %r2;"});
    cases.push_back({"wgmma.fence" + q + ";"});
    cases.push_back({"wgmma.commit_group" + q + ";"});
    cases.push_back({"wgmma.wait_group" + q + " 1;"});
  }
  for (std::string mode : {".up", ".idx"}) {
    cases.push_back({"shfl" + mode + ".b32 %r1, %r2, 1, 31;"});
    cases.push_back({"shfl.sync" + mode + ".b32 %r1, %r2, 1, 31, -1;"});
  }
  for (std::string mode : {".any.pred %p1", ".all.pred %p1", ".uni.pred %p1", ".ballot.b32 %r1"}) {
    cases.push_back({"vote" + mode + ", %p2;"});
    cases.push_back({"vote.sync" + mode + ", %p2, -1;"});
  }
  expect_agreement("sync-aligned", cases);
}

TEST(RuleAgreement, AtomicOperationTypes) {
  std::vector<RuleCase> cases;
  for (std::string op : {".add", ".and", ".or", ".xor", ".cas", ".exch", ".inc", ".dec", ".min", ".max"})
    for (std::string type : {".b16", ".b32", ".b64", ".u32", ".s32", ".u64", ".s64", ".f32", ".f64", ".f16", ".bf16",
                             ".f16x2", ".bf16x2"}) {
      bool half = type == ".f16" || type == ".bf16" || type == ".f16x2" || type == ".bf16x2";
      std::string r1 = reg_for(type, 1), r2 = reg_for(type, 2), r3 = reg_for(type, 3);
      std::string tail = op == ".cas" ? ", " + r3 : "";
      for (std::string nf : half ? std::vector<std::string>{".noftz", ""} : std::vector<std::string>{""}) {
        cases.push_back({"atom.global" + op + nf + type + " " + r1 + ", [%rd10], " + r2 + tail + ";"});
        if (op != ".cas" && op != ".exch") cases.push_back({"red.global" + op + nf + type + " [%rd10], " + r2 + ";"});
        if (op == ".add" || op == ".cas" || op == ".min")
          cases.push_back({"atom.shared" + op + nf + type + " " + r1 + ", [smem], " + r2 + tail + ";"});
        if (half && (op == ".add" || op == ".min" || op == ".max")) {
          std::string v = type.back() == '2' ? "%r" : "%h";
          cases.push_back({"atom.global.v2" + op + nf + type + " {" + v + "1, " + v + "2}, [%rd10], {" + v + "3, " + v +
                           "4};"});
          cases.push_back({"red.global.v2" + op + nf + type + " [%rd10], {" + v + "3, " + v + "4};"});
        }
      }
    }
  // Version 8.1 has the f16/bf16 min/max forms, so the operation-type rule is judged there too.
  RuleHeader h;
  h.version = "8.1";
  expect_agreement("atomic-op-type", cases, h);
  RuleHeader newest;
  newest.version = "9.0";
  newest.target = "sm_100a";
  expect_agreement("atomic-op-type-sm100a", cases, newest);
}

TEST(RuleAgreement, ImmediateValues) {
  std::vector<RuleCase> cases;
  for (std::string id : {"0", "1", "15", "16", "31", "-1", "%r1"}) {
    cases.push_back({"bar.sync " + id + ";"});
    cases.push_back({"barrier.sync " + id + ";"});
    cases.push_back({"barrier.sync.aligned " + id + ", 64;"});
    cases.push_back({"bar.arrive " + id + ", 64;"});
    cases.push_back({"bar.red.popc.u32 %r2, " + id + ", %p1;"});
  }
  for (std::string n : {"32", "64", "33", "0", "1", "1024", "1056", "-32", "%r1"}) {
    cases.push_back({"bar.sync 1, " + n + ";"});
    cases.push_back({"bar.arrive 1, " + n + ";"});
    cases.push_back({"barrier.arrive 2, " + n + ";"});
    cases.push_back({"bar.red.and.pred %p2, 1, " + n + ", %p1;"});
  }
  for (std::string mode : {".ca", ".cg"})
    for (std::string size : {"4", "8", "16", "32", "2", "12", "0"}) {
      cases.push_back({"cp.async" + mode + ".shared.global [smem], [%rd1], " + size + ";"});
      cases.push_back({"cp.async" + mode + ".shared.global [smem], [%rd1], " + size + ", %r1;"});
    }
  for (std::string n : {"24", "32", "240", "256", "16", "264", "30", "0", "100", "-8"}) {
    cases.push_back({"setmaxnreg.inc.sync.aligned.u32 " + n + ";"});
    cases.push_back({"setmaxnreg.dec.sync.aligned.u32 " + n + ";"});
  }
  for (std::string n : {"0", "1", "7", "8", "100", "-1"}) {
    cases.push_back({"wgmma.wait_group.sync.aligned " + n + ";"});
    cases.push_back({"cp.async.wait_group " + n + ";"});
    cases.push_back({"cp.async.bulk.wait_group " + n + ";"});
  }
  expect_agreement("immediate-values", cases);
}

// Half types: .bf16 operands live in .b16 registers only (.bf16x2 in .b32), not .f16, .u16 or
// wider ones; .f16 takes .f16/.b16 (a wider .bN under cvt's relaxed rule). ld, ldu, st and mov
// take no half type at all. Registers and variables are declared with fundamental types only.
TEST(RuleAgreement, HalfTypesAndDeclarations) {
  std::vector<RuleCase> cases;
  const std::string half_regs = ".reg .f16x2 %hx<4>;\n";
  for (std::string r : {"%h1", "%hf1", "%us1", "%r1", "%f1", "%rd1"}) {
    cases.push_back({"cvt.rn.bf16.f32 " + r + ", %f2;"});
    cases.push_back({"cvt.rn.f16.f32 " + r + ", %f2;"});
    cases.push_back({"cvt.f32.bf16 %f2, " + r + ";"});
    cases.push_back({"cvt.f32.f16 %f2, " + r + ";"});
    cases.push_back({"cvt.rn.bf16.f16 " + r + ", %h2;"});
    for (std::string op : {"neg", "abs"}) cases.push_back({op + ".bf16 " + r + ", %h2;"});
    cases.push_back({"max.bf16 %h2, " + r + ", %h3;"});
    cases.push_back({"fma.rn.bf16 " + r + ", %h2, %h3, %h4;"});
    cases.push_back({"fma.rn.f16 " + r + ", %h2, %h3, %h4;"});
  }
  for (std::string r : {"%r1", "%u1", "%hx1", "%f1"}) {
    cases.push_back({"fma.rn.bf16x2 " + r + ", %r2, %r3, %r4;", half_regs});
    cases.push_back({"fma.rn.f16x2 " + r + ", %r2, %r3, %r4;", half_regs});
    cases.push_back({"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f1, %f2, %f3, %f4}, {" + r +
                         ", %r2, %r3, %r4}, {%r5, %r6}, {%f1, %f2, %f3, %f4};",
                     half_regs});
  }
  for (std::string t : {".f16", ".bf16", ".f16x2", ".bf16x2", ".b16", ".u16", ".b32", ".f32"}) {
    std::string r = t == ".f16" || t == ".bf16" || t == ".b16" || t == ".u16" ? "%h1" : t == ".f32" ? "%f1" : "%r1";
    cases.push_back({"ld.global" + t + " " + r + ", [%rd1];"});
    cases.push_back({"ld.shared.v2" + t + " {" + r + ", " + r + "}, [smem];"});
    cases.push_back({"ldu.global" + t + " " + r + ", [%rd1];"});
    cases.push_back({"st.global" + t + " [%rd1], " + r + ";"});
    cases.push_back({"mov" + t + " " + r + ", " + r + ";"});
  }
  for (std::string t : {".bf16", ".bf16x2", ".tf32", ".e4m3", ".e5m2x2", ".u16x2", ".f32x2", ".f16", ".f16x2", ".b128",
                        ".u8", ".pred"}) {
    cases.push_back({".reg " + t + " %x1;"});
    if (t != ".pred") cases.push_back({".shared .align 16 " + t + " sx[4];"});
    cases.push_back({".local .align 16 " + t + " lx;"});
  }
  cases.push_back({".reg .v2 .f16x2 %x1;"});
  cases.push_back({".reg .v2 .bf16x2 %x1;"});
  expect_agreement("half-types", cases, RuleHeader{"8.3"});
}

// A declaration whose type is no PTX type at all (a typo, another language's name, a width
// PTX lacks) is a syntax error to ptxas in every state space, an unused .shared one too; real
// types beside them, the opaque ones included, must pass.
std::vector<std::string> kNotTypes = {".f22", ".u31", ".b12", ".s128", ".f128", ".float", ".int", ".i32", ".f8",
                                      ".u48", ".x"};
TEST(RuleAgreement, DeclarationsOfNoType) {
  std::vector<RuleCase> cases;
  std::vector<std::string> types = kNotTypes;
  for (std::string t : {".u32", ".f32", ".b8", ".s64", ".f16x2"}) types.push_back(t);
  for (auto& t : types) {
    cases.push_back({".reg " + t + " %x1;"});
    cases.push_back({".reg " + t + " %xs<3>;"});
    cases.push_back({".shared .align 16 " + t + " sx[4];"});
    cases.push_back({".local .align 16 " + t + " lx;"});
    cases.push_back({".reg .v2 " + t + " %xv;"});
  }
  expect_agreement("no-type", cases, RuleHeader{"8.3"});
}

// The same at module scope and in parameter lists: .global, .const, kernel and function
// parameters, the opaque .texref/.surfref and a .ptr parameter beside them.
TEST(RuleAgreement, ModuleDeclarationsOfNoType) {
  std::vector<testing::ModuleCase> cases;
  const std::string head = ".version 8.3\n.target sm_90a\n.address_size 64\n";
  std::vector<std::string> types = kNotTypes;
  for (std::string t : {".u32", ".f64", ".b16"}) types.push_back(t);
  for (auto& t : types) {
    cases.push_back({head + ".global .align 8 " + t + " g[4];\n", 4});
    cases.push_back({head + ".const .align 8 " + t + " c;\n", 4});
    cases.push_back({head + ".visible .entry k(\n.param " + t + " p)\n{\nret;\n}\n", 5});
    cases.push_back({head + ".func f(\n.param " + t + " p)\n{\nret;\n}\n", 5});
  }
  cases.push_back({head + ".global .texref tex;\n.global .surfref srf;\n", 4});
  cases.push_back({head + ".visible .entry k(\n.param .u64 .ptr .global .align 16 p)\n{\nret;\n}\n", 5});
  testing::expect_module_agreement("no-type, module", cases);
}

// .b128 declarations before PTX 8.3, in every state space a kernel body declares; .b64 ones
// beside them must pass. (At 8.3, HalfTypesAndDeclarations shows .b128 declarations accepted.)
TEST(RuleAgreement, B128DeclarationsNeedPtx83) {
  std::vector<RuleCase> cases;
  for (std::string t : {".b128", ".b64"}) {
    cases.push_back({".reg " + t + " %x1;"});
    cases.push_back({".reg " + t + " %xs<3>;"});
    cases.push_back({".shared .align 16 " + t + " sx[4];"});
    cases.push_back({".local .align 16 " + t + " lx;"});
  }
  expect_agreement("b128-declarations", cases, RuleHeader{"8.2"});
}

// Vector operands: ptxas judges an ld/st vector's elements more loosely than a scalar (a .f32
// vector takes .u32 registers) but wants one width and no integer beside a float; an mma
// fragment passes when one of its registers fits.
TEST(RuleAgreement, VectorElements) {
  std::vector<RuleCase> cases;
  const std::vector<std::pair<std::string, std::string>> same = {{"%r1", "%r2"}, {"%u1", "%u2"}, {"%s1", "%s2"},
                                                                  {"%f1", "%f2"}, {"%rd1", "%rd2"}, {"%ud1", "%ud2"},
                                                                  {"%fd1", "%fd2"}, {"%h1", "%h2"}};
  const std::vector<std::pair<std::string, std::string>> mixed = {{"%r1", "%u1"}, {"%u1", "%f1"}, {"%s1", "%u1"},
                                                                   {"%r1", "%f1"}, {"%r1", "%rd1"}, {"%f1", "%fd1"},
                                                                   {"%f1", "%s1"}, {"%h1", "%r1"}};
  for (std::string t : {".f32", ".u32", ".s32", ".b32", ".f64", ".u64", ".b64"}) {
    for (auto* set : {&same, &mixed})
      for (auto& [a, b] : *set) {
        cases.push_back({"ld.global.v2" + t + " {" + a + ", " + b + "}, [%rd3];"});
        cases.push_back({"st.shared.v2" + t + " [smem], {" + a + ", " + b + "};"});
      }
  }
  for (auto& [a, b] : mixed) {
    cases.push_back({"mov.b64 %rd3, {" + a + ", " + b + "};"});
    cases.push_back({"mov.b64 {" + a + ", " + b + "}, %rd3;"});
  }
  for (std::string first : {"%u1", "%s1", "%f1", "%r1"})
    for (std::string rest : {"%r2, %r3, %r4", "%u2, %u3, %u4", "%f2, %f3, %f4"})
      for (std::string t : {".bf16", ".f16"})
        cases.push_back({"mma.sync.aligned.m16n8k16.row.col.f32" + t + t + ".f32 {%f5, %f6, %f7, %f8}, {" + first + ", " +
                         rest + "}, {%r5, %r6}, {%f5, %f6, %f7, %f8};"});
  expect_agreement("vector-elements", cases);
}

}  // namespace
}  // namespace ptxforge::ptx
