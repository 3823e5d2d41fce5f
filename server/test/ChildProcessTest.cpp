//===- ChildProcessTest.cpp - runChildProcess -----------------------------===//
//
// This file tests running a program to completion: its exit status and
// output, death by a signal, the time limit, and a program that is missing.
//
//===----------------------------------------------------------------------===//
#include "kiln/common/ChildProcess.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include <unistd.h>

namespace kiln {
namespace {

std::filesystem::path logFile() {
  return std::filesystem::temp_directory_path() /
         ("kiln-child-" + std::to_string(::getpid()) + ".log");
}

std::string readLog() {
  std::ifstream in(logFile());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ChildProcessTest, ReportsTheExitStatusAndCapturesBothStreams) {
  auto exit = runChildProcess(
      {"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}, logFile());
  ASSERT_TRUE(exit.ok()) << exit.status();
  EXPECT_TRUE(exit->exited);
  EXPECT_EQ(exit->code, 3);
  EXPECT_FALSE(exit->succeeded());
  EXPECT_EQ(exit->describe(), "exited with status 3");
  EXPECT_EQ(readLog(), "out\nerr\n");
}

TEST(ChildProcessTest, ReportsDeathBySignal) {
  auto exit = runChildProcess({"/bin/sh", "-c", "kill -SEGV $$"}, logFile());
  ASSERT_TRUE(exit.ok()) << exit.status();
  EXPECT_FALSE(exit->exited);
  EXPECT_EQ(exit->signal, SIGSEGV);
  EXPECT_NE(exit->describe().find("signal 11"), std::string::npos);
}

TEST(ChildProcessTest, KillsAChildPastItsTimeLimit) {
  auto started = std::chrono::steady_clock::now();
  auto exit = runChildProcess({"/bin/sleep", "30"}, logFile(),
                              std::chrono::milliseconds(200));
  EXPECT_EQ(exit.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
}

TEST(ChildProcessTest, NamesAProgramThatCannotStart) {
  auto exit = runChildProcess({"/no/such/program"}, logFile());
  EXPECT_EQ(exit.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(exit.status().message().find("/no/such/program"), std::string::npos);
  EXPECT_EQ(runChildProcess({}, logFile()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ChildProcessTest, AppliesLimitsEnvironmentAndDirectory) {
  ChildOptions options;
  options.limits.cpuSeconds = 17;
  options.limits.addressSpaceBytes = int64_t{3} << 30;
  options.environment = std::vector<std::string>{"ONLY=this"};
  options.workingDirectory = "/tmp";
  ::setenv("KILN_CHILD_SECRET", "hunter2", 1);
  auto exit = runChildProcess(
      {"/bin/sh", "-c", "ulimit -t; ulimit -v; pwd; env"}, logFile(), options);
  ::unsetenv("KILN_CHILD_SECRET");
  ASSERT_TRUE(exit.ok()) << exit.status();
  std::string log = readLog();
  // ulimit -v is in KiB.
  EXPECT_EQ(log.substr(0, log.find("\n/tmp")), "17\n3145728") << log;
  EXPECT_NE(log.find("ONLY=this"), std::string::npos) << log;
  EXPECT_EQ(log.find("hunter2"), std::string::npos) << log;
}

TEST(ChildProcessTest, ACpuLimitEndsARunaway) {
  ChildOptions options;
  options.limits.cpuSeconds = 1;
  options.timeout = std::chrono::seconds(30);
  auto exit = runChildProcess({"/bin/sh", "-c", "while :; do :; done"},
                              logFile(), options);
  ASSERT_TRUE(exit.ok()) << exit.status();
  EXPECT_FALSE(exit->exited);
  EXPECT_EQ(exit->signal, SIGXCPU);
  EXPECT_GE(exit->cpuSeconds, 0.9);
}

TEST(ChildProcessTest, NamesABadWorkingDirectory) {
  ChildOptions options;
  options.workingDirectory = "/no/such/dir";
  auto exit = runChildProcess({"/bin/true"}, logFile(), options);
  EXPECT_EQ(exit.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(exit.status().message().find("working directory"), std::string::npos)
      << exit.status();
}

} // namespace
} // namespace kiln
