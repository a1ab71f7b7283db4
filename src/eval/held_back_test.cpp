// Model-facing texts about held-back sizes: a clause reaches the model only without numbers,
// quoted task parameter names excepted; everything else becomes its class.
#include "eval/held_back.h"

#include <gtest/gtest.h>

namespace ptxforge::eval {
namespace {

task::Task task_with(std::vector<std::string> names) {
  task::Task t;
  for (auto& n : names) {
    task::Param p;
    p.name = n;
    t.params.push_back(p);
  }
  return t;
}

TEST(HeldBack, AClauseWithANumberIsDropped) {
  task::Task t = task_with({"c", "x2"});
  EXPECT_EQ(number_free_clause("write past the end of 'c': 12 guard bytes changed", t), "write past the end of 'c'");
  EXPECT_EQ(number_free_clause("input 'x2' was modified (first changed element: 7)", t), "input 'x2' was modified");
  EXPECT_EQ(number_free_clause("only the first 512 of 999 elements are correct: ...", t), "");
  EXPECT_EQ(number_free_clause("no answer within 30.0 s", t), "");
  // A quoted name that is not the task's is text like any other.
  EXPECT_EQ(number_free_clause("buffer 'b777' overflowed", t), "");
  EXPECT_EQ(number_free_clause("value 0x1F", t), "");
  EXPECT_EQ(number_free_clause("CUDA_ERROR_ILLEGAL_ADDRESS (700)", t), "CUDA_ERROR_ILLEGAL_ADDRESS");
}

TEST(HeldBack, HintsBecomeTheirClass) {
  task::Task t = task_with({"y"});
  task::Comparison c;
  c.count = 1000;
  c.mismatches = 1000;
  c.never_written = 1000;
  c.hint = "the output was never written (every element still holds the poison pattern)";
  EXPECT_EQ(hint_class(c, t), "the output was never written");
  c.never_written = 24;
  c.hint = "24 elements were never written (they still hold the poison pattern)";
  EXPECT_EQ(hint_class(c, t), "part of the output was never written");
  c.never_written = 0;
  c.nan_count = 3;
  c.hint = "3 NaN values where the reference is finite";
  EXPECT_EQ(hint_class(c, t), "NaN or infinite values where the reference is finite");
  c.nan_count = 0;
  c.hint = "only the first 768 of 1000 elements are correct: does the grid cover the whole output?";
  EXPECT_EQ(hint_class(c, t).find("only a leading part of the output is correct"), 0u);
  c.hint = "every element is off by the same constant (1.5)";
  EXPECT_EQ(hint_class(c, t), "every element is off by the same constant");
  c.hint = "the output is all zeros";
  EXPECT_EQ(hint_class(c, t), "the output is all zeros");
  c.hint = "";
  EXPECT_EQ(hint_class(c, t), "");
}

TEST(HeldBack, ACaseKeepsItsOutputsAndProblemsInWords) {
  task::Task t = task_with({"a", "c"});
  gpu::CaseResult c;
  c.shown = false;
  c.problems = {"write before the start of 'c': 4 guard bytes changed, the first 8 bytes before it",
                "13 things happened"};
  task::Comparison o;
  o.output = "c";
  o.count = 4242;
  o.mismatches = 17;
  o.pass = false;
  o.hint = "every element is off by the same factor (2)";
  c.outputs.push_back(o);
  auto lines = held_back_case_lines(c, t);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "write before the start of 'c'");
  EXPECT_EQ(lines[1], "a buffer's guard region was written or an input was modified");
  EXPECT_EQ(lines[2], "output 'c' is wrong: every element is off by the same factor");
}

TEST(HeldBack, FailuresAreTheirKindAndClause) {
  task::Task t = task_with({"c"});
  gpu::Failure f{gpu::FailureKind::fault, "out-of-bounds access near buffer 'c' (write past the end of 'c': 4 bytes): x", "", true};
  EXPECT_EQ(held_back_failure_text(f, t), "fault: out-of-bounds access near buffer 'c'");
  f.message = "illegal address at offset 4096";
  EXPECT_EQ(held_back_failure_text(f, t), "fault: the kernel faulted (an illegal or misaligned address, or a trap)");
  f.kind = gpu::FailureKind::timeout;
  f.message = "no answer within 30.0 s: the kernel hangs";
  EXPECT_EQ(held_back_failure_text(f, t), "timeout: the kernel did not finish within the time limit");
}

TEST(HeldBack, SanitizerReportsLoseTheirCountsAndNumberedLines) {
  task::Task t = task_with({"c"});
  std::string s = held_back_sanitizer_text(
      "racecheck: 31 errors: Error: Race reported between Write access at k+0x1a0; and Read access at k+0x1c0 [31 hazards]", t);
  EXPECT_EQ(s.find("racecheck: errors on a held-back size (not shown to you)"), 0u) << s;
  EXPECT_EQ(s.find("31"), std::string::npos) << s;
  EXPECT_EQ(s.find("0x"), std::string::npos) << s;
  EXPECT_EQ(held_back_sanitizer_text("memcheck: 2 errors: Invalid __global__ write of size 4 bytes", t),
            "memcheck: errors on a held-back size (not shown to you)");
}

}  // namespace
}  // namespace ptxforge::eval
