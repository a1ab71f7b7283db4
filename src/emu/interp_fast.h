// The interpreter's fast path (docs/emu.md section 10): the common ALU forms (32- and 64-bit
// integer and logic ops, setp, selp, mul.wide, f32/f64 add/sub/mul/fma in .rn without .ftz or
// .sat) get a kernel chosen once per instruction when the machine is made, so an issue of one
// of them is a loop over the active lanes with the type, the operation and the operand kinds
// already decided: no per-lane switch on the op, the type, the modifiers or the operand kind.
// Every other form, and every form whose operands do not fit, stays on the general path
// (interp.cpp, interp_float.cpp), whose results the fast kernels reproduce bit for bit
// (FastPath.* tests run both and compare).
#pragma once

#include "emu/program.h"

namespace ptxforge::emu {

struct Exec;
using FastKernel = void (*)(Exec& x);

// The kernel for `in`, or nullptr when it stays on the general path.
FastKernel fast_kernel(const Inst& in);

// Whether machines made from now on use the fast kernels (default true). For the tests that
// compare the two paths; not an option of the engine.
void set_fast_paths(bool on);
bool fast_paths();

}  // namespace ptxforge::emu
