// Operand and modifier rules of Hopper's and Blackwell's asynchronous instructions: the
// warpgroup MMA (wgmma.mma_async), the tensor copy (cp.async.bulk.tensor), tensormap.replace
// and tensormap.cp_fenceproxy, setmaxnreg, elect.sync, mbarrier arrive.expect_tx,
// griddepcontrol, and cvt to and from the fp8/fp6/fp4 types. The ISA table's columns cannot
// say these: which operand counts go with which modifiers, what a coordinate vector's length
// must be, which immediates an operand position takes. Every rule here was confirmed against
// ptxas 13.0 by rules_async_test.cpp; a form we are not sure about is left alone.
#pragma once

#include "ptx/check_context.h"

namespace ptxforge::ptx {

// One call per instruction, after the table-driven checks (check_instructions.cpp).
void check_async_ops(CheckContext& ctx, const Instruction& ins, const Resolved& r);

}  // namespace ptxforge::ptx
