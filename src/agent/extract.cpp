#include "agent/extract.h"

#include <fmt/format.h>

#include "ptx/parser.h"
#include "ptx/rewrite.h"
#include "ptx/target.h"
#include "task/launch_spec.h"
#include "util/text.h"

namespace ptxforge::agent {

namespace {

struct Block {
  std::string lang;
  std::string text;
  bool closed = true;
};

// Fenced blocks (``` or ~~~), in order; an unclosed last fence runs to the end of the reply.
std::vector<Block> fenced_blocks(std::string_view reply) {
  std::vector<Block> out;
  Block* open = nullptr;
  std::string fence;
  for (std::string_view line : split(reply, '\n')) {
    std::string_view t = trim(line);
    bool is_fence = starts_with(t, "```") || starts_with(t, "~~~");
    if (!open && is_fence) {
      fence = std::string(t.substr(0, 3));
      out.push_back({std::string(trim(t.substr(3))), "", false});
      open = &out.back();
      for (auto& c : open->lang) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (open && is_fence && starts_with(t, fence) && trim(t.substr(3)).empty()) {
      open->closed = true;
      open = nullptr;
    } else if (open) {
      open->text += std::string(line) + "\n";
    }
  }
  return out;
}

bool is_cuda_lang(const std::string& l) { return l == "cuda" || l == "cu" || l == "c++" || l == "cpp" || l == "c"; }
bool is_ptx_lang(const std::string& l) { return l.empty() || l == "ptx" || l == "asm" || l == "nasm" || l == "text" || l == "plaintext"; }
bool has_ptx_kernel(std::string_view t) { return t.find(".entry") != std::string_view::npos; }
bool has_cuda_kernel(std::string_view t) { return t.find("__global__") != std::string_view::npos; }
bool is_launch_line(std::string_view line) { return task::is_launch_spec_line(line); }

// Without fences: from the first line that starts PTX to the last closing brace.
std::string unfenced_ptx(std::string_view reply) {
  auto lines = split(reply, '\n');
  size_t first = lines.size(), last = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view t = trim(lines[i]);
    bool starts = starts_with(t, ".version") || starts_with(t, ".target") || starts_with(t, ".visible") ||
                  starts_with(t, ".entry") || starts_with(t, ".global") || starts_with(t, ".shared") ||
                  starts_with(t, ".const") || starts_with(t, ".func") || starts_with(t, ".extern") || is_launch_line(t);
    if (starts && first == lines.size()) first = i;
    if (!t.empty() && t.back() == '}') last = i;
  }
  std::string out;
  if (first == lines.size() || last < first) return out;
  for (size_t i = first; i <= last; ++i) out += std::string(lines[i]) + "\n";
  return out;
}

// .version/.target/.address_size for a snippet that lacks them: the run's target and the
// lowest version that both it and the body accept.
std::string header_for(const std::string& code, const std::string& arch) {
  Diagnostics d;
  ptx::Module m = ptx::parse(code, d);
  ptx::BodyNeeds needs = ptx::body_needs(m);
  ptx::PtxVersion v = needs.ptx;
  if (auto t = ptx::Target::parse(arch))
    if (auto mv = ptx::min_version_for(*t); mv && *mv > v) v = *mv;
  std::string header = fmt::format(".version {}\n", v.str());
  if (code.find(".target") == std::string::npos) header += fmt::format(".target {}\n", arch);
  if (code.find(".address_size") == std::string::npos) header += ".address_size 64\n";
  return header;
}

}  // namespace

Result<Extracted> extract_candidate(std::string_view reply, const std::string& arch) {
  Extracted ex;
  if (trim(reply).empty())
    return Error{"the reply is empty: answer with the complete PTX module in one ```ptx block, with its `// @launch` line"};
  auto blocks = fenced_blocks(reply);
  const Block* chosen = nullptr;
  int kernels = 0;
  for (auto& b : blocks) {
    bool ptx_kernel = is_ptx_lang(b.lang) && has_ptx_kernel(b.text);
    bool cuda_kernel = is_cuda_lang(b.lang) && has_cuda_kernel(b.text);
    if (ptx_kernel || cuda_kernel) {
      ++kernels;
      chosen = &b;  // the last one: models put their final answer last
    }
  }
  if (!chosen)
    for (auto& b : blocks)
      if ((b.lang == "ptx" || b.lang == "asm") && (!chosen || b.text.size() > chosen->text.size())) chosen = &b;
  if (chosen) {
    ex.kind = is_cuda_lang(chosen->lang) ? Extracted::cuda : Extracted::ptx;
    ex.code = chosen->text;
    if (kernels > 1) ex.notes.push_back(fmt::format("the reply has {} code blocks with a kernel; took the last", kernels));
    if (!chosen->closed) ex.notes.push_back("the last code block is not closed (a truncated reply?); took it to the end");
  } else {
    ex.code = unfenced_ptx(reply);
    if (ex.code.empty() || !has_ptx_kernel(ex.code))
      return Error{"no PTX kernel found in the reply: answer with the complete module (.version, .target, the .entry) in "
                   "one ```ptx block, with its `// @launch` line"};
    ex.notes.push_back("the reply has no code fences; took the PTX from the text");
  }
  // Launch lines written outside the code block still belong to the candidate.
  bool code_has_launch = false;
  for (auto line : split(ex.code, '\n')) code_has_launch = code_has_launch || is_launch_line(line);
  if (!code_has_launch) {
    std::string launch;
    for (auto line : split(reply, '\n'))
      if (is_launch_line(line)) launch += std::string(trim(line)) + "\n";
    if (!launch.empty()) {
      ex.code = launch + ex.code;
      ex.notes.push_back("moved the `// @launch` lines found outside the code block into the candidate");
    }
  }
  if (ex.kind == Extracted::ptx && ex.code.find(".version") == std::string::npos) {
    std::string header = header_for(ex.code, arch);
    // After the launch comments, so the header is where ptxas expects it: before any directive.
    std::string launch, rest;
    bool in_prefix = true;
    for (auto line : split(ex.code, '\n')) {
      if (in_prefix && (is_launch_line(line) || trim(line).empty())) launch += std::string(line) + "\n";
      else {
        in_prefix = false;
        rest += std::string(line) + "\n";
      }
    }
    ex.code = launch + header + rest;
    ex.notes.push_back(fmt::format("the PTX had no .version/.target; added `{}`", trim(split(header, '\n')[0])));
  }
  while (ex.code.size() > 1 && ex.code.back() == '\n' && ex.code[ex.code.size() - 2] == '\n') ex.code.pop_back();
  return ex;
}

}  // namespace ptxforge::agent
