#include "agent/prompt.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpu/guard_layout.h"
#include "ptx/target.h"
#include "task/baselines.h"
#include "task/task_view.h"
#include "toolchain/nvcc.h"
#include "util/text.h"

namespace ptxforge::agent {

namespace {

// What the kernel is timed against: nvcc's build of the reference and, where the task has one,
// the vendor library ("cuBLAS sgemm").
std::string timed_against(const task::Task& t) {
  std::string out = "the kernel nvcc builds from the reference";
  if (t.baseline) out += fmt::format(" and against {}, the vendor library", task::baseline_spec(t.baseline->kind).display_name);
  return out;
}

std::string role_and_rules(const task::Task& t, const PromptOptions& o) {
  return fmt::format(
      "You are the compiler backend of a GPU toolchain: you write PTX, NVIDIA's virtual ISA, directly. Your module is "
      "checked by a PTX front end, assembled by ptxas for {arch}, run against a reference on several sizes and seeds "
      "(including sizes you are not shown), and timed against {timed}.\n\n"
      "Rules:\n"
      "- Write PTX ISA 9.0 or lower that CUDA 13.0's ptxas accepts for `.target {arch}`.\n"
      "- The kernel must be correct for every size, including sizes that are not multiples of your tile or block.\n"
      "- Outputs are filled with garbage before your kernel runs: write every output element. Never write outside a "
      "buffer, and never modify an input.\n"
      "- Read kernel parameters with ld.param, and convert pointers with cvta.to.global before global loads and stores.\n"
      "- Declare every register (`.reg .b32 %r<16>;`); do not name a register like a special register (%tid, %ntid, ...).\n"
      "- The entry is named `{entry}` and takes the parameters in the order listed (pointers as .u64, scalars as their "
      "type{tm}).",
      fmt::arg("arch", o.arch), fmt::arg("entry", t.entry), fmt::arg("timed", timed_against(t)),
      fmt::arg("tm", [&] {
        for (auto& p : t.params)
          if (p.kind == task::Param::tensor_map) return std::string(", tensor maps as `.param .align 64 .b8 NAME[128]`");
        return std::string();
      }()));
}

std::string output_format(const task::Task& t, const std::string& arch) {
  auto target = ptx::Target::parse(arch);
  auto version = target ? ptx::min_version_for(*target) : std::nullopt;
  return fmt::format(
      "## Answer format\n"
      "Answer with exactly one ```ptx code block holding the complete module. Its first lines are the launch spec, "
      "as comments, with values as expressions over the size symbols:\n\n"
      "```ptx\n"
      "// @launch grid=(ceil_div(n, 256), 1, 1) block=(256, 1, 1) smem=0\n"
      ".version {version}\n"
      ".target {arch}\n"
      ".address_size 64\n\n"
      ".visible .entry {entry}(...)\n"
      "{{\n"
      "    ...\n"
      "}}\n"
      "```\n\n"
      "Several kernels run in order with one `// @launch entry=NAME grid=... block=... args=(a, b, ...)` line each; "
      "`// @scratch name=tmp dtype=f32 count=EXPR` gives you a zero-filled scratch buffer to pass in `args`. You may "
      "explain before the block; nothing after it is read.",
      fmt::arg("version", version ? version->str() : "8.0"), fmt::arg("arch", arch), fmt::arg("entry", t.entry));
}

// What the harness does around the kernel, so a model need not guess it: the symbols launch
// expressions may name, integer division, what each buffer holds before a run, that all the
// launch lines are one timed run, scratch buffers as parameters, the alignment every buffer
// gets (gpu/guard_layout.h), and what the time is compared with.
std::string harness_facts(const task::Task& t) {
  std::set<std::string> symbols;  // from the shown size sets only: held-back sets stay unnamed
  for (auto* s : t.size_sets(false))
    for (auto& [k, v] : s->values) symbols.insert("`" + k + "`");
  std::vector<std::string> outs, inouts, args;
  for (auto& p : t.params) {
    args.push_back(p.name);
    if (p.kind != task::Param::buffer) continue;
    if (p.role == task::Role::out) outs.push_back("`" + p.name + "`");
    if (p.role == task::Role::inout) inouts.push_back("`" + p.name + "`");
  }
  std::string out = "\n## How your kernel is run\n";
  out += fmt::format("- Size symbols for `@launch` and `@scratch` expressions: {} (the values of the size set being "
                     "run; nothing else is bound). `/` and `%` there are integer division and remainder, truncating "
                     "as in C: `n / 256` drops the remainder, `ceil_div(n, 256)` covers every element.\n",
                     symbols.empty() ? std::string("none") : fmt::format("{}", fmt::join(symbols, ", ")));
  std::string contents = "- Before every run the harness writes the buffers again: inputs hold the test data";
  if (!outs.empty())
    contents += fmt::format("; outputs ({}) are poisoned (every word 0xFFBADBAD, a NaN as f32), so write every element",
                            fmt::join(outs, ", "));
  if (!inouts.empty())
    contents += fmt::format("; in-out buffers ({}) hold their initial contents again", fmt::join(inouts, ", "));
  out += contents + "; `@scratch` buffers are zero-filled.\n";
  out += "- A run is all your `@launch` lines, in order, on one stream: they are timed together as one run, and "
         "nothing is reset between them (a later launch sees what an earlier one wrote).\n";
  out += fmt::format("- An entry may take `@scratch` buffers as extra parameters: declare one with `// @scratch "
                     "name=tmp dtype=f32 count=EXPR`, give the entry a `.param .u64` for it, and name every argument "
                     "of that entry, in its .param order, in its launch line: `// @launch grid=(...) block=(...) "
                     "args=({}, tmp)`. Without `args=` an entry takes exactly the task's parameters, in order.\n",
                     fmt::join(args, ", "));
  out += fmt::format("- Every buffer, scratch included, starts on a {}-byte boundary; its end is not padded, so an "
                     "access past the last element may fault.\n",
                     gpu::kGuardDataAlign);
  out += fmt::format("- Timed against {}.\n", timed_against(t));
  return out;
}

// A reference kernel declared without extern "C" keeps nvcc's mangled name
// (_Z5twicePKfPfj); the model is shown the name it finds in the source (twice).
std::string source_name(const std::string& entry) {
  if (!starts_with(entry, "_Z")) return entry;  // not mangled ("f" alone would demangle as a type)
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> d(abi::__cxa_demangle(entry.c_str(), nullptr, nullptr, &status), std::free);
  if (status != 0 || !d) return entry;
  std::string name = d.get();
  return name.substr(0, name.find('('));
}

// A knowledge file as the model reads it: without the `<!-- run: ... -->` lines that tie its
// examples to the tasks the GPU tests run them against (they mean nothing to the model).
std::string for_model(std::string_view text) {
  std::string out;
  for (auto line : split(text, '\n')) {
    if (starts_with(trim(line), "<!-- run:")) continue;
    out += line;
    out += '\n';
  }
  if (!ends_with(text, "\n") && !out.empty()) out.pop_back();
  return out;
}

}  // namespace

Result<std::vector<llm::Message>> build_prompt(const task::Task& t, const PromptOptions& o, const Hardware& hw,
                                               const std::vector<KnowledgeDoc>& knowledge) {
  std::vector<llm::Message> msgs;
  if (o.role) msgs.push_back({"system", role_and_rules(t, o)});
  std::string user;
  if (o.mode == Mode::implement) {
    user += task::render_task_for_model(t);
  } else {
    auto source = read_file(t.dir + "/reference.cu");
    if (!source) return source.error();
    user += fmt::format("# Compile this CUDA kernel to PTX\n\nYou are the compiler: translate the kernel `{}` below into "
                        "PTX for {}. Name the entry `{}`; keep the parameters in the same order. Your PTX is checked "
                        "against this same source built by nvcc -O3, on sizes you are not shown as well.\n\n```cuda\n{}```\n\n",
                        source_name(t.reference.entry), o.arch, t.entry, *source);
    // The sizes and the launch convention still come from the task.
    std::string view = task::render_task_for_model(t);
    size_t sizes = view.find("## Sizes");
    if (sizes != std::string::npos) user += view.substr(sizes);
  }
  user += harness_facts(t);
  if (o.knowledge >= KnowledgeLevel::hardware) user += "\n## Hardware\n" + hw.describe() + "\n";
  auto docs = select_knowledge(knowledge, o.knowledge, t.required_instructions);
  if (!docs.empty()) {
    user += "\n## Reference notes\n";
    for (auto* d : docs) {
      std::string text = for_model(d->text.substr(d->text.find('\n') + 1));  // without the metadata line
      user += "\n" + text + (ends_with(text, "\n") ? "" : "\n");
    }
  }
  if (o.fewshot_nvcc) {
    auto ptx = toolchain::nvcc_ptx(t.dir + "/reference.cu", o.arch);
    if (!ptx) return ptx.error();
    user += fmt::format("\n## What nvcc produces\nFor reference, this is the PTX nvcc -O3 emits for the reference "
                        "kernel `{}`. Do better than it, or at least as well.\n\n```ptx\n{}```\n",
                        source_name(t.reference.entry), *ptx);
  }
  if (!o.repair_candidate.empty())
    user += fmt::format("\n## An earlier attempt that failed\nThis kernel was written for the task above and did not pass. "
                        "The toolchain's verdict on it follows. Repair it (or write the kernel anew where that is simpler) "
                        "and answer with the complete module.\n\n```ptx\n{}{}```\n\n### The verdict\n{}{}",
                        o.repair_candidate, ends_with(o.repair_candidate, "\n") ? "" : "\n", o.repair_feedback,
                        ends_with(o.repair_feedback, "\n") ? "" : "\n");
  if (o.format) user += "\n" + output_format(t, o.arch) + "\n";
  if (o.max_tokens > 0)
    user += fmt::format("\nYour reply may be at most {} tokens. A reply cut at that limit is not checked at all: keep "
                        "the text before the code block short and the module compact.\n",
                        o.max_tokens);
  msgs.push_back({"user", user});
  return msgs;
}

}  // namespace ptxforge::agent
