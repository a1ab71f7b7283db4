// The structural rule classes (special registers, branch targets, register ranges, entry-only
// directives, initializers, read-only spaces, declaration order, address widths, mbarrier
// operands) judged against ptxas: every variant is generated, ptxas decides, and we must flag
// at the defect's line exactly what ptxas rejects and nothing it accepts.
#include <iostream>

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "ptx/isa.h"
#include "testing/rule_agreement.h"
#include "util/paths.h"

namespace ptxforge::ptx {
namespace {

using testing::AgreementStats;
using testing::ModuleCase;
using testing::RuleCase;
using testing::RuleHeader;

void expect_agreement(const AgreementStats& st, const std::string& rule_class, int min_rejects) {
  std::cout << st.summary(rule_class) << "\n";
  for (auto& p : st.problems) ADD_FAILURE() << rule_class << ": " << p;
  EXPECT_EQ(st.false_alarms, 0);
  EXPECT_EQ(st.we_flag, st.ptxas_rejects);
  // The generated variants must include real defects, or the class tests nothing.
  EXPECT_GE(st.ptxas_rejects, min_rejects);
  EXPECT_LT(st.ptxas_rejects, st.cases);
}

#define REQUIRE_PTXAS() \
  if (!find_cuda_tool("ptxas")) GTEST_SKIP() << "ptxas not installed"

const char* kModuleHead = ".version 8.0\n.target sm_90a\n.address_size 64\n";

// A module whose line `line` (1-based) is the defect: the head, then `before` lines, then it.
ModuleCase module_case(const std::string& text, const std::string& defect_line_text) {
  ModuleCase c{text, 0};
  int line = 1;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    if (text.compare(pos, end - pos, defect_line_text) == 0) {
      c.line = line;
      break;
    }
    pos = end + 1;
    ++line;
  }
  return c;
}

TEST(RuleAgreement, SpecialRegisters) {
  REQUIRE_PTXAS();
  std::vector<RuleCase> cases;
  const char* specials32[] = {"%tid.x", "%ntid.y", "%ctaid.z", "%nctaid.x", "%laneid", "%warpid",
                              "%smid", "%lanemask_lt", "%clock", "%dynamic_smem_size"};
  for (const char* s : specials32) {
    std::string sr(s);
    for (std::string line : {"mov.u32 " + sr + ", %r1;", "mov.b32 " + sr + ", 7;", "cvt.u32.u16 " + sr + ", %us1;",
                             "add.u32 " + sr + ", %r1, 1;", "mov.u32 %r1, " + sr + ";", "mov.b32 %r1, " + sr + ";",
                             "mov.s32 %s1, " + sr + ";", "cvt.u64.u32 %rd1, " + sr + ";", "cvt.u16.u32 %us1, " + sr + ";",
                             "cvt.rn.f32.u32 %f1, " + sr + ";", "cvt.rn.f64.u32 %fd1, " + sr + ";",
                             "add.u32 %r1, " + sr + ", 1;", "add.u32 %r1, %r2, " + sr + ";", "sub.u32 %r1, " + sr + ", %r2;",
                             "mul.lo.u32 %r1, " + sr + ", %r2;", "mad.lo.u32 %r1, %r2, " + sr + ", %r3;",
                             "and.b32 %r1, " + sr + ", 31;", "shl.b32 %r1, " + sr + ", 2;", "setp.lt.u32 %p1, " + sr + ", %r2;",
                             "min.u32 %r1, " + sr + ", %r2;", "selp.u32 %r1, " + sr + ", 0, %p1;",
                             "st.global.u32 [%rd1], " + sr + ";", "st.global.v2.u32 [%rd1], {" + sr + ", " + sr + "};",
                             "mul.wide.u32 %rd1, " + sr + ", 4;", "popc.b32 %r1, " + sr + ";"})
      cases.push_back({line});
  }
  for (const char* s : {"%clock64", "%globaltimer", "%gridid"}) {
    std::string sr(s);
    for (std::string line : {"mov.u64 " + sr + ", %rd1;", "mov.u64 %rd1, " + sr + ";", "cvt.u32.u64 %r1, " + sr + ";",
                             "add.u64 %rd1, " + sr + ", 1;", "sub.s64 %rd1, %rd2, " + sr + ";",
                             "cvta.to.global.u64 %rd1, " + sr + ";"})
      cases.push_back({line});
  }
  // The widths mov reads each special register at (ptxas allows 16-bit reads of %tid.x and
  // friends, and any width of %gridid), and vector specials without a component.
  const char* all_specials[] = {"%tid.x", "%ntid.y", "%ctaid.x", "%nctaid.z", "%clusterid.x", "%cluster_ctaid.y",
                                "%laneid", "%warpid", "%clock", "%gridid", "%clock64", "%globaltimer",
                                "%globaltimer_lo", "%lanemask_eq", "%envreg3", "%pm1", "%pm1_64", "%smid",
                                "%current_graph_exec", "%is_explicit_cluster", "%tid", "%ctaid", "%cluster_nctaid"};
  for (const char* s : all_specials)
    for (auto [type, reg] : std::vector<std::pair<std::string, std::string>>{
             {".u16", "%us1"}, {".b16", "%h1"}, {".s16", "%ss1"}, {".u32", "%r1"}, {".b32", "%r1"}, {".s32", "%s1"},
             {".u64", "%rd1"}, {".b64", "%rd1"}, {".s64", "%sd1"}, {".f32", "%f1"}, {".pred", "%p1"}})
      cases.push_back({"mov" + type + " " + reg + ", " + s + ";"});
  // (mov.v4.u32 {%r1, %r2, %r3, %r4}, %tid; is valid, but the ISA table has no .v4 for mov yet.)
  for (const char* s : {"%tid", "%ntid", "%cluster_ctaid"})
    cases.push_back({std::string("mov.v2.u32 {%r1, %r2}, ") + s + ";"});
  // A register that hides the special register's name is an ordinary register.
  cases.push_back({"add.u32 %laneid, %laneid, 1;", ".reg .b32 %laneid;"});
  cases.push_back({"mov.u32 %r1, WARP_SZ;"});
  cases.push_back({"add.u32 %r1, %r2, WARP_SZ;"});
  expect_agreement(agree_with_ptxas(cases, RuleHeader{}), "special-reg", 100);
}

TEST(RuleAgreement, BranchTargets) {
  REQUIRE_PTXAS();
  std::vector<RuleCase> cases;
  for (std::string reg : {"%r1", "%r7", "%rd1", "%u2", "%s3", "%ud1", "%f1"}) {
    cases.push_back({"bra " + reg + ";"});
    cases.push_back({"bra.uni " + reg + ";"});
    cases.push_back({"@%p1 bra " + reg + ";"});
  }
  for (std::string label : {"L1", "$L__BB0_1", "done"}) {
    std::string setup = label + ":\n";
    cases.push_back({"bra " + label + ";", setup});
    cases.push_back({"@!%p2 bra.uni " + label + ";", setup});
    std::string table = setup + "tbl: .branchtargets " + label + ";\n";
    cases.push_back({"brx.idx %r1, tbl;", table});
    cases.push_back({"@%p1 brx.idx.uni %r2, tbl;", table});
    cases.push_back({"brx.idx 0, tbl;", table});
    cases.push_back({"brx.idx %r1, " + label + ";", table});
    cases.push_back({"brx.idx %r1, %r2;", table});
    cases.push_back({"brx.idx %r1, %rd2;", table});
    cases.push_back({"bra tbl;", table});
    cases.push_back({"bra 4;", setup});
  }
  expect_agreement(agree_with_ptxas(cases, RuleHeader{}), "branch-target", 30);
}

TEST(RuleAgreement, DuplicateRegisterRanges) {
  REQUIRE_PTXAS();
  std::vector<RuleCase> cases;
  for (std::string p : {"%q", "%acc", "%x_"}) {
    for (std::string type : {".b32", ".f32", ".b64", ".pred"}) {
      for (int n : {1, 4, 10}) {
        std::string range = ".reg " + type + " " + p + "<" + std::to_string(n) + ">;\n";
        cases.push_back({".reg " + type + " " + p + "<" + std::to_string(n) + ">;", range});
        cases.push_back({".reg .b32 " + p + "<3>;", range});
        cases.push_back({".reg " + type + " " + p + "0;", range});
        cases.push_back({".reg " + type + " " + p + std::to_string(n - 1) + ";", range});
        cases.push_back({".reg " + type + " " + p + std::to_string(n) + ";", range});
        cases.push_back({".reg " + type + " " + p + "00;", range});
        cases.push_back({".reg " + type + " " + p + ";", range});
        cases.push_back({".reg " + type + " " + p + "a<3>;", range});
        cases.push_back({".reg " + type + " " + p + "1<3>;", range});
        // Scalars first, then the range.
        cases.push_back({".reg " + type + " " + p + "<" + std::to_string(n) + ">;", ".reg " + type + " " + p + "0;\n"});
        cases.push_back({".reg " + type + " " + p + "<" + std::to_string(n) + ">;",
                         ".reg " + type + " " + p + std::to_string(n) + ";\n"});
      }
      // A nested block may declare the same names again.
      cases.push_back({"}", ".reg " + type + " " + p + "<4>;\n{\n.reg " + type + " " + p + "<4>;\n.reg " + type + " " +
                                p + "2;"});
    }
  }
  // The prelude's own ranges: %r<20> in the enclosing scope may be redeclared in a block.
  cases.push_back({".reg .b32 %r<5>;"});
  cases.push_back({".reg .b32 %r3;"});
  cases.push_back({".reg .b32 %q<4>, %q<4>;"});
  cases.push_back({".reg .b32 %q<4>, %q2;"});
  cases.push_back({".reg .b32 %q1<5>, %q12;"});
  expect_agreement(agree_with_ptxas(cases, RuleHeader{}), "duplicate-reg", 100);
}

TEST(RuleAgreement, ParametersShareTheBodyScope) {
  REQUIRE_PTXAS();
  std::vector<ModuleCase> cases;
  for (std::string space : {".reg .b64", ".local .b32", ".shared .b32", ".reg .pred"})
    for (std::string name : {"p", "n", "q", "%p1"}) {
      std::string decl = space + " " + name + ";";
      std::string text = std::string(kModuleHead) + ".visible .entry k(.param .u64 p, .param .u32 n)\n{\n" + decl +
                         "\nret;\n}\n";
      cases.push_back(module_case(text, decl));
      std::string ftext = std::string(kModuleHead) + ".func (.param .b32 q) f(.param .u32 n)\n{\n" + decl +
                          "\nst.param.b32 [q], 0;\nret;\n}\n";
      cases.push_back(module_case(ftext, decl));
    }
  expect_agreement(agree_modules_with_ptxas(cases), "duplicate-param", 8);
}

TEST(RuleAgreement, EntryOnlyDirectives) {
  REQUIRE_PTXAS();
  std::vector<ModuleCase> cases;
  for (std::string dir : {".maxntid 128", ".maxntid 128, 1, 1", ".reqntid 64", ".reqntid 32, 2, 1", ".minnctapersm 2",
                          ".maxnreg 64", ".reqnctapercluster 2, 1, 1", ".explicitcluster", ".maxclusterrank 4",
                          ".noreturn", ".maxnctapersm 2"}) {
    std::string func = std::string(kModuleHead) + ".func f()\n" + dir + "\n{\nret;\n}\n";
    cases.push_back(module_case(func, dir));
    std::string func_ret = std::string(kModuleHead) + ".func (.param .b32 r) g(.param .b32 a)\n" + dir +
                           "\n{\nst.param.b32 [r], 0;\nret;\n}\n";
    cases.push_back(module_case(func_ret, dir));
    std::string proto = std::string(kModuleHead) + ".extern .func h()\n" + dir + "\n;\n";
    cases.push_back(module_case(proto, dir));
    std::string entry = std::string(kModuleHead) + ".visible .entry k()\n" + dir + "\n{\nret;\n}\n";
    cases.push_back(module_case(entry, dir));
  }
  // Arguments and pairs on kernels; the defect is the second line of a pair.
  for (std::string dir : {".maxntid 0", ".maxntid 32, 0, 1", ".maxntid 1, 1, 1, 1", ".reqntid 0", ".reqntid 33, 33",
                          ".reqntid 1, 1, 1, 1", ".maxnreg 0", ".maxnreg 0x20", ".maxnreg 32, 2", ".minnctapersm 0",
                          ".minnctapersm 2, 2", ".maxclusterrank 0", ".reqnctapercluster 0", ".reqnctapercluster 1, 1, 1, 1",
                          ".maxntid 1024", ".maxnreg 255", ".minnctapersm 64", ".reqnctapercluster 2, 2, 2"}) {
    std::string entry = std::string(kModuleHead) + ".visible .entry k()\n" + dir + "\n{\nret;\n}\n";
    cases.push_back(module_case(entry, dir));
  }
  for (auto [first, second] : std::vector<std::pair<std::string, std::string>>{
           {".maxntid 128", ".reqntid 128"}, {".reqntid 128", ".maxntid 256"}, {".maxntid 128", ".maxntid 256"},
           {".reqntid 128", ".reqntid 64"}, {".reqnctapercluster 2", ".maxclusterrank 8"},
           {".maxclusterrank 8", ".reqnctapercluster 2, 1, 1"}, {".explicitcluster", ".reqnctapercluster 2"},
           {".maxntid 128", ".minnctapersm 2"}, {".maxnreg 32", ".maxnreg 64"}}) {
    std::string entry = std::string(kModuleHead) + ".visible .entry k()\n" + first + "\n" + second + "\n{\nret;\n}\n";
    cases.push_back(module_case(entry, second));
  }
  expect_agreement(agree_modules_with_ptxas(cases), "function-directive", 30);
}

TEST(RuleAgreement, Initializers) {
  REQUIRE_PTXAS();
  std::vector<std::string> decls;
  for (std::string space : {".global", ".const", ".shared"}) {
    for (std::string type : {".u32", ".s32", ".b32", ".f32", ".f64", ".u8", ".u64", ".b64"}) {
      bool is_float = type[1] == 'f';
      std::string one = is_float ? "1.5" : "1";
      decls.push_back(space + " " + type + " a = " + one + ";");
      decls.push_back(space + " " + type + " a = 1;");
      decls.push_back(space + " " + type + " a = 1.5;");
      decls.push_back(space + " " + type + " a = -2;");
      decls.push_back(space + " " + type + " a = 0f3F800000;");
      decls.push_back(space + " " + type + " a = {" + one + "};");
      decls.push_back(space + " " + type + " a[2] = " + one + ";");
      decls.push_back(space + " " + type + " a[2] = {" + one + "};");
      decls.push_back(space + " " + type + " a[2] = {" + one + ", " + one + "};");
      decls.push_back(space + " " + type + " a[2] = {" + one + ", " + one + ", " + one + "};");
      decls.push_back(space + " " + type + " a[] = {" + one + ", " + one + ", " + one + "};");
      decls.push_back(space + " " + type + " a[2][2] = {{" + one + ", " + one + "}, {" + one + "}};");
      decls.push_back(space + " " + type + " a[2][2] = {{" + one + ", " + one + ", " + one + "}};");
      decls.push_back(space + " " + type + " a[2][2] = {{" + one + "}, {" + one + "}, {" + one + "}};");
      decls.push_back(space + " " + type + " a[2][2] = {" + one + ", " + one + ", " + one + "};");
      decls.push_back(space + " " + type + " a[2][2] = {{" + one + ", " + one + "}, " + one + "};");
      decls.push_back(space + " .v2" + type + " a = {" + one + ", " + one + "};");
      decls.push_back(space + " .v2" + type + " a = {" + one + "};");
      decls.push_back(space + " .v2" + type + " a = {" + one + ", " + one + ", " + one + "};");
      decls.push_back(space + " .v2" + type + " a[2] = {{" + one + ", " + one + "}, {" + one + ", " + one + "}};");
      decls.push_back(space + " .v2" + type + " a[2] = {" + one + ", " + one + ", " + one + ", " + one + "};");
    }
    decls.push_back(space + " .f16 a = 1.0;");
    decls.push_back(space + " .b16 a = 0x3C00;");
    decls.push_back(space + " .pred a;");
    decls.push_back(space + " .u64 a = gmem;");
    decls.push_back(space + " .u64 a[2] = {gmem, gmem};");
  }
  decls.push_back(".local .u32 a;");
  decls.push_back(".param .u32 a;");
  std::vector<ModuleCase> cases;
  for (auto& d : decls) {
    std::string text = std::string(kModuleHead) + ".global .align 4 .b8 gmem[16];\n" + d +
                       "\n.visible .entry k()\n{\nret;\n}\n";
    cases.push_back(module_case(text, d));
    if (d.rfind(".param", 0) == 0 || d.find("gmem") != std::string::npos) continue;
    std::string local = d;
    local.replace(0, local.find(' '), d.rfind(".const", 0) == 0 ? ".local" : d.substr(0, d.find(' ')));
    std::string in_fn = std::string(kModuleHead) + ".visible .entry k()\n{\n" + local + "\nret;\n}\n";
    cases.push_back(module_case(in_fn, local));
  }
  for (std::string reg : {".reg .b32 %q = 1;", ".reg .f32 %q = 1.0;", ".reg .b32 %q<2> = {1, 2};"}) {
    std::string text = std::string(kModuleHead) + ".visible .entry k()\n{\n" + reg + "\nret;\n}\n";
    cases.push_back(module_case(text, reg));
  }
  expect_agreement(agree_modules_with_ptxas(cases), "initializer", 200);
}

TEST(RuleAgreement, ArraySizesAndPlacement) {
  REQUIRE_PTXAS();
  std::vector<ModuleCase> cases;
  auto at_module_scope = [&](const std::string& decl) {
    cases.push_back(module_case(std::string(kModuleHead) + decl + "\n.visible .entry k()\n{\nret;\n}\n", decl));
  };
  auto in_kernel = [&](const std::string& decl) {
    cases.push_back(module_case(std::string(kModuleHead) + ".visible .entry k()\n{\n" + decl + "\nret;\n}\n", decl));
  };
  for (std::string link : {"", ".visible ", ".weak ", ".extern "}) {
    for (std::string space : {".global", ".const", ".shared"}) {
      for (std::string dims : {"[]", "[0]", "[4]", "[][2]", "[2][0]"}) {
        if (link == ".extern " && space != ".shared") continue;  // an unresolved .extern is another rule
        at_module_scope(link + space + " .align 4 .b32 a" + dims + ";");
        if (link.empty() && space != ".const")
          in_kernel((space == ".global" ? std::string(".local") : space) + " .align 4 .b32 a" + dims + ";");
      }
      if (link != ".extern ") at_module_scope(link + space + " .b32 a[] = {1, 2};");
    }
  }
  for (std::string reg : {".reg .b32 %q[2];", ".reg .b32 r[];", ".reg .b32 %q<2>;", ".reg .v2 .b32 %q;"}) in_kernel(reg);
  for (std::string ext : {".extern .shared .b8 smem[];", ".extern .global .u32 g;", ".extern .const .u32 c;"})
    in_kernel(ext);
  for (std::string ext : {".extern .global .u32 g = 1;", ".extern .shared .b32 s = 1;"}) at_module_scope(ext);
  expect_agreement(agree_modules_with_ptxas(cases), "array-size", 30);
}

TEST(RuleAgreement, LabelScopes) {
  REQUIRE_PTXAS();
  std::vector<ModuleCase> cases;
  // {label block} and {branch block} placed in every arrangement: same block, nested either way,
  // siblings, before and after.
  for (std::string branch : {"bra L1;", "@%p1 bra.uni L1;", "brx.idx %r1, t;"}) {
    std::string table = branch.rfind("brx", 0) == 0 ? "t: .branchtargets L1;\n" : "";
    std::vector<std::string> bodies = {
        table + branch + "\nL1:\nret;\n",
        "{\n" + table + branch + "\n}\nL1:\nret;\n",
        "{\n{\n" + table + branch + "\n}\n}\nL1:\nret;\n",
        "{\nL1:\nret;\n}\n" + table + branch + "\n",
        table + branch + "\n{\nL1:\nret;\n}\n",
        "{\n" + table + branch + "\n}\n{\nL1:\nret;\n}\n",
        "{\nL1:\nret;\n}\n{\n" + table + branch + "\n}\n",
        "{\n" + table + branch + "\nL1:\nret;\n}\n",
        "{\n{\nL1:\nret;\n}\n" + table + branch + "\n}\n",
    };
    for (auto& body : bodies) {
      std::string text = std::string(kModuleHead) + ".visible .entry k()\n{\n.reg .b32 %r1;\n.reg .pred %p1;\n" +
                         "mov.u32 %r1, 0;\nsetp.eq.u32 %p1, %r1, 0;\n" + body + "ret;\n}\n";
      // brx.idx names its labels in the .branchtargets line: that is where the label must be visible.
      cases.push_back(module_case(text, table.empty() ? branch : "t: .branchtargets L1;"));
    }
  }
  // A .branchtargets list naming a label in a nested block.
  std::string text = std::string(kModuleHead) + ".visible .entry k()\n{\n.reg .b32 %r1;\nmov.u32 %r1, 0;\n" +
                     "t: .branchtargets L1;\nbrx.idx %r1, t;\n{\nL1:\nret;\n}\n}\n";
  cases.push_back(module_case(text, "t: .branchtargets L1;"));
  expect_agreement(agree_modules_with_ptxas(cases), "label-scope", 10);
}

TEST(RuleAgreement, ParametersAndHeader) {
  REQUIRE_PTXAS();
  std::vector<ModuleCase> cases;
  for (std::string kind : {".entry k", ".func f"})
    for (std::string param : {".param .u64 a", ".param .pred a", ".reg .pred a", ".reg .b32 a", ".reg .u64 a",
                              ".shared .b32 a", ".param .f16 a", ".param .align 8 .b8 a[16]"}) {
      std::string text = std::string(kModuleHead) + kind + "(" + param + ")\n{\nret;\n}\n";
      cases.push_back(module_case(text, kind + "(" + param + ")"));
      if (kind == ".func f") {
        std::string ret = std::string(kModuleHead) + ".func (" + param + ") g()\n{\nret;\n}\n";
        cases.push_back(module_case(ret, ".func (" + param + ") g()"));
      }
    }
  std::string body = ".visible .entry k()\n{\nret;\n}\n";
  std::vector<std::vector<std::string>> headers = {
      {".version 8.0", ".target sm_90a", ".address_size 64"}, {".version 8.0", ".target sm_90a"},
      {".target sm_90a", ".version 8.0", ".address_size 64"}, {".version 8.0", ".address_size 64", ".target sm_90a"},
      {".version 8.0", ".target sm_90a", ".address_size 64", ".version 8.0"},
      {".version 8.0", ".target sm_90a", ".address_size 64", ".target sm_90a"},
      {".version 8.0", ".target sm_90a", ".address_size 64", ".address_size 64"},
      {".version 8.0", ".target sm_90a", ".global .u32 g;", ".address_size 64"}};
  for (auto& h : headers) {
    std::string text;
    for (auto& line : h) text += line + "\n";
    // The defect: the first line out of place (none for a good header).
    int defect = h.size() > 3 ? static_cast<int>(h.size()) : h[0] == ".version 8.0" ? static_cast<int>(h.size()) : 1;
    cases.push_back(ModuleCase{text + body, defect});
  }
  expect_agreement(agree_modules_with_ptxas(cases), "parameters-header", 8);
}

// A kernel's parameters, laid out at their alignments, against the parameter space of each
// PTX version: 4352 bytes before 8.1, 32764 from 8.1 on. One parameter per line; the defect is
// the parameter that crosses the limit (worked out by hand for each list below).
TEST(RuleAgreement, KernelParameterSpace) {
  REQUIRE_PTXAS();
  struct List {
    std::vector<std::string> params;
    size_t crossing;  // which parameter ends past the limit, when the list is over it
  };
  // Lists whose end is `n` bytes (padding included), or n + 1 for the third.
  auto lists = [](uint64_t n, uint64_t limit) {
    uint64_t b_end = 8 + (n - 8) / 8 * 8;
    return std::vector<List>{
        {{fmt::format(".param .align 4 .b8 a[{}]", n)}, 0},
        {{".param .u8 a", fmt::format(".param .align 8 .b8 b[{}]", n - 8)}, 1},
        {{".param .u8 a", fmt::format(".param .u64 b[{}]", (n - 8) / 8), ".param .u8 c"}, b_end > limit ? 1u : 2u},
        {{fmt::format(".param .v4 .f32 a[{}]", n / 16)}, 0},
        {{".param .u64 a", ".param .u32 b", fmt::format(".param .align 16 .b8 c[{}]", n - 16)}, 2},
    };
  };
  std::vector<ModuleCase> cases;
  for (std::string version : {"7.8", "8.0", "8.1", "8.3", "9.0"})
    for (uint64_t limit : {uint64_t{0x1100}, uint64_t{0x7ffc}})
      for (uint64_t n : {limit - 8, limit, limit + 1, limit + 8})
        for (auto& l : lists(n, version < "8.1" ? 0x1100 : 0x7ffc)) {
          std::string text = ".version " + version + "\n.target sm_90\n.address_size 64\n.visible .entry k(\n";
          for (size_t i = 0; i < l.params.size(); ++i) text += l.params[i] + (i + 1 < l.params.size() ? ",\n" : ")\n");
          text += "{\nret;\n}\n";
          cases.push_back(ModuleCase{text, 5 + static_cast<int>(l.crossing)});
        }
  expect_agreement(agree_modules_with_ptxas(cases), "param-space", 20);
}

// The 64 KiB constant bank: module-scope and function-scope .const variables, used or not,
// visible or not, initialised or not, around the limit. (A total that passes it only through
// the padding between variables is not reported: the rule counts the variables' own bytes.)
TEST(RuleAgreement, ConstantBank) {
  REQUIRE_PTXAS();
  std::vector<ModuleCase> cases;
  const std::string head = ".version 8.0\n.target sm_90\n.address_size 64\n";
  auto kernel = [](const std::string& inner) {
    return ".visible .entry k(.param .u64 o)\n{\n" + inner + "  .reg .b32 %r1;\n  ret;\n}\n";
  };
  for (uint64_t n : {uint64_t{65535}, uint64_t{65536}, uint64_t{65537}, uint64_t{70000}, uint64_t{600000000}}) {
    std::string one = fmt::format(".const .align 4 .b8 c[{}];\n", n);
    cases.push_back({head + one + kernel(""), 4});
    cases.push_back({head + ".visible " + one + kernel(""), 4});
    cases.push_back({head + kernel("  " + one), 6});
    cases.push_back({head + ".const .u32 a;\n" + one + kernel(""), 5});
    cases.push_back({head + fmt::format(".const .b8 h[{}];\n", n / 2) + kernel(fmt::format("  .const .b8 g[{}];\n", n - n / 2)),
                     n / 2 > 65536 ? 4 : 7});
    cases.push_back({head + fmt::format(".const .u32 t[{}] = {{1, 2}};\n", (n + 3) / 4) + kernel(""), 4});
    cases.push_back({head + fmt::format(".const .v4 .f32 v[{}];\n", (n + 15) / 16) + kernel(""), 4});
  }
  cases.push_back({head + ".const .align 16 .b8 b[65520];\n.const .b8 a[1];\n" + kernel(""), 5});
  cases.push_back({head + ".const .align 8 .b8 a[32768];\n.global .b8 g[1048576];\n.const .b8 b[32768];\n" + kernel(""), 6});
  expect_agreement(agree_modules_with_ptxas(cases), "const-space", 20);
}

TEST(RuleAgreement, ReadOnlySpaces) {
  REQUIRE_PTXAS();
  RuleHeader h;
  h.globals = ".const .align 4 .b32 cv[16];\n";
  std::vector<RuleCase> cases;
  for (std::string type : {".u32", ".b32", ".s32", ".f32"}) {
    std::string reg = type == ".f32" ? "%f1" : "%r1";
    for (std::string addr : {"[cv]", "[cv+4]", "[%rd1]", "[gmem]", "[smem]", "[p]"}) {
      for (std::string space : {".const", ".global", ".shared", ".param", ""}) {
        cases.push_back({"st" + space + type + " " + addr + ", " + reg + ";"});
        cases.push_back({"ld" + space + type + " " + reg + ", " + addr + ";"});
      }
    }
    if (type == ".f32" || type == ".b32") continue;  // atom.add takes no .f32 register / .b32 type here
    for (std::string space : {".const", ".param", ".global", ".shared", ""}) {
      cases.push_back({"atom" + space + ".add" + type + " %r1, [cv], 1;"});
      cases.push_back({"red" + space + ".add" + type + " [cv], 1;"});
      cases.push_back({"atom" + space + ".add" + type + " %r1, [%rd1], 1;"});
      cases.push_back({"red" + space + ".add" + type + " [%rd1], 1;"});
    }
  }
  expect_agreement(agree_with_ptxas(cases, h), "read-only-space", 40);
}

TEST(RuleAgreement, FunctionsAreDeclaredBeforeUse) {
  REQUIRE_PTXAS();
  std::vector<ModuleCase> cases;
  std::string f_def = ".func f()\n{\nret;\n}\n";
  std::string f_decl = ".func f();\n";
  std::string f_extern = ".extern .func f();\n";
  for (std::string use : {"call f;", "call.uni f;", "mov.u64 %rd1, f;"}) {
    std::string k = ".visible .entry k()\n{\n.reg .b64 %rd1;\n" + use + "\nret;\n}\n";
    std::string g = ".func g()\n{\n.reg .b64 %rd1;\n" + use + "\nret;\n}\n";
    std::string h = kModuleHead;
    cases.push_back(module_case(h + k + f_def, use));
    cases.push_back(module_case(h + f_def + k, use));
    cases.push_back(module_case(h + f_decl + k + f_def, use));
    cases.push_back(module_case(h + k + f_extern, use));
    // (An .extern function called from a whole program is "Unresolved extern function" to
    // ptxas, a different rule, so only the misplaced .extern is judged here.)
    cases.push_back(module_case(h + g + f_def + ".visible .entry k()\n{\ncall g;\nret;\n}\n", use));
    cases.push_back(module_case(h + f_decl + g + f_def, use));
    // Recursion names the function being defined.
    std::string rec = ".func f()\n{\n.reg .b64 %rd1;\n" + use + "\nret;\n}\n";
    cases.push_back(module_case(h + rec, use));
  }
  std::string args = ".visible .entry k()\n{\n.param .b32 a;\n.param .b32 r;\ncall (r), f2, (a);\nret;\n}\n";
  std::string f2 = ".func (.param .b32 r) f2(.param .b32 a)\n{\nst.param.b32 [r], 0;\nret;\n}\n";
  cases.push_back(module_case(kModuleHead + args + f2, "call (r), f2, (a);"));
  cases.push_back(module_case(kModuleHead + f2 + args, "call (r), f2, (a);"));
  expect_agreement(agree_modules_with_ptxas(cases), "use-before-declaration", 10);
}

TEST(RuleAgreement, AddressWidths) {
  REQUIRE_PTXAS();
  std::vector<ModuleCase> cases;
  struct Reg {
    std::string decl, name;
  };
  std::vector<Reg> regs = {{".reg .b32 %a;", "%a"}, {".reg .u32 %a;", "%a"}, {".reg .s32 %a;", "%a"},
                           {".reg .b64 %a;", "%a"}, {".reg .u64 %a;", "%a"}, {".reg .b16 %a;", "%a"}};
  std::vector<std::string> spaces = {".global", ".shared", ".shared::cta", ".local", ".const", ".param", ""};
  for (auto& r : regs) {
    for (auto& sp : spaces) {
      std::vector<std::string> lines = {"ld" + sp + ".u32 %r1, [" + r.name + "];"};
      if (sp != ".const" && sp != ".param") lines.push_back("st" + sp + ".u32 [" + r.name + "+4], %r1;");
      if (sp != ".const" && sp != ".param" && sp != ".local") {
        lines.push_back("atom" + sp + ".add.u32 %r1, [" + r.name + "], 1;");
        lines.push_back("red" + sp + ".add.u32 [" + r.name + "], 1;");
      }
      if (sp == ".global") {
        lines.push_back("ld.global.nc.u32 %r1, [" + r.name + "];");
        lines.push_back("ldu.global.u32 %r1, [" + r.name + "];");
        lines.push_back("prefetch.global.L2 [" + r.name + "];");
      }
      if (sp == "") lines.push_back("mbarrier.try_wait.b64 %p1, [" + r.name + "], %rd1;");
      if (sp == ".shared::cta") lines.push_back("mbarrier.try_wait.shared::cta.b64 %p1, [" + r.name + "], %rd1;");
      for (auto& line : lines) {
        std::string text = std::string(kModuleHead) +
                           ".visible .entry k(.param .u64 p)\n{\n.reg .b32 %r1;\n.reg .b64 %rd1;\n.reg .pred %p1;\n" +
                           r.decl + "\n" + line + "\nret;\n}\n";
        cases.push_back(module_case(text, line));
      }
    }
  }
  // Address-making instructions: cvta in 32 bits, mov of a variable's address into 32 bits.
  std::string var_head = std::string(kModuleHead) + ".global .align 4 .b32 gv[4];\n.const .align 4 .b32 cv[4];\n" +
                         ".shared .align 4 .b32 sv[4];\n.visible .entry k(.param .u64 p)\n{\n.reg .b32 %r<3>;\n" +
                         ".reg .b64 %rd<3>;\n.reg .f32 %f1;\n.local .align 4 .b32 lv[4];\n";
  for (std::string type : {".u32", ".b32", ".s32", ".u64", ".b64", ".f32"}) {
    std::string dst = type == ".f32" ? "%f1" : type_bits(type) == 64 ? "%rd1" : "%r1";
    for (std::string var : {"gv", "cv", "sv", "lv", "p", "gv+4", "sv+8"}) {
      std::string line = "mov" + type + " " + dst + ", " + var + ";";
      cases.push_back(module_case(var_head + line + "\nret;\n}\n", line));
    }
  }
  for (std::string sp : {".global", ".shared", ".shared::cta", ".local", ".const", ".param"})
    for (std::string dir : {"cvta", "cvta.to"})
      for (std::string type : {".u32", ".u64"}) {
        std::string regs = type == ".u32" ? " %r1, %r2;" : " %rd1, %rd2;";
        std::string line = dir + sp + type + regs;
        cases.push_back(module_case(var_head + line + "\nret;\n}\n", line));
      }
  cases.push_back(module_case(".version 8.0\n.target sm_90a\n.address_size 32\n.visible .entry k()\n{\nret;\n}\n",
                              ".address_size 32"));
  cases.push_back(module_case(".version 8.0\n.target sm_80\n.address_size 32\n.visible .entry k()\n{\nret;\n}\n",
                              ".address_size 32"));
  expect_agreement(agree_modules_with_ptxas(cases), "address-width", 30);
}

TEST(RuleAgreement, MbarrierOperands) {
  REQUIRE_PTXAS();
  std::vector<RuleCase> cases;
  std::vector<std::string> regs = {"%r1", "%rd1", "%f1", "%us1", "%u1", "%ud1", "%s1", "%sd1", "%fd1", "0"};
  for (auto& v : regs) {
    for (std::string sp : {".shared::cta", ".shared"}) {
      cases.push_back({"mbarrier.try_wait" + sp + ".b64 %p1, [smem], " + v + ";"});
      cases.push_back({"mbarrier.test_wait" + sp + ".b64 %p1, [smem], " + v + ";"});
      cases.push_back({"mbarrier.try_wait.parity" + sp + ".b64 %p1, [smem], " + v + ";"});
      cases.push_back({"mbarrier.test_wait.parity" + sp + ".b64 %p1, [smem], " + v + ";"});
      cases.push_back({"mbarrier.try_wait.parity" + sp + ".b64 %p1, [smem], %r1, " + v + ";"});
      if (v == "0") continue;
      cases.push_back({"mbarrier.arrive" + sp + ".b64 " + v + ", [smem];"});
      cases.push_back({"mbarrier.arrive_drop" + sp + ".b64 " + v + ", [smem];"});
      cases.push_back({"mbarrier.arrive" + sp + ".b64 " + v + ", [smem], 1;"});
      cases.push_back({"mbarrier.pending_count.b64 %r1, " + v + ";"});
    }
    if (v == "0") continue;
    cases.push_back({"mbarrier.arrive.release.cluster.shared::cluster.b64 " + v + ", [%r2];"});
  }
  // The waiting result is a predicate.
  for (std::string dst : {"%p1", "%r1", "%rd1", "%f1", "%us1", "_"}) {
    cases.push_back({"mbarrier.try_wait.shared::cta.b64 " + dst + ", [smem], %rd1;"});
    cases.push_back({"mbarrier.test_wait.parity.shared::cta.b64 " + dst + ", [smem], %r1;"});
  }
  cases.push_back({"mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r2];"});
  cases.push_back({"mbarrier.arrive.shared::cta.b64 _, [smem];"});
  expect_agreement(agree_with_ptxas(cases, RuleHeader{}), "mbarrier-operand", 60);
}

// `.loc ..., function_name N, inlined_at ...` needs N defined as a label somewhere in the
// module (nvcc puts it in .debug_str). Whole modules, judged by ptxas as they are: the name
// defined, misspelt at the definition, and misspelt with a code label of the name (which ptxas
// does not take for it); used twice, it gets one error, at the first .loc, as ptxas gives one.
TEST(RuleAgreement, LocFunctionNameNeedsALabel) {
  if (!find_cuda_tool("ptxas")) GTEST_SKIP() << "ptxas not installed";
  auto module = [](const std::string& def, const std::string& code_label) {
    return ".version 8.0\n.target sm_90\n.address_size 64\n\t.file\t1 \"/tmp/a.cu\"\n\t.file\t2 \"/tmp/b.h\"\n"
           ".visible .entry k(.param .u64 p)\n{\n\t.reg .b64 %rd<3>;\n\t.loc\t1 4 3\n\tld.param.u64 %rd1, [p];\n" +
           code_label +
           "\t.loc\t2 7 3, function_name $L__info_string0, inlined_at 1 4 3\n\tcvta.to.global.u64 %rd2, %rd1;\n"
           "\t.loc\t2 8 3, function_name $L__info_string0, inlined_at 1 4 3\n\tret;\n}\n"
           "\t.section\t.debug_str\n\t{\n" +
           def + ":\n.b8 95,90,0\n\t}\n";
  };
  struct Case {
    std::string def, code_label;
  };
  for (const Case& c : {Case{"$L__info_string0", ""}, Case{"$L__info_string9", ""},
                        Case{"$L__info_string9", "$L__info_string0:\n"}}) {
    std::string text = module(c.def, c.code_label);
    toolchain::AssembleOptions o;
    o.arch = "sm_90";
    auto as = toolchain::assemble_with_ptxas(text, o);
    ASSERT_TRUE(as) << as.error().message;
    auto r = check_source(text);
    int errors = 0;
    for (auto& d : r.diags.list())
      if (d.severity == Severity::error) {
        ++errors;
        EXPECT_EQ(d.loc.line, c.code_label.empty() ? 11u : 12u) << d.message;  // the first .loc naming it
      }
    EXPECT_EQ(errors, as->ok ? 0 : 1) << text << "\nptxas: " << as->log;
  }
}

// `inlined_at F L C` must name the location of an earlier .loc anywhere in the module (an
// earlier function's counts; so does an inlined .loc's own location); the exact triple, in
// source order. Each module is judged by ptxas; we must flag exactly where it does.
TEST(RuleAgreement, LocInlinedAtNeedsAnEarlierLoc) {
  if (!find_cuda_tool("ptxas")) GTEST_SKIP() << "ptxas not installed";
  auto module = [](const std::string& k1, const std::string& k2) {
    auto entry = [](const std::string& name, const std::string& body) {
      return ".visible .entry " + name + "(.param .u64 p)\n{\n\t.reg .b64 %rd<3>;\n" + body + "\tret;\n}\n";
    };
    return ".version 8.0\n.target sm_90\n.address_size 64\n\t.file\t1 \"/tmp/a.cu\"\n\t.file\t2 \"/tmp/b.h\"\n" +
           entry("k1", k1) + entry("k2", k2) + "\t.section\t.debug_str\n\t{\n$L__info_string0:\n.b8 95,90,0\n\t}\n";
  };
  const std::string inlined = "\t.loc\t2 7 3, function_name $L__info_string0, inlined_at 1 4 3\n\tld.param.u64 %rd1, [p];\n";
  const std::string plain = "\t.loc\t1 4 3\n\tld.param.u64 %rd1, [p];\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {plain + inlined, ""},                                    // the call site first
      {inlined, ""},                                            // no earlier .loc
      {plain, inlined},                                         // in an earlier function
      {"\t.loc\t1 9 9\n\t.loc\t1 4 3, function_name $L__info_string0, inlined_at 1 9 9\n" + inlined, ""},  // nested
      {"\t.loc\t1 4 3, function_name $L__info_string0, inlined_at 1 9 9\n\tld.param.u64 %rd1, [p];\n", ""},
      {inlined + "\t.loc\t1 4 3\n", ""},                        // only later
      {"\t.loc\t1 4 5\n" + inlined, ""},                        // another column
      {"\t.loc\t1 4 3\n" + inlined + inlined, ""},              // used twice, fine
      {inlined + inlined, ""},                                  // used twice, missing: flagged twice
  };
  int rejected = 0;
  for (auto& [k1, k2] : cases) {
    std::string text = module(k1, k2);
    toolchain::AssembleOptions o;
    o.arch = "sm_90";
    auto as = toolchain::assemble_with_ptxas(text, o);
    ASSERT_TRUE(as) << as.error().message;
    std::vector<uint32_t> theirs, ours;
    for (auto& d : as->diags.list())
      if (d.severity == Severity::error) theirs.push_back(d.loc.line);
    auto r = check_source(text);
    for (auto& d : r.diags.list())
      if (d.severity == Severity::error) ours.push_back(d.loc.line);
    rejected += as->ok ? 0 : 1;
    EXPECT_EQ(ours, theirs) << text << "\nptxas: " << as->log;
  }
  EXPECT_GE(rejected, 4);
}

}  // namespace
}  // namespace ptxforge::ptx
