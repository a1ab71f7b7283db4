#include "util/orphan_watch.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace ptxforge {
namespace {

// Waits up to `limit` for `pid` (a child of this process) to end; its wait status, or -1.
int wait_for(pid_t pid, std::chrono::milliseconds limit) {
  auto end = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (std::chrono::steady_clock::now() < end) {
    pid_t got = waitpid(pid, &status, WNOHANG);
    if (got == pid) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return -1;
}

// parent -> middle -> grandchild: the grandchild watches the middle process, which exits at
// once. This test process is a subreaper, so the grandchild is handed to it and can be reaped.
TEST(OrphanWatch, AGrandchildEndsWhenItsParentDies) {
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  int watching[2], told[2];  // grandchild -> middle: the watch runs; middle -> here: its pid
  ASSERT_EQ(pipe(watching), 0);
  ASSERT_EQ(pipe(told), 0);
  pid_t middle = fork();
  ASSERT_GE(middle, 0);
  if (middle == 0) {
    pid_t grandchild = fork();
    if (grandchild == 0) {
      exit_when_orphaned(std::chrono::milliseconds(20));
      (void)!write(watching[1], "w", 1);
      for (;;) pause();  // a worker stuck in a kernel: only the watch can end it
    }
    char c;
    (void)!read(watching[0], &c, 1);
    (void)!write(told[1], &grandchild, sizeof grandchild);
    _exit(0);
  }
  close(told[1]);
  pid_t grandchild = 0;
  ASSERT_EQ(read(told[0], &grandchild, sizeof grandchild), static_cast<ssize_t>(sizeof grandchild));
  for (int fd : {watching[0], watching[1], told[0]}) close(fd);
  int middle_status = wait_for(middle, std::chrono::seconds(5));
  ASSERT_NE(middle_status, -1);
  int status = wait_for(grandchild, std::chrono::seconds(5));
  if (status == -1) kill(grandchild, SIGKILL), waitpid(grandchild, nullptr, 0);
  ASSERT_NE(status, -1) << "the orphan did not end within 5 s";
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), kOrphanExit);
  prctl(PR_SET_CHILD_SUBREAPER, 0);
}

// A child whose parent lives on keeps running: the watch fires on the parent's death alone.
TEST(OrphanWatch, AChildWithALiveParentRunsOn) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    exit_when_orphaned(std::chrono::milliseconds(10));
    for (;;) pause();
  }
  EXPECT_EQ(wait_for(child, std::chrono::milliseconds(300)), -1) << "the watch ended a child whose parent lives";
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status));
}

}  // namespace
}  // namespace ptxforge
