// Operand and modifier rules of the tcgen05 family (Blackwell's fifth-generation tensor core:
// tensor-memory allocation, loads and stores, MMA, commit, copy, shift, fence, wait). The ISA
// table knows these instructions by opcode, version and target only; their modifiers come in
// groups (cta_group, shape, .num, kind, scale vector size, ...) whose legal combinations and
// operand shapes the manual states per form. Every rule here was read in the PTX ISA manual
// and confirmed against ptxas 13.0 by rules_tcgen05_test.cpp, which also proves that no rule
// fires on a form ptxas accepts.
#pragma once

#include "ptx/check_context.h"

namespace ptxforge::ptx {

// Called for every instruction whose family is one of the tcgen05 rows.
void check_tcgen05(CheckContext& ctx, const Instruction& ins, const Resolved& r);

}  // namespace ptxforge::ptx
