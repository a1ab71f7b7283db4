// Test support: a rule class judged against ptxas. Each case is a few lines of kernel body
// with one line under test; ptxas assembles all cases of a class in one module (its errors
// carry line numbers, so one run judges many cases), and our front end checks each case on
// its own. A class agrees with ptxas when we report no error on any line ptxas accepts (no
// false alarm) and flag, at that line, every line ptxas rejects (detection).
#pragma once

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ptx/front_end.h"
#include "toolchain/ptxas.h"

namespace ptxforge::ptx::testing {

struct RuleCase {
  std::string line;            // the instruction under test (one line, no newline)
  std::string setup = "";      // lines before it (declarations, labels), may be empty
};

struct RuleHeader {
  std::string version = "8.0";
  std::string target = "sm_90a";
  std::string globals = "";    // module-scope declarations
  std::string entry_directives = "";  // between the parameter list and the body
};

struct AgreementStats {
  int cases = 0;
  int ptxas_rejects = 0;
  int we_flag = 0;             // ptxas rejects and we report an error on that line
  int false_alarms = 0;        // ptxas accepts and we report an error
  std::vector<std::string> problems;
  std::string summary(const std::string& rule_class) const {
    return fmt::format("rules[{}]: {} cases, ptxas rejects {}, we flag {} of them at the line, {} false alarms",
                       rule_class, cases, ptxas_rejects, we_flag, false_alarms);
  }
};

inline std::string rule_prelude() {
  return ".reg .b32 %r<20>;\n.reg .b64 %rd<20>;\n.reg .b16 %h<20>;\n.reg .f32 %f<20>;\n.reg .f64 %fd<20>;\n"
         ".reg .pred %p<8>;\n.reg .u32 %u<8>;\n.reg .s32 %s<8>;\n.reg .u64 %ud<8>;\n.reg .s64 %sd<8>;\n"
         ".reg .f16 %hf<8>;\n.reg .u16 %us<8>;\n.reg .s16 %ss<8>;\n";
}

inline std::string rule_module_head(const RuleHeader& h) {
  return fmt::format(".version {}\n.target {}\n.address_size 64\n.shared .align 16 .b8 smem[4096];\n"
                     ".global .align 16 .b8 gmem[4096];\n{}"
                     ".visible .entry k(.param .u64 p){}\n{{\n{}",
                     h.version, h.target, h.globals, h.entry_directives, rule_prelude());
}

inline int count_lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

// Each case in its own `{ }` block so that setup declarations and labels do not clash.
inline std::string case_text(const RuleCase& c) { return "{\n" + c.setup + c.line + "\n}\n"; }

// Line numbers (1-based) that ptxas rejects when all cases run in one module. A fatal error
// (a parse error, "Result discard mode is not allowed", ...) stops ptxas at that line: the
// line is marked rejected, blanked, and ptxas runs again.
inline std::map<int, std::string> ptxas_rejected_lines(std::string text, const std::string& arch) {
  std::map<int, std::string> rejected;
  for (int round = 0; round < 400; ++round) {
    toolchain::AssembleOptions o;
    o.arch = arch;
    auto a = toolchain::assemble_with_ptxas(text, o);
    if (!a) return rejected;
    bool fatal_at_line = false;
    int last_line = 0;
    for (auto& d : a->diags.list()) {
      if (d.severity != Severity::error || d.loc.line == 0) continue;
      rejected.emplace(static_cast<int>(d.loc.line), d.message);
      last_line = std::max(last_line, static_cast<int>(d.loc.line));
      if (d.message.find("Parsing error") != std::string::npos || d.message.find("syntax error") != std::string::npos)
        fatal_at_line = true;
    }
    // "ptxas f.ptx, line 9; fatal   : ..." in the raw log.
    for (size_t at = a->log.find("; fatal"); at != std::string::npos; at = a->log.find("; fatal", at + 1)) {
      size_t num = a->log.rfind("line ", at);
      if (num == std::string::npos) continue;
      int line = std::atoi(a->log.c_str() + num + 5);
      if (line <= 0) continue;
      size_t colon = a->log.find(": ", at);
      size_t eol = a->log.find('\n', at);
      rejected.emplace(line, colon < eol ? a->log.substr(colon + 2, eol - colon - 2) : "fatal");
      last_line = std::max(last_line, line);
      fatal_at_line = true;
    }
    if (!fatal_at_line) return rejected;
    // Blank the line of the fatal error and go again for the lines after it.
    size_t pos = 0;
    for (int l = 1; l < last_line && pos != std::string::npos; ++l) pos = text.find('\n', pos) + 1;
    size_t end = text.find('\n', pos);
    text.replace(pos, end - pos, std::string());
  }
  return rejected;
}

inline AgreementStats agree_with_ptxas(const std::vector<RuleCase>& cases, const RuleHeader& h,
                                       const std::string& arch = "") {
  AgreementStats st;
  std::string head = rule_module_head(h);
  std::string text = head;
  std::vector<int> defect_lines;
  for (auto& c : cases) {
    int start = count_lines(text) + 1;
    defect_lines.push_back(start + 1 + count_lines(c.setup));
    text += case_text(c);
  }
  text += "ret;\n}\n";
  std::map<int, std::string> rejected = ptxas_rejected_lines(text, arch.empty() ? h.target : arch);
  for (size_t i = 0; i < cases.size(); ++i) {
    ++st.cases;
    std::string alone = head + case_text(cases[i]) + "ret;\n}\n";
    int line = count_lines(head) + 2 + count_lines(cases[i].setup);
    auto ours = check_source(alone, ValidateOptions{false});
    bool we_error = false, we_error_at_line = false;
    std::string first;
    for (auto& d : ours.diags.list()) {
      if (d.severity != Severity::error) continue;
      we_error = true;
      if (first.empty()) first = d.message + " [" + d.check_id + "]";
      if (static_cast<int>(d.loc.line) == line) we_error_at_line = true;
    }
    auto verdict = rejected.find(defect_lines[i]);
    if (verdict != rejected.end()) {
      ++st.ptxas_rejects;
      if (we_error_at_line) ++st.we_flag;
      else
        st.problems.push_back(fmt::format("missed (ptxas: {}): {}{}", verdict->second, cases[i].line,
                                          we_error ? " [we flag another line: " + first + "]" : ""));
    } else if (we_error) {
      ++st.false_alarms;
      st.problems.push_back(fmt::format("false alarm (ptxas accepts): {}  -> {}", cases[i].line, first));
    }
  }
  return st;
}

// Module-level rules (declaration order, directives, initializers, address widths) need a
// whole module per case, and some ptxas errors carry no line ("32-Bit ABI ... not supported"):
// each case is assembled alone, and rejected means any error at all.
struct ModuleCase {
  std::string text;  // a whole module
  int line = 0;      // the defect's line (1-based), where we must report an error
};

inline AgreementStats agree_modules_with_ptxas(const std::vector<ModuleCase>& cases, const std::string& arch = "sm_90a") {
  AgreementStats st;
  for (auto& c : cases) {
    ++st.cases;
    toolchain::AssembleOptions o;
    o.arch = arch;
    auto a = toolchain::assemble_with_ptxas(c.text, o);
    if (!a) {
      st.problems.push_back("ptxas did not run: " + a.error().message);
      continue;
    }
    auto ours = check_source(c.text, ValidateOptions{false});
    bool we_error = false, we_error_at_line = false;
    std::string first;
    for (auto& d : ours.diags.list()) {
      if (d.severity != Severity::error) continue;
      we_error = true;
      if (first.empty()) first = fmt::format("line {}: {} [{}]", d.loc.line, d.message, d.check_id);
      if (static_cast<int>(d.loc.line) == c.line) we_error_at_line = true;
    }
    std::string shown = c.text.substr(0, 400);
    if (!a->ok) {
      ++st.ptxas_rejects;
      if (we_error_at_line) ++st.we_flag;
      else st.problems.push_back(fmt::format("missed (ptxas rejects) at line {}:\n{}{}", c.line, shown,
                                             we_error ? "\n[we flag: " + first + "]" : ""));
    } else if (we_error) {
      ++st.false_alarms;
      st.problems.push_back(fmt::format("false alarm (ptxas accepts): {}\n{}", first, shown));
    }
  }
  return st;
}

}  // namespace ptxforge::ptx::testing
