// The golden vectors' generator (docs/emu.md section 5, "Golden vectors"): from the form table
// (golden_forms.h), one PTX kernel per family that runs unchanged on a GPU and on the engine,
// and the instances those kernels run, drawn by the keyed PRF with edge values planted. The
// GPU recorder (worker/emu_golden_record_gpu_test.cpp) and the CI check (golden_check.h) both
// build their launches from here, so the recording and the check execute the same code.
//
// A kernel is `.entry golden_<family>(.param .u64 in, .param .u64 out, .param .u32 n)`:
// thread i < n reads instance i at in[i * stride] (stride = 1 + the family's arity, in u64
// slots): slot 0 is the form id, slot 1 + k the bits of input k in its low bytes. It branches
// to its form's block, executes the one instruction and stores the destination register,
// zero-extended, to out[i] (a predicate as 0/1; 8-bit types live in 16-bit registers).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "emu/golden_forms.h"

namespace ptxforge::emu {

// The recording's target: H200 (sm_90). Forms that cannot run there (the sm_100 packed fp
// formats) or that the checker rejects are left out of the kernels and listed with the reason.
inline constexpr std::string_view kGoldenTarget = "sm_90";
inline constexpr std::string_view kGoldenVersion = "8.1";  // cvt .satfinite to tf32/f16
// Instances per form: 64 x 349 forms gives over 20,000 instances, the floor the golden test keeps.
inline constexpr size_t kGoldenPerForm = 64;
// What out[i] holds when no form block ran (a form id the kernel does not know).
inline constexpr uint64_t kGoldenNoForm = 0xdeadbeefcafef00dull;
inline constexpr uint32_t kGoldenBlock = 128;  // threads per CTA of a generator launch

struct GoldenFamily {
  std::string name;    // the table's family ("arith.f32")
  std::string entry;   // its kernel ("golden_arith_f32")
  size_t arity = 0;    // inputs per form (one per family: FamiliesShareOperandSignatures)
  std::vector<uint32_t> forms;  // form ids, in table order
};

struct GoldenSkip {
  uint32_t form = 0;
  std::string why;
};

struct GoldenPlan {
  std::vector<GoldenFamily> families;
  std::vector<GoldenSkip> skipped;  // forms no sm_90 kernel can run
  const GoldenFamily* find(std::string_view family) const;
};

// The families of golden_forms() and the forms left out, computed once.
const GoldenPlan& golden_plan();

// A module with one entry per family given, for kGoldenTarget.
std::string golden_module(std::span<const GoldenFamily* const> families);
std::string golden_module(const GoldenFamily& family);

// One instance of a form: its inputs' bits, each masked to its operand's width.
struct GoldenInstance {
  uint32_t form = 0;
  std::array<uint64_t, 4> in{};
};

// `count` instances of form `form`, from the PRF under the fixed golden key: instance j is
// block j of stream `form`, so every instance is reproducible on its own. A third (j % 3 == 0)
// take every operand from its type's edge values (each of them, given golden_instance_count); the others draw random bits, moderate
// magnitudes, and now and then one edge value.
std::vector<GoldenInstance> golden_instances(uint32_t form, size_t count);
// The recorded count: kGoldenPerForm, or three times the form's longest edge list if more.
size_t golden_instance_count(uint32_t form);
std::vector<GoldenInstance> golden_instances(uint32_t form);

// The edge values planted for an operand type (raw bits, masked to the type's width); `count`
// operands (shift amounts, bit-field positions and lengths) get their own list.
std::span<const uint64_t> golden_edges(GoldenType t, bool count);
// Whether input k of a form is a count (shift amount, bit position or field length).
bool golden_is_count(const GoldenForm& f, size_t input);

// The `in` buffer of one launch of `family` over `instances` (all of forms of that family):
// (1 + arity) little-endian u64 slots per instance.
std::vector<uint64_t> golden_input_slots(const GoldenFamily& family, std::span<const GoldenInstance> instances);

// Bits of the register a form's result is stored from: 16 for 8-bit types, 1 for pred.
int golden_register_bits(GoldenType t);
uint64_t golden_mask(int bits);

}  // namespace ptxforge::emu
