// The corpus checker run by tests/corpus/run.sh: for each nvcc-generated module, the front end
// must report nothing, print(parse(x)) must parse back to an equal AST, and ptxas must give
// the printed module the same resources as the original. Prints one line per module and a
// summary table; exits non-zero on any failure.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ptx/front_end.h"
#include "ptx/parser.h"
#include "ptx/printer.h"
#include "toolchain/ptxas.h"
#include "util/text.h"

using namespace ptxforge;

namespace {

std::string arch_of(const ptx::Module& m) {
  for (auto& t : m.target_names())
    if (t.rfind("sm_", 0) == 0) return t;
  return "sm_90a";
}

bool same_resources(const toolchain::AssembleResult& a, const toolchain::AssembleResult& b, std::string& why) {
  if (a.functions.size() != b.functions.size()) {
    why = fmt::format("{} vs {} functions", a.functions.size(), b.functions.size());
    return false;
  }
  for (auto& fa : a.functions) {
    const auto* fb = b.find(fa.name);
    if (!fb) {
      why = "function " + fa.name + " missing after printing";
      return false;
    }
    auto key = [](const toolchain::FunctionResources& f) {
      return std::tuple(f.registers, f.barriers, f.shared_bytes, f.const_bytes, f.local_bytes, f.stack_frame,
                        f.spill_stores, f.spill_loads, f.cumulative_stack);
    };
    if (key(fa) != key(*fb)) {
      why = fmt::format("{}: {} regs/{} smem/{} stack vs {} regs/{} smem/{} stack", fa.name, fa.registers,
                        fa.shared_bytes, fa.stack_frame, fb->registers, fb->shared_bytes, fb->stack_frame);
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int failures = 0, passed = 0;
  bool have_ptxas = true;
  for (int i = 1; i < argc; ++i) {
    std::string path = argv[i];
    auto text = read_file(path);
    if (!text) {
      fmt::print("FAIL {}: {}\n", path, text.error().message);
      ++failures;
      continue;
    }
    SourceText src(path, *text);
    auto checked = ptx::check_source(*text);
    std::string problem;
    if (!checked.diags.empty()) problem = "front end reported:\n" + render_text(checked.diags, src);
    std::string printed = ptx::print(checked.module);
    Diagnostics d2;
    ptx::Module again = ptx::parse(printed, d2);
    if (problem.empty() && d2.has_errors()) problem = "printed module does not parse:\n" + render_text(d2, SourceText(path + " (printed)", printed));
    if (problem.empty() && !(again == checked.module)) problem = "printed module parses to a different AST";
    if (problem.empty() && have_ptxas) {
      toolchain::AssembleOptions opts;
      opts.arch = arch_of(checked.module);
      if (checked.module.targets_debug()) opts.opt_level = 0;  // -G output
      auto a = toolchain::assemble(*text, opts);
      auto b = toolchain::assemble(printed, opts);
      if (!a || !b) {
        fmt::print("note: {}; resource comparison skipped\n", (!a ? a.error() : b.error()).message);
        have_ptxas = false;
      } else if (!a->ok) {
        problem = "ptxas rejects the original:\n" + render_text(a->diags, src);
      } else if (!b->ok) {
        problem = "ptxas rejects the printed module:\n" + render_text(b->diags, SourceText(path + " (printed)", printed));
      } else if (std::string why; !same_resources(*a, *b, why)) {
        problem = "resources differ after printing: " + why;
      }
    }
    if (problem.empty()) {
      ++passed;
      fmt::print("ok   {}\n", path);
    } else {
      ++failures;
      fmt::print("FAIL {}: {}\n", path, problem);
    }
  }
  fmt::print("\ncorpus: {} modules, {} passed, {} failed{}\n", argc - 1, passed, failures,
             have_ptxas ? " (resources compared with ptxas)" : " (ptxas missing: resources not compared)");
  return failures == 0 ? 0 : 1;
}
