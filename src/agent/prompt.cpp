#include "agent/prompt.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

#include <fmt/format.h>

#include "ptx/target.h"
#include "task/task_view.h"
#include "toolchain/nvcc.h"
#include "util/text.h"

namespace ptxforge::agent {

namespace {

std::string role_and_rules(const task::Task& t, const PromptOptions& o) {
  return fmt::format(
      "You are the compiler backend of a GPU toolchain: you write PTX, NVIDIA's virtual ISA, directly. Your module is "
      "checked by a PTX front end, assembled by ptxas for {arch}, run against a reference on several sizes and seeds "
      "(including sizes you are not shown), and timed against the kernel nvcc builds from the reference.\n\n"
      "Rules:\n"
      "- Write PTX ISA 9.0 or lower that CUDA 13.0's ptxas accepts for `.target {arch}`.\n"
      "- The kernel must be correct for every size, including sizes that are not multiples of your tile or block.\n"
      "- Outputs are filled with garbage before your kernel runs: write every output element. Never write outside a "
      "buffer, and never modify an input.\n"
      "- Read kernel parameters with ld.param, and convert pointers with cvta.to.global before global loads and stores.\n"
      "- Declare every register (`.reg .b32 %r<16>;`); do not name a register like a special register (%tid, %ntid, ...).\n"
      "- The entry is named `{entry}` and takes the parameters in the order listed (pointers as .u64, scalars as their "
      "type{tm}).",
      fmt::arg("arch", o.arch), fmt::arg("entry", t.entry),
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
  if (o.knowledge >= KnowledgeLevel::hardware) user += "\n## Hardware\n" + hw.describe() + "\n";
  auto docs = select_knowledge(knowledge, o.knowledge, t.required_instructions);
  if (!docs.empty()) {
    user += "\n## Reference notes\n";
    for (auto* d : docs) {
      std::string text = d->text.substr(d->text.find('\n') + 1);  // without the metadata line
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
  if (o.format) user += "\n" + output_format(t, o.arch) + "\n";
  msgs.push_back({"user", user});
  return msgs;
}

}  // namespace ptxforge::agent
