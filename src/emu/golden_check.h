// The golden vectors' recording and its check (docs/emu.md section 5, "Golden vectors"): the
// GPU's results for the generator's instances (golden_gen.h), as stored in tests/emu/golden/,
// and the comparison CI runs without a GPU: the ALU (GoldenForm::eval) and the engine running
// the generator kernels must give the GPU's bits (exact forms) or stay within the manual's
// bound of them and of the true value (.approx forms).
//
// vectors.bin (little-endian):
//   "PTXFGOLD" (8 bytes), u32 format (1), u32 number of form blocks, then per block:
//   u32 form id, u32 instance count, u8 input count k, k x u8 input widths in bytes,
//   u8 output width in bytes, then per instance the k inputs and the output, each in its width.
//   Widths: a type's bytes (pred 1); the output is the destination register (16 bits for 8-bit
//   types), zero-extended by the kernel.
// forms.json: {"format", "table_hash", "forms": [{"id", "family", "ptx", "types", "hash"}],
//   "skipped": [{"id", "why"}], "gpu", "cc", "driver", "cuda", "date", "seconds"}; "forms" are
//   the recorded ones, "hash" the FNV-1a 64 of the template and operand types.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "emu/golden_gen.h"
#include "util/result.h"

namespace ptxforge::emu {

struct GoldenRecordedForm {
  uint32_t form = 0;
  std::string hash;   // from forms.json: the form as recorded
  std::string ptx;    // for messages when the table has moved on
  std::vector<uint8_t> in_bytes;
  uint8_t out_bytes = 0;
  std::vector<GoldenInstance> instances;
  std::vector<uint64_t> outputs;  // the GPU's bits, one per instance
};

struct GoldenRecording {
  std::string table_hash;
  std::string gpu, cc, driver, cuda, date;
  double seconds = 0;
  std::vector<GoldenSkip> skipped;
  std::vector<GoldenRecordedForm> forms;
  size_t instance_count() const;
};

// "a3f0..." (16 hex digits): the template and the operand types, in that order.
std::string golden_form_hash(const GoldenForm& f);
std::string golden_table_hash();
std::string golden_types_text(const GoldenForm& f);  // "f32 <- f32 f32"

// A recording's shell for the current table: one entry per form of the plan, with hash, ptx,
// widths and the generator's instances; the recorder fills `outputs` and the device facts.
GoldenRecording golden_recording_template();

inline constexpr const char* kGoldenVectors = "vectors.bin";
inline constexpr const char* kGoldenForms = "forms.json";

// Errors: a file that cannot be read or written, or contents that are not a recording (never a crash).
Result<GoldenRecording> read_golden_recording(const std::filesystem::path& dir);
Result<Unit> write_golden_recording(const std::filesystem::path& dir, const GoldenRecording& rec);

struct GoldenCheckOptions {
  bool run_alu = true;
  bool run_engine = true;
  size_t show = 20;  // mismatches printed in full
  // Compare the engine on the whole destination register (a GPU recording: 8-bit results live
  // sign- or zero-extended in 16-bit registers), or only on the result type's bits (the ALU's width).
  bool engine_register_bits = true;
};

struct GoldenCheckReport {
  size_t forms_compared = 0, instances = 0, mismatches = 0;
  std::vector<std::string> stale;          // recorded forms whose table entry changed: fail
  std::vector<uint32_t> not_recorded;      // table forms the recording lacks: listed only
  size_t left_out = 0;                     // forms no sm_90 kernel runs (GoldenPlan::skipped)
  std::vector<std::string> engine_errors;  // a family the engine could not run: fail
  std::map<uint32_t, size_t> per_form;     // form -> mismatching instances
  std::vector<std::string> shown;          // the first `show` mismatches, in full
  bool ok() const { return stale.empty() && engine_errors.empty() && mismatches == 0; }
  std::string text() const;
};

// Compares `rec` against the ALU and the engine (docs/emu.md section 5's rule).
GoldenCheckReport check_golden(const GoldenRecording& rec, const GoldenCheckOptions& opts = {});

// Whether `actual` agrees with the GPU's `gpu` for form f on `inputs`: bit-exact for exact
// forms (under `mask`), within the form's bound for the others. Exposed for tests.
bool golden_agrees(const GoldenForm& f, std::span<const uint64_t> inputs, uint64_t gpu, uint64_t actual, uint64_t mask);
// For .approx forms: whether `actual` lies within the bound of the true value (long double);
// true where the true value is not computed (non-finite or subnormal results, best-effort ranges).
bool golden_near_truth(const GoldenForm& f, std::span<const uint64_t> inputs, uint64_t actual);

}  // namespace ptxforge::emu
