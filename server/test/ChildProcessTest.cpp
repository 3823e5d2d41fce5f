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

} // namespace
} // namespace kiln
