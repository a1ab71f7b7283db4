// The first prompt of a session. Each part can be switched off, so the ablations of the
// seed reports (hardware facts, templates, contracts, nvcc few-shot) can be reproduced:
// role and rules; the task (as `suite show` prints it) or, in translate mode, the CUDA
// source to compile; how the harness runs the kernel (launch symbols, buffer contents and
// alignment, what is timed against what); the hardware; the target; knowledge at the chosen
// level; the exact output format and the reply's token limit.
#pragma once

#include <string>
#include <vector>

#include "agent/hardware.h"
#include "agent/knowledge.h"
#include "llm/provider.h"
#include "task/task_spec.h"

namespace ptxforge::agent {

enum class Mode { implement, translate };

struct PromptOptions {
  Mode mode = Mode::implement;
  KnowledgeLevel knowledge = KnowledgeLevel::templates;
  bool fewshot_nvcc = false;  // include the PTX nvcc -O3 makes of the reference kernel
  std::string arch = "sm_90a";
  bool role = true, format = true;  // switches for ablations
  int max_tokens = 0;  // the reply's token limit (compile's max_tokens), stated to the model; 0: not stated
  // A repair (`ptxforge fixit`): a kernel another session could not get right and the
  // toolchain's verdict on it, shown after the task; empty for a fresh start.
  std::string repair_candidate, repair_feedback;
};

Result<std::vector<llm::Message>> build_prompt(const task::Task& t, const PromptOptions& o, const Hardware& hw,
                                               const std::vector<KnowledgeDoc>& knowledge);

}  // namespace ptxforge::agent
