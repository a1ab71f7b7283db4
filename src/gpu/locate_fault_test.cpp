// Naming the buffer behind an out-of-bounds fault, against scripted workers: one buffer's
// open windows stop the fault (named), none or two do (not named), an inconclusive rerun or
// a worker without guard pages (not named), and the message the verdict carries.
#include "gpu/locate_fault.h"

#include <gtest/gtest.h>

#include "testing/fake_worker.h"
#include "gpu/protocol.h"

namespace ptxforge::gpu {
namespace {

Failure oob_failure() {
  Failure f{FailureKind::fault, "out-of-bounds access: running the candidate: CUDA_ERROR_ILLEGAL_ADDRESS (700): an illegal "
                                "memory access was encountered",
            "size set 'small', seed 1"};
  f.out_of_bounds = true;
  f.size_set = "small";
  f.seed = 1;
  f.guarded = {"a", "b", "c"};
  return f;
}

// A worker whose rerun stops faulting when any buffer in `culprits` is opened... only if it
// is the sole culprit: with two overrun buffers, opening one still faults on the other.
std::function<Outcome(const Job&)> worker_where(std::vector<std::string> culprits, GuardMode mode = GuardMode::vmm) {
  return [culprits, mode](const Job& job) {
    Outcome o;
    o.guard = mode;
    bool all_open = true;
    for (auto& c : culprits) all_open = all_open && job.open_buffer == c;
    if (culprits.empty() || !all_open) {
      o.failure = oob_failure();
      o.fatal = true;
      return o;
    }
    VerifyReport v;
    CaseResult c;
    c.size_set = job.locate_set;
    c.seed = job.locate_seed;
    c.problems = {"write past the end of '" + job.open_buffer + "': 4 guard bytes changed, the first at byte offset 1052672 (element 263168)"};
    v.cases.push_back(c);
    o.verify = v;
    return o;
  };
}

TEST(LocateFault, NamesTheOneBufferWhoseOpenWindowsStopTheFault) {
  FakeWorker w;
  w.answer = worker_where({"c"});
  Job verify;
  verify.kind = JobKind::verify;
  verify.task_dir = "tasks/level1/vector_add";
  auto at = locate_out_of_bounds(w, verify, oob_failure(), std::chrono::seconds(5));
  ASSERT_TRUE(at.has_value());
  EXPECT_EQ(at->buffer, "c");
  EXPECT_EQ(at->runs, 3);
  ASSERT_EQ(w.jobs.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(w.jobs[i].kind, JobKind::locate);
    EXPECT_EQ(w.jobs[i].locate_set, "small");
    EXPECT_EQ(w.jobs[i].locate_seed, 1u);
    EXPECT_EQ(w.jobs[i].task_dir, verify.task_dir);
  }
  EXPECT_EQ(w.jobs[0].open_buffer, "a");
  EXPECT_EQ(w.jobs[2].open_buffer, "c");
  Failure f = oob_failure();
  name_fault_buffer(f, *at);
  EXPECT_EQ(f.message.rfind("out-of-bounds access near buffer 'c' (write past the end of 'c'", 0), 0u) << f.message;
  EXPECT_NE(f.message.find("CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos);
  EXPECT_EQ(f.message.find("out-of-bounds access: "), std::string::npos) << "said once";
}

TEST(LocateFault, NamesNoneWhenItCannotBeSure) {
  Job verify;
  // A wild address: opening any one buffer still faults.
  FakeWorker wild;
  wild.answer = worker_where({});
  EXPECT_FALSE(locate_out_of_bounds(wild, verify, oob_failure(), std::chrono::seconds(5)).has_value());
  // Two buffers overrun: no single open buffer stops it.
  FakeWorker two;
  two.answer = worker_where({"a", "c"});
  EXPECT_FALSE(locate_out_of_bounds(two, verify, oob_failure(), std::chrono::seconds(5)).has_value());
  // Nondeterminism: two reruns pass.
  FakeWorker flaky;
  flaky.answer = [](const Job& job) {
    Outcome o;
    o.guard = GuardMode::vmm;
    if (job.open_buffer == "b") {
      o.failure = oob_failure();
      return o;
    }
    o.verify = VerifyReport{{CaseResult{}}, 0, {}};
    return o;
  };
  EXPECT_FALSE(locate_out_of_bounds(flaky, verify, oob_failure(), std::chrono::seconds(5)).has_value());
  // A rerun without guard pages proves nothing.
  FakeWorker plain;
  plain.answer = worker_where({"c"}, GuardMode::canary);
  EXPECT_FALSE(locate_out_of_bounds(plain, verify, oob_failure(), std::chrono::seconds(5)).has_value());
  EXPECT_EQ(plain.jobs.size(), 1u) << "it stops at the first run it cannot trust";
  // A rerun that hangs.
  FakeWorker hang;
  hang.answer = [](const Job&) {
    Outcome o;
    o.failure = Failure{FailureKind::timeout, "no answer within 5.0 s", ""};
    o.fatal = true;
    return o;
  };
  EXPECT_FALSE(locate_out_of_bounds(hang, verify, oob_failure(), std::chrono::seconds(5)).has_value());
  // Not an out-of-bounds fault, or no guard pages in the case: nothing is sent.
  FakeWorker idle;
  idle.answer = worker_where({"c"});
  Failure f = oob_failure();
  f.guarded.clear();
  EXPECT_FALSE(locate_out_of_bounds(idle, verify, f, std::chrono::seconds(5)).has_value());
  f = oob_failure();
  f.out_of_bounds = false;
  EXPECT_FALSE(locate_out_of_bounds(idle, verify, f, std::chrono::seconds(5)).has_value());
  EXPECT_TRUE(idle.jobs.empty());
}

TEST(LocateFault, TheJobAndFailureTravel) {
  Job job;
  job.kind = JobKind::locate;
  job.locate_set = "odd";
  job.locate_seed = 2;
  job.open_buffer = "c";
  job.placement = Placement::exact_unwritten;
  job.size_sets = {"small"};
  auto back = decode_job(encode_job(job));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->kind, JobKind::locate);
  EXPECT_EQ(back->locate_set, "odd");
  EXPECT_EQ(back->locate_seed, 2u);
  EXPECT_EQ(back->open_buffer, "c");
  EXPECT_EQ(back->placement, Placement::exact_unwritten);
  EXPECT_EQ(back->size_sets, std::vector<std::string>{"small"});
  Outcome o;
  o.failure = oob_failure();
  o.guard = GuardMode::canary;
  o.guard_note = "guard pages unavailable (the device does not support virtual memory management)";
  auto ob = decode_outcome(encode_outcome(o));
  ASSERT_TRUE(ob.ok()) << ob.error().message;
  EXPECT_TRUE(ob->failure->out_of_bounds);
  EXPECT_EQ(ob->failure->guarded, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(ob->failure->size_set, "small");
  EXPECT_EQ(ob->guard, GuardMode::canary);
  EXPECT_EQ(ob->guard_note, o.guard_note);
  EXPECT_FALSE(decode_job(R"({"op":"verify","placement":"loose"})").ok());
  EXPECT_FALSE(decode_outcome(R"({"guard":"bricks","fatal":false,"verify":{"cases":[],"seconds":0}})").ok());
}

}  // namespace
}  // namespace ptxforge::gpu
