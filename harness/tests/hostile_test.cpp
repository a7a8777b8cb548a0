// The harness under hostile use: whatever its output, a report or a program does,
// it never dies of a signal and never leaves a process behind.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "test_util.h"

namespace mh {
namespace {

// `harness --list | head -c 1`: the reader goes away after one byte, with more
// than a (shrunken, 4 KiB) pipe's worth still to write. The harness ends with
// its usual status and says nothing: no SIGPIPE death, no error message.
TEST(Hostile, AClosedStandardOutputEndsQuietly) {
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  ASSERT_GE(fcntl(out[1], F_SETPIPE_SZ, 4096), 4096);
  const std::string err_path = test::scratch("list.err");
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out[1], 1);
    dup2(err, 2);
    close(out[0]);
    execl(HARNESS_BIN, HARNESS_BIN, "--list", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  char byte;
  ASSERT_EQ(read(out[0], &byte, 1), 1);
  close(out[0]);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "ended by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(test::slurp(err_path), "");
}

}  // namespace
}  // namespace mh
