// The golden check: a tiny recording written here, with GPU results worked out by hand, passes
// the check on the ALU and on the engine, and fails when one bit is wrong, when a recorded form
// has changed in the table, or when an .approx result leaves the manual's bound; broken files
// are errors, not crashes. EmuGolden.MatchesHardware is the real thing: the committed recording
// (tests/emu/golden/) against the engine, skipped until a GPU has recorded it.
#include "emu/golden_check.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <unistd.h>

namespace ptxforge::emu {
namespace {

namespace fs = std::filesystem;

uint32_t form_id(std::string_view ptx) {
  const auto& forms = golden_forms();
  for (uint32_t i = 0; i < forms.size(); ++i) {
    if (forms[i].ptx == ptx) return i;
  }
  ADD_FAILURE() << "no form " << ptx;
  return 0;
}

// One recorded form with hand-worked (inputs, GPU output) pairs.
GoldenRecordedForm recorded(std::string_view ptx, std::vector<std::pair<std::vector<uint64_t>, uint64_t>> cases) {
  GoldenRecordedForm r;
  r.form = form_id(ptx);
  const GoldenForm& f = golden_forms()[r.form];
  r.hash = golden_form_hash(f);
  r.ptx = f.ptx;
  for (GoldenType t : f.inputs) r.in_bytes.push_back(static_cast<uint8_t>(std::max(1, golden_type_bits(t) / 8)));
  r.out_bytes = static_cast<uint8_t>(std::max(1, golden_register_bits(f.result) / 8));
  for (auto& [in, out] : cases) {
    GoldenInstance g;
    g.form = r.form;
    std::copy(in.begin(), in.end(), g.in.begin());
    r.instances.push_back(g);
    r.outputs.push_back(out);
  }
  return r;
}

GoldenRecording synthetic() {
  GoldenRecording rec;
  rec.table_hash = golden_table_hash();
  rec.gpu = "hand-worked";
  rec.date = "2026-01-01";
  rec.forms = {
      // 1 + 2 = 3, 0.5 + 0.25 = 0.75, 1 + -1 = +0 in round-to-nearest.
      recorded("add.rn.f32 %d, %a, %b", {{{0x3f800000, 0x40000000}, 0x40400000},
                                         {{0x3f000000, 0x3e800000}, 0x3f400000},
                                         {{0x3f800000, 0xbf800000}, 0x00000000}}),
      // 7 * -3 = -21; the low half of 0x10000 * 0x10000 is 0.
      recorded("mul.lo.s32 %d, %a, %b", {{{7, 0xfffffffd}, 0xffffffeb}, {{0x10000, 0x10000}, 0}}),
      // -1 < 1 signed; 5 < 5 is false.
      recorded("setp.lt.s32 %d, %a, %b", {{{0xffffffff, 1}, 1}, {{5, 5}, 0}}),
      // PTX ISA prmt: selector nibbles pick bytes of {b, a}: 0x3210 is a, 0x4567 is b reversed.
      recorded("prmt.b32 %d, %a, %b, %c", {{{0x33221100, 0x77665544, 0x3210}, 0x33221100},
                                           {{0x33221100, 0x77665544, 0x4567}, 0x44556677}}),
      // 1/4 = 0.25 exactly; a GPU one ulp above is inside rcp.approx's 1-ulp bound.
      recorded("rcp.approx.f32 %d, %a", {{{0x40800000}, 0x3e800000}, {{0x40800000}, 0x3e800001}}),
  };
  return rec;
}

fs::path temp_dir(const char* name) {
  fs::path d = fs::temp_directory_path() / ("ptxforge_golden_" + std::string(name) + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d;
}

TEST(GoldenCheck, RoundTripsThroughItsFiles) {
  const fs::path d = temp_dir("roundtrip");
  const GoldenRecording rec = synthetic();
  ASSERT_TRUE(write_golden_recording(d, rec));
  auto back = read_golden_recording(d);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->table_hash, rec.table_hash);
  EXPECT_EQ(back->gpu, "hand-worked");
  ASSERT_EQ(back->forms.size(), rec.forms.size());
  for (size_t i = 0; i < rec.forms.size(); ++i) {
    EXPECT_EQ(back->forms[i].form, rec.forms[i].form);
    EXPECT_EQ(back->forms[i].hash, rec.forms[i].hash);
    EXPECT_EQ(back->forms[i].outputs, rec.forms[i].outputs);
    for (size_t j = 0; j < rec.forms[i].instances.size(); ++j) EXPECT_EQ(back->forms[i].instances[j].in, rec.forms[i].instances[j].in);
  }
  // 8-byte header + format + count, then per form: id, count, k, widths, out width, records.
  EXPECT_EQ(fs::file_size(d / kGoldenVectors), 16u + (4 + 4 + 1 + 2 + 1) * 3 + 3 * 12 + 2 * 12 + 2 * 9 +
                                                   (4 + 4 + 1 + 3 + 1) + 2 * 16 + (4 + 4 + 1 + 1 + 1) + 2 * 8);
  fs::remove_all(d);
}

TEST(GoldenCheck, PassesOnTheTruthAndFailsOnOneWrongBit) {
  const fs::path d = temp_dir("onebit");
  GoldenRecording rec = synthetic();
  ASSERT_TRUE(write_golden_recording(d, rec));
  auto good = read_golden_recording(d);
  ASSERT_TRUE(good) << good.error().message;
  auto rep = check_golden(*good);
  EXPECT_TRUE(rep.ok()) << rep.text();
  EXPECT_EQ(rep.forms_compared, 5u);
  EXPECT_EQ(rep.instances, 11u);
  // The forms the recording lacks are listed, not failed.
  EXPECT_EQ(rep.not_recorded.size(), golden_forms().size() - golden_plan().skipped.size() - 5);
  EXPECT_EQ(rep.left_out, golden_plan().skipped.size());

  rec.forms[3].outputs[1] ^= 0x100;  // prmt: 0x44556777
  ASSERT_TRUE(write_golden_recording(d, rec));
  auto bad = read_golden_recording(d);
  ASSERT_TRUE(bad);
  rep = check_golden(*bad);
  EXPECT_FALSE(rep.ok());
  EXPECT_EQ(rep.mismatches, 1u);
  EXPECT_EQ(rep.per_form.size(), 1u);
  EXPECT_EQ(rep.per_form[form_id("prmt.b32 %d, %a, %b, %c")], 1u);
  ASSERT_EQ(rep.shown.size(), 1u);
  EXPECT_NE(rep.shown[0].find("prmt.b32"), std::string::npos) << rep.shown[0];
  EXPECT_NE(rep.shown[0].find("gpu 0x44556777"), std::string::npos) << rep.shown[0];
  EXPECT_NE(rep.shown[0].find("alu 0x44556677 differs"), std::string::npos) << rep.shown[0];
  EXPECT_NE(rep.shown[0].find("engine 0x44556677 differs"), std::string::npos) << rep.shown[0];
  EXPECT_NE(rep.text().find("1 mismatches"), std::string::npos);
  fs::remove_all(d);
}

TEST(GoldenCheck, ApproxResultsMustStayWithinTheBound) {
  GoldenRecording rec = synthetic();
  rec.forms[4].outputs[1] = 0x3e800003;  // three ulps off a 1-ulp function
  auto rep = check_golden(rec);
  EXPECT_EQ(rep.mismatches, 1u) << rep.text();
  EXPECT_EQ(rep.per_form.count(form_id("rcp.approx.f32 %d, %a")), 1u);

  const GoldenForm& sin = golden_forms()[form_id("sin.approx.f32 %d, %a")];
  const uint64_t one[] = {0x3f800000};  // sin(1) = 0.841470985 = 0x3f576aa4 (rounded)
  EXPECT_TRUE(golden_agrees(sin, one, 0x3f576aa4, 0x3f576aa5, ~0ull));
  EXPECT_FALSE(golden_agrees(sin, one, 0x3f576aa4, 0x3f577aa4, ~0ull));  // 2^-12 apart: over 2^-20.5
  EXPECT_TRUE(golden_near_truth(sin, one, 0x3f576aa4));
  EXPECT_FALSE(golden_near_truth(sin, one, 0x3f576ba4));
  const uint64_t huge[] = {0x5f000000};  // 2^63: outside [-100pi, 100pi], the manual promises nothing
  EXPECT_TRUE(golden_agrees(sin, huge, 0x3f000000, 0xbf000000, ~0ull));
  EXPECT_FALSE(golden_agrees(sin, huge, 0x7fffffff, 0x3f000000, ~0ull));  // but NaN must stay NaN
  const GoldenForm& ex2 = golden_forms()[form_id("ex2.approx.f32 %d, %a")];
  const uint64_t x[] = {0x3f800000};  // 2^1 = 2 = 0x40000000; 2 ulps allowed
  EXPECT_TRUE(golden_near_truth(ex2, x, 0x40000002));
  EXPECT_FALSE(golden_near_truth(ex2, x, 0x40000003));
  const GoldenForm& exact = golden_forms()[form_id("add.rn.f32 %d, %a, %b")];
  EXPECT_FALSE(golden_agrees(exact, x, 0x7fffffff, 0x7fc00000, ~0ull));  // exact: NaN payloads too
}

TEST(GoldenCheck, AChangedFormIsStaleAndNamed) {
  GoldenRecording rec = synthetic();
  rec.forms[1].hash = "0000000000000000";
  rec.forms[1].ptx = "mul.hi.s32 %d, %a, %b";
  auto rep = check_golden(rec);
  EXPECT_FALSE(rep.ok());
  ASSERT_EQ(rep.stale.size(), 1u);
  EXPECT_NE(rep.stale[0].find("recorded as 'mul.hi.s32"), std::string::npos) << rep.stale[0];
  EXPECT_NE(rep.stale[0].find("now has 'mul.lo.s32"), std::string::npos) << rep.stale[0];
  EXPECT_EQ(rep.forms_compared, 4u);
}

TEST(GoldenCheck, BrokenFilesAreErrors) {
  const fs::path d = temp_dir("broken");
  EXPECT_FALSE(read_golden_recording(d));  // absent
  ASSERT_TRUE(write_golden_recording(d, synthetic()));
  const auto size = fs::file_size(d / kGoldenVectors);
  fs::resize_file(d / kGoldenVectors, size - 5);
  auto r = read_golden_recording(d);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("vectors.bin"), std::string::npos) << r.error().message;
  std::ofstream(d / kGoldenVectors, std::ios::trunc) << "PTXFGOLD\x01\0\0\0\xff\xff\xff\xff";
  EXPECT_FALSE(read_golden_recording(d));
  ASSERT_TRUE(write_golden_recording(d, synthetic()));
  std::ofstream(d / kGoldenForms, std::ios::trunc) << "{\"format\": 1, \"forms\": [{\"id\": \"x\"}]}";
  r = read_golden_recording(d);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("forms.json"), std::string::npos) << r.error().message;
  fs::remove_all(d);
}

// The committed recording against the ALU and the engine (docs/emu.md section 5).
TEST(EmuGolden, MatchesHardware) {
  const fs::path dir = fs::path(PTXFORGE_SOURCE_DIR) / "tests/emu/golden";
  if (!fs::exists(dir / kGoldenVectors)) {
    GTEST_SKIP() << "no golden vectors recorded yet: run tests/emu/golden_record.sh on a GPU";
  }
  const auto start = std::chrono::steady_clock::now();
  auto rec = read_golden_recording(dir);
  ASSERT_TRUE(rec) << rec.error().message;
  GoldenCheckOptions opt;
  // PTXFORGE_GOLDEN_SHOW=N prints N mismatches in full (20 by default), to work through a new recording.
  if (const char* show = std::getenv("PTXFORGE_GOLDEN_SHOW")) opt.show = std::strtoul(show, nullptr, 10);
  auto rep = check_golden(*rec, opt);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(rep.ok()) << "recorded on " << rec->gpu << " (cc " << rec->cc << ", " << rec->date << ")\n" << rep.text();
  EXPECT_GE(rep.forms_compared, 150u);
  EXPECT_GE(rep.instances, 20000u);
  std::cout << rep.forms_compared << " forms, " << rep.instances << " instances checked in " << s << " s\n";
}

}  // namespace
}  // namespace ptxforge::emu

namespace ptxforge::emu {
namespace {

// Every generated instance on the engine against the ALU's own evaluation: no GPU needed, so the
// interpreter's lowering of each form is held to the ALU functions the golden test pins.
TEST(GoldenCheck, EngineAgreesWithTheAluOnEveryInstance) {
  GoldenRecording rec = golden_recording_template();
  for (auto& r : rec.forms) {
    const GoldenForm& f = golden_forms()[r.form];
    for (size_t i = 0; i < r.instances.size(); ++i) {
      r.outputs[i] = f.eval(std::span<const uint64_t>(r.instances[i].in.data(), f.inputs.size())) & golden_mask(golden_type_bits(f.result));
    }
  }
  // Through the files at full size, as the recorder writes them and CI reads them.
  const fs::path d = temp_dir("full");
  ASSERT_TRUE(write_golden_recording(d, rec));
  auto back = read_golden_recording(d);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->instance_count(), rec.instance_count());
  EXPECT_LT(fs::file_size(d / kGoldenVectors), 1u << 20);  // compact: under 1 MiB
  fs::remove_all(d);
  GoldenCheckOptions opts;
  opts.run_alu = false;
  opts.engine_register_bits = false;
  opts.show = 60;
  auto rep = check_golden(rec, opts);
  EXPECT_EQ(rep.mismatches, 0u) << rep.text();
  EXPECT_TRUE(rep.stale.empty()) << rep.text();
  EXPECT_GE(rep.instances, 20000u);
  std::cout << rep.forms_compared << " forms, " << rep.instances << " instances\n";
  // Known gap: the interpreter does not lower the packed fp8 conversions yet (the ALU has
  // them). Any other family the engine cannot run fails here; these two fail EmuGolden.
  for (const auto& e : rep.engine_errors) {
    EXPECT_TRUE(e.starts_with("cvt.pack:") || e.starts_with("cvt.unpack:")) << e;
  }
}

}  // namespace
}  // namespace ptxforge::emu
