// The session's file names are a format: sessions written before must still resume, so the
// names are pinned here.
#include <gtest/gtest.h>

#include "agent/session_layout.h"

namespace ptxforge::agent {
namespace {

TEST(SessionLayout, NamesStayWhatOlderSessionsWrote) {
  EXPECT_EQ(layout::session_options("s"), "s/session.json");
  EXPECT_EQ(layout::trajectory("s", 1, 1), "s");
  EXPECT_EQ(layout::trajectory("s", 2, 3), "s/sample-2");
  std::string r = layout::round(layout::trajectory("s", 2, 3), 7);
  EXPECT_EQ(r, "s/sample-2/round-07");
  EXPECT_EQ(layout::round("s", 12), "s/round-12");
  EXPECT_EQ(layout::messages(r), r + "/messages.json");
  EXPECT_EQ(layout::prompt(r), r + "/prompt.md");
  EXPECT_EQ(layout::reply(r), r + "/reply.md");
  EXPECT_EQ(layout::reply_usage(r), r + "/reply.json");
  EXPECT_EQ(layout::candidate(r, false), r + "/candidate.ptx");
  EXPECT_EQ(layout::candidate(r, true), r + "/candidate.cu");
  EXPECT_EQ(layout::result(r), r + "/result.json");
  EXPECT_EQ(layout::summary(r), r + "/round.json");
  EXPECT_EQ(layout::feedback(r), r + "/feedback.md");
  EXPECT_EQ(layout::error(r), r + "/error.txt");
  EXPECT_EQ(layout::best_ptx("s"), "s/best.ptx");
  EXPECT_EQ(layout::best_cu("s"), "s/best.cu");
  EXPECT_EQ(layout::best_cubin("s"), "s/best.cubin");
  EXPECT_EQ(layout::report("s"), "s/report.json");
  EXPECT_EQ(layout::transcript("s"), "s/transcript.md");
}

}  // namespace
}  // namespace ptxforge::agent
