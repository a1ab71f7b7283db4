// The instruction forms the ALU's golden-vector test covers (docs/emu.md section 5, "Golden
// vectors"): each form is a PTX instruction template, its operand types and the alu.h function
// that computes it on the engine. A generator (tools/emu_golden) emits one kernel per family
// from these records and records the GPU's results; EmuGolden compares the engine against them.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace ptxforge::emu {

// A PTX operand type as the generator declares its register and the recorder stores it
// (raw bits, little-endian, in the low bytes of a uint64_t).
enum class GoldenType : uint8_t { pred, b16, b32, b64, u8, u16, u32, u64, s8, s16, s32, s64, f16, bf16, f32, f64, f16x2, bf16x2 };

// How results compare: bit-exact, or within the .approx bound the manual states.
enum class GoldenCheck : uint8_t {
  exact,
  ulp,             // bound = ulps of the f32 (or f16/bf16) result
  abs_or_rel,      // lg2: absolute on (0.5, 2), relative elsewhere (bound = log2 of the error)
  abs,             // absolute error 2^bound
  rel,             // relative error 2^bound
};

struct GoldenForm {
  std::string family;    // one generator kernel per family: "add.f32", "cvt.int", "prmt" ...
  std::string ptx;       // "add.rz.ftz.f32 %d, %a, %b": %d is the result, %a %b %c the inputs
  GoldenType result;
  std::vector<GoldenType> inputs;
  GoldenCheck check = GoldenCheck::exact;
  double bound = 0;      // for the non-exact checks (see GoldenCheck)
  // The engine's answer: inputs as raw bits in the order of `inputs`.
  std::function<uint64_t(std::span<const uint64_t>)> eval;
};

// Every form, in a fixed order: a form's index is its id in the recorded vectors, so forms are
// only ever appended.
const std::vector<GoldenForm>& golden_forms();

// Bits of one operand type (1 for pred).
int golden_type_bits(GoldenType t);

}  // namespace ptxforge::emu
