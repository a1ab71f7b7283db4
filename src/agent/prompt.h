// The first prompt of a session. Each part can be switched off, so the ablations of the
// seed reports (hardware facts, templates, contracts, nvcc few-shot) can be reproduced:
// role and rules; the task (as `suite show` prints it) or, in translate mode, the CUDA
// source to compile; the hardware; the target; knowledge at the chosen level; the exact
// output format.
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
};

Result<std::vector<llm::Message>> build_prompt(const task::Task& t, const PromptOptions& o, const Hardware& hw,
                                               const std::vector<KnowledgeDoc>& knowledge);

}  // namespace ptxforge::agent
