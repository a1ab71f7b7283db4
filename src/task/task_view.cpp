#include "task/task_view.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ptxforge::task {

std::string render_task_for_model(const Task& t) {
  std::string out = fmt::format("# Task {} (level {})\n\n{}\n\n", t.name, t.level, t.description);
  out += fmt::format("## Kernel\nEntry name: `{}`. Parameters, in order:\n", t.entry);
  for (auto& p : t.params) {
    switch (p.kind) {
      case Param::buffer:
        out += fmt::format("- `{}`: pointer to {} elements of {} in global memory, {}{}\n", p.name, p.count.text(),
                           dtype_name(p.dtype),
                           p.role == Role::in ? "input (must not be modified)" : p.role == Role::out ? "output" : "input and output",
                           p.shape.size() == 2 ? fmt::format(", a {} x {} row-major matrix", p.shape[0].text(), p.shape[1].text()) : "");
        break;
      case Param::scalar:
        out += fmt::format("- `{}`: {} scalar, equal to {}\n", p.name, dtype_name(p.dtype), p.value.text());
        break;
      case Param::tensor_map: {
        std::vector<std::string> dims, strides;
        for (auto& d : p.dims) dims.push_back(d.text());
        for (auto& d : p.strides) strides.push_back(d.text());
        const Param* over = t.find_param(p.over);
        out += fmt::format("- `{}`: a CUtensorMap passed by value in this place of the parameter list (`.param .align 64 "
                           ".b8 {}[128]`) over `{}` ({} elements), dims ({}) innermost first, strides ({}) bytes for "
                           "the outer dims; the harness encodes it with cuTensorMapEncodeTiled (strides must be "
                           "multiples of 16 bytes); you choose box, swizzle, interleave, L2 promotion and OOB fill "
                           "with a `// @tensormap` line\n",
                           p.name, p.name, p.over, over ? dtype_name(over->dtype) : "?", fmt::join(dims, ", "),
                           fmt::join(strides, ", "));
        break;
      }
    }
  }
  out += "\n## Sizes\nThe kernel must be correct for any size; it is also checked on sizes not listed here.\n";
  for (auto* s : t.size_sets(false)) {
    std::vector<std::string> kv;
    for (auto& [k, v] : s->values) kv.push_back(fmt::format("{} = {}", k, v));
    out += fmt::format("- {}: {}\n", s->name, fmt::join(kv, ", "));
  }
  out += "\n## Correctness\n";
  for (auto& p : t.params) {
    if (!p.is_output()) continue;
    Tolerance tol = t.tolerance_for(p.name);
    out += fmt::format("- `{}`: |actual - expected| <= {:g} + {:g} * |expected| for {}of the elements\n", p.name, tol.atol,
                       tol.rtol, tol.min_match >= 1.0 ? "all " : fmt::format("at least {:g}% ", 100 * tol.min_match));
  }
  if (!t.required_instructions.empty()) {
    std::vector<std::string> needs;
    bool alternatives = false;
    for (auto& g : t.required_groups) {
      needs.push_back(g.size() == 1 ? g[0] : fmt::format("{} (either will do)", fmt::join(g, " or ")));
      alternatives = alternatives || g.size() > 1;
    }
    if (needs.empty()) needs = t.required_instructions;
    out += fmt::format(
        "\n## Required instructions\nThe PTX must use: {}. Each must also be in the machine code ptxas "
        "makes and must execute on the test cases (a copy of your kernel counts the warps reaching each "
        "one); code that never runs does not count.{}\n",
        fmt::join(needs, ", "),
        alternatives
            ? " Where either will do, this holds for the one you use, which alone must reach its floor below; a kernel "
              "using both needs each count divided by its own floor to add up to at least 1."
            : "");
    for (auto& [family, floor] : t.min_executed)
      out += fmt::format("- {} must carry the work: at least {} per case, in multiply-adds for a matrix instruction (each "
                         "execution counts its shape's M*N*K), bytes for a copy (a TMA copy counts its box) or ldmatrix, "
                         "else warp executions.\n",
                         family, floor.text());
  }
  out += fmt::format("\n## Target\nAt least `.target {}`; the GPU's own target is used when assembling.\n", t.min_target);
  out += "\n## Launch spec\nPut the launch in comment lines of the PTX, values as expressions over the size symbols "
         "(+ - * / %, ceil_div, min, max):\n"
         "    // @launch grid=(ceil_div(n,256),1,1) block=(256,1,1) smem=0\n"
         "Several `@launch` lines run in order (entry=NAME args=(a,b,...) pick the entry and its arguments); "
         "`// @scratch name=tmp dtype=f32 count=EXPR` asks for a zero-filled scratch buffer; cluster=(x,y,z) launches "
         "with thread-block clusters; smem above 48 KB is opted in for you.\n";
  return out;
}

}  // namespace ptxforge::task
