// The protocol's fields for the CPU engine (docs/emu.md section 1): the job's PTX paths and
// budget, the engine's failure kinds and findings, the wrong elements of a case, the engine
// that verified and its per-instruction counts. Each travels both ways unchanged, and JSON
// from before these fields still reads, with the defaults.
#include <gtest/gtest.h>

#include "gpu/protocol.h"

namespace ptxforge::gpu {
namespace {

TEST(EmuProtocol, TheJobCarriesThePtxPathsAndTheBudget) {
  Job j;
  j.task_dir = "tasks/level1/saxpy";
  j.candidate_ptx = "/tmp/c/k.ptx";
  j.reference_ptx = "/tmp/c/reference.ptx";
  j.emu_budget = (uint64_t{1} << 40) + 3;
  auto back = decode_job(encode_job(j));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->candidate_ptx, "/tmp/c/k.ptx");
  EXPECT_EQ(back->reference_ptx, "/tmp/c/reference.ptx");
  EXPECT_EQ(back->emu_budget, (uint64_t{1} << 40) + 3);

  j.emu_budget = 0xfedcba9876543211ull;  // all 64 bits
  back = decode_job(encode_job(j));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->emu_budget, 0xfedcba9876543211ull);

  // A job from before the engine: no paths, the default budget of 2^33 lane-instructions.
  auto old = decode_job(R"({"op":"verify","task_dir":"t"})");
  ASSERT_TRUE(old.ok()) << old.error().message;
  EXPECT_EQ(old->candidate_ptx, "");
  EXPECT_EQ(old->reference_ptx, "");
  EXPECT_EQ(old->emu_budget, uint64_t{1} << 33);
  EXPECT_EQ(encode_job(*old).find("emu_budget"), std::string::npos) << "the default is not written";
  EXPECT_FALSE(decode_job(R"({"op":"verify","emu_budget":"0"})").ok()) << "a zero budget runs nothing: refused";
  auto junk = decode_job(R"({"op":"verify","emu_budget":"lots"})");
  ASSERT_FALSE(junk.ok());
  EXPECT_NE(junk.error().message.find("emu_budget"), std::string::npos) << junk.error().message;
}

TEST(EmuProtocol, TheEngineFailureKindsAreSpelledAsTheirEnumerators) {
  const std::pair<FailureKind, const char*> kinds[] = {
      {FailureKind::unsupported, "unsupported"}, {FailureKind::race, "race"},
      {FailureKind::uninitialized, "uninitialized"}, {FailureKind::misaligned, "misaligned"},
      {FailureKind::barrier, "barrier"}, {FailureKind::warp_sync, "warp_sync"}, {FailureKind::budget, "budget"}};
  for (auto& [k, name] : kinds) {
    EXPECT_EQ(to_string(k), name);
    EXPECT_EQ(failure_kind_from_string(name), k);
    Outcome o;
    o.failure = Failure{k, "m", "w"};
    auto back = decode_outcome(encode_outcome(o));
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(back->failure->kind, k);
  }
}

TEST(EmuProtocol, AFindingTravelsWithItsRaceNote) {
  Outcome o;
  Failure f{FailureKind::race, "k.ptx:31:5: write races with a read", "size set 'small', seed 1", true};
  EmuFinding e;
  e.check = "emu-race";
  e.line = 31;
  e.col = 5;
  e.thread = EmuThread{{3, 0, 1}, {5, 2, 0}};
  e.buffer = "c";
  e.offset = 4096;
  e.other = EmuFinding::Other{37, 9, EmuThread{{3, 0, 1}, {6, 0, 0}}, true};
  f.finding = e;
  o.failure = f;
  auto back = decode_outcome(encode_outcome(o));
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_TRUE(back->failure->finding.has_value());
  EXPECT_EQ(*back->failure->finding, e);
  EXPECT_TRUE(back->failure->held_back);

  // A launch-limit finding has no thread, buffer or other access: they stay unset.
  EmuFinding bare;
  bare.check = "emu-limit";
  o.failure->finding = bare;
  back = decode_outcome(encode_outcome(o));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back->failure->finding, bare);
  EXPECT_FALSE(back->failure->finding->thread.has_value());
  EXPECT_FALSE(back->failure->finding->other.has_value());

  o.failure->finding.reset();
  EXPECT_EQ(encode_outcome(o).find("finding"), std::string::npos) << "a GPU failure keeps its shape";
  EXPECT_FALSE(decode_outcome(R"({"failure":{"kind":"race","message":"x","finding":{"check":"emu-race","thread":{"cta":[1,2],"thread":[0,0,0]}}}})").ok())
      << "a thread index of two numbers is unreadable";
}

TEST(EmuProtocol, WrongElementsEngineAndCountsRoundTrip) {
  Outcome o;
  VerifyReport v;
  v.engine = Engine::cpu;
  CaseResult c;
  c.size_set = "small";
  c.seed = 7;
  WrongElement written;
  written.output = "c";
  written.index = 1041;
  written.multi_index = {2, 17};
  written.expected = "3.5";
  written.actual = "0.25";
  written.writer = WrongElement::Writer{EmuThread{{8, 0, 0}, {17, 0, 0}}, 44};
  WrongElement never;
  never.output = "c";
  never.index = 4098;
  never.expected = "-1";
  never.actual = "nan";
  never.never_written = true;
  c.wrong = {written, never};
  v.cases.push_back(c);
  v.counts.push_back({44, 5, "st.global.f32", 12, 384});
  v.counts.push_back({12, 3, "ld.param.u64", 12, 384});
  o.verify = v;
  auto back = decode_outcome(encode_outcome(o));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->verify->engine, Engine::cpu);
  ASSERT_EQ(back->verify->cases.size(), 1u);
  EXPECT_EQ(back->verify->cases[0].wrong, c.wrong);
  EXPECT_EQ(back->verify->counts, v.counts);

  // A report from before the engine came from a GPU and has no counts or wrong elements.
  auto old = decode_outcome(R"({"verify":{"cases":[{"size_set":"s","shown":true,"seed":"1","pass":true,"outputs":[],"problems":[]}],"seconds":1}})");
  ASSERT_TRUE(old.ok()) << old.error().message;
  EXPECT_EQ(old->verify->engine, Engine::gpu);
  EXPECT_TRUE(old->verify->counts.empty());
  EXPECT_TRUE(old->verify->cases[0].wrong.empty());
  EXPECT_FALSE(decode_outcome(R"({"verify":{"cases":[],"seconds":1,"engine":"fpga"}})").ok()) << "an unknown engine is refused";
  EXPECT_EQ(to_string(Engine::gpu), "gpu");
  EXPECT_EQ(engine_from_string("cpu"), Engine::cpu);
}

}  // namespace
}  // namespace ptxforge::gpu
