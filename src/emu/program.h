// The lowered form of a PTX module (docs/emu.md section 2): what the interpreter runs. Lowering
// (emu/lower*.cpp) resolves names, types and modifiers once, so executing an instruction is a
// switch over a dense Op and a loop over the active lanes, with no text in sight.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "emu/alu.h"
#include "emu/race_clock.h"

namespace ptxforge::emu {

// Value types an instruction operates on (the PTX type modifiers the engine executes).
enum class DT : uint8_t {
  none, pred,
  b8, b16, b32, b64, b128,
  u8, u16, u32, u64,
  s8, s16, s32, s64,
  f16, f16x2, bf16, bf16x2, f32, f64, tf32,
  e4m3x2, e5m2x2,
};
int dt_bits(DT t);
bool dt_signed(DT t);
bool dt_float(DT t);  // f16 bf16 f32 f64 tf32 and packed forms

// State spaces of an address operand or of cvta.
enum class Space : uint8_t { generic, global, shared, local, param, const_ };

enum class Op : uint16_t {
  nop,  // membar, fence, prefetch...: no effect on values
  mov, mov_pack, mov_unpack,
  ld, st, cvta_to, cvta_from,
  add, sub, mul_lo, mul_hi, mul_wide, mad_lo, mad_hi, mad_wide, mul24_lo, mul24_hi, mad24_lo, mad24_hi,
  add_cc, addc, sub_cc, subc, mad_cc, madc,
  div, rem, abs, neg, min, max, and_, or_, xor_, not_, cnot, shl, shr, selp, slct, setp, set,
  fma, rcp, sqrt, rsqrt, ex2, lg2, sin, cos, tanh, copysign, testp,
  cvt, popc, clz, bfind, brev, bfe, bfi, prmt, lop3, shf, dp4a, dp2a, bmsk, szext,
  bra, ret, exit, call, trap,
  bar_sync, bar_arrive, bar_red, bar_warp_sync,
  shfl, vote, activemask, match, redux, elect,
  atom, red,
  fence,  // fence.sc/.acq_rel/..., membar: no effect on values, an event for the race detector
};

enum class OpndKind : uint8_t {
  none,
  reg,         // register slot (64 bits per lane)
  pred,        // predicate slot (one bit per lane)
  imm,         // an immediate, or the address of a module variable or kernel parameter
  sreg,        // special register (SReg in idx)
  frame_addr,  // the address of a .local/.param variable of the current frame: imm + frame base
  sink,        // _
};

enum class SReg : uint8_t {
  tid_x, tid_y, tid_z, ntid_x, ntid_y, ntid_z, ctaid_x, ctaid_y, ctaid_z, nctaid_x, nctaid_y, nctaid_z,
  laneid, warpid, nwarpid, lanemask_eq, lanemask_le, lanemask_lt, lanemask_ge, lanemask_gt,
  smid, nsmid, clock, clock_hi, clock64, globaltimer, globaltimer_lo, globaltimer_hi,
  dynamic_smem_size, total_smem_size, gridid, warpsz,
};

struct Opnd {
  OpndKind kind = OpndKind::none;
  bool neg = false;  // !%p
  Space space = Space::generic;  // frame_addr: local or param
  uint32_t idx = 0;  // slot, predicate slot, SReg
  uint64_t imm = 0;
};

// Sub-modes carried in Inst::sub.
enum class Combine : uint8_t { none, and_, or_, xor_ };           // setp/set .and/.or/.xor
enum class ShflMode : uint8_t { up, down, bfly, idx };
enum class VoteMode : uint8_t { all, any, uni, ballot };
enum class AtomOp : uint8_t { add, min, max, inc, dec, and_, or_, xor_, exch, cas };
enum class ReduxOp : uint8_t { add, min, max, and_, or_, xor_ };
enum class BarRed : uint8_t { popc, and_, or_ };

struct Exec;

struct Inst {
  Op op = Op::nop;
  DT type = DT::none;   // the instruction type (cvt and cvt-like: the destination)
  DT type2 = DT::none;  // cvt's source type; set's compare type; the wide result of mul.wide
  Space space = Space::generic;
  uint8_t vec = 1;      // .v2/.v4 elements of ld/st/mov
  uint8_t sub = 0;      // Combine, ShflMode, VoteMode, AtomOp, ReduxOp, BarRed, prmt mode, shf.l
  bool flag = false;    // op-specific: shf .wrap, bar .aligned, call through a register, bfind .shiftamt, sat
  bool nc = false;      // ld.global.nc
  // The memory model's .sem and .scope (ld/st/atom/red/fence), for the race detector only:
  // plain ld/st are weak with no scope, .volatile is relaxed.sys, atom/red default to relaxed.gpu.
  MemOrder sem = MemOrder::weak;
  MemScope scope = MemScope::none;
  alu::FMode fm;
  alu::Cmp cmp = alu::Cmp::eq;
  alu::CvtMode cvt;
  int32_t guard = -1;  // predicate slot, -1 none
  bool guard_neg = false;
  uint8_t n = 0;                // operands used in o
  std::array<Opnd, 8> o{};      // destinations first, then sources (ld: dests; st: sources)
  Opnd addr_base;               // address operand: base (reg, imm, frame_addr) + offset
  int64_t addr_off = 0;
  uint32_t target = 0;          // branch target (instruction index) or callee (function index)
  uint32_t nargs = 0, nrets = 0; // call: o[0..nrets) rets, o[nrets..nrets+nargs) args
  uint32_t line = 0, col = 0;
  // The fast path's kernel for this form (emu/interp_fast.h), set when the machine is made;
  // null: the general path.
  void (*fast)(Exec& x) = nullptr;
};

struct ParamSlot {
  uint32_t offset = 0, size = 0;
};

struct Function {
  std::string name;
  bool is_entry = false;
  std::vector<Inst> code;
  std::vector<std::string> opcodes;  // full opcode text per instruction (for counts and messages)
  std::vector<uint32_t> rpo;         // reverse-post-order index per instruction: the scheduler's priority
  uint32_t slots = 0, preds = 0;
  // Entry: the kernel parameter buffer. Func: parameters and returns in the frame.
  std::vector<ParamSlot> params, rets;
  uint32_t param_bytes = 0;  // entry: size of the kernel parameter buffer
  uint32_t frame_bytes = 0;  // .local variables, body .param variables, a func's params and returns
  uint32_t frame_align = 16;
  bool declared_only = false;
};

// A module variable laid out once per machine.
struct ModuleVar {
  std::string name;
  Space space = Space::global;
  uint64_t offset = 0;  // global: in the module-globals image; const: in the const bank; shared: in every CTA
  uint64_t size = 0;
  std::vector<uint8_t> init;  // its initializer's bytes (size bytes); empty without one, and once a machine copied them
  // Initializer entries that hold another variable's address (generic(x) or x): offset and target.
  struct Reloc {
    uint64_t at = 0;
    uint32_t var = 0;
    uint64_t addend = 0;
    uint8_t bytes = 8;
  };
  std::vector<Reloc> relocs;
};

struct Program {
  std::vector<Function> fns;
  std::vector<ModuleVar> vars;
  uint64_t shared_static = 0;  // module .shared bytes (every kernel sees every variable)
  uint64_t const_bytes = 0;
};

}  // namespace ptxforge::emu
