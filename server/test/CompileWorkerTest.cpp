//===- CompileWorkerTest.cpp - how a compile worker's fate becomes a status ===//
//
// This file implements tests of compileInWorkerProcess against stand-in
// worker programs (shell scripts) that crash, run out of memory, exceed
// their CPU time or hang, and one that checks the environment it gets. The
// real kiln-compile-worker is exercised end to end by
// tests/e2e/test_e2e_compile_isolation.py.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/compile/CompileWorker.h"

#include "TestUtil.h"
#include "kiln/worker/compile_job.pb.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include <sys/stat.h>

namespace kiln::server {
namespace {

class CompileWorkerTest : public ::testing::Test {
protected:
  /// A stand-in worker running `body` under /bin/sh ($1 job, $2 result).
  CompileWorkerSettings worker(const std::string &body) {
    std::filesystem::path script = temp.path() / "worker.sh";
    std::ofstream(script) << "#!/bin/sh\n" << body << "\n";
    ::chmod(script.c_str(), 0755);
    CompileWorkerSettings settings;
    settings.binary = script;
    settings.scratchDir = temp.path() / "jobs";
    settings.limits.cpuSeconds = 7;
    settings.limits.memoryBytes = int64_t{1} << 30;
    settings.limits.wallTimeout = std::chrono::seconds(30);
    EXPECT_TRUE(prepareCompileWorkers(settings).ok());
    return settings;
  }

  absl::Status compile(const CompileWorkerSettings &settings) {
    v1::Graph graph;
    graph.set_name("g");
    compiler::CompileOptions options;
    options.target = "cpu";
    return compileInWorkerProcess(settings)(graph, options).status();
  }

  void expectScratchEmpty(const CompileWorkerSettings &settings) {
    EXPECT_TRUE(std::filesystem::is_empty(settings.scratchDir))
        << "a job's folder outlived it";
  }

  testing::TempDir temp;
};

TEST_F(CompileWorkerTest, ACrashIsInternalNamingTheStage) {
  CompileWorkerSettings settings =
      worker("echo 'kiln-compile-worker: stage import' >&2\n"
             "echo 'kiln-compile-worker: stage codegen' >&2\n"
             "kill -SEGV $$");
  absl::Status status = compile(settings);
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal) << status;
  EXPECT_NE(status.message().find("crashed compiling graph 'g' for cpu, in "
                                  "stage 'codegen'"),
            std::string::npos)
      << status;
  EXPECT_NE(status.message().find("Segmentation fault"), std::string::npos);
  expectScratchEmpty(settings);
}

TEST_F(CompileWorkerTest, ADeathCompilingSegmentsIsMarkedSo) {
  // Only a worker that died in a segment's stage: placement then asks again
  // without segments, one per worker.
  absl::Status inGraph = compile(worker(
      "echo 'kiln-compile-worker: stage codegen' >&2\nkill -SEGV $$"));
  EXPECT_FALSE(diedCompilingSegments(inGraph)) << inGraph;
  absl::Status inSegment = compile(worker(
      "echo 'kiln-compile-worker: stage check-node-support' >&2\n"
      "echo 'kiln-compile-worker: stage segment 2 codegen' >&2\nkill -SEGV $$"));
  EXPECT_EQ(inSegment.code(), absl::StatusCode::kInternal) << inSegment;
  EXPECT_NE(inSegment.message().find("in stage 'segment 2 codegen'"), std::string::npos)
      << inSegment;
  EXPECT_TRUE(diedCompilingSegments(inSegment));
}

TEST_F(CompileWorkerTest, OutOfMemoryIsResourceExhaustedNamingTheFlag) {
  absl::Status status = compile(worker("exit 3"));
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_NE(status.message().find("1073741824 bytes (--compile-memory-bytes)"),
            std::string::npos)
      << status;
}

TEST_F(CompileWorkerTest, CpuTimeIsDeadlineExceededNamingTheFlag) {
  absl::Status status = compile(worker("kill -XCPU $$"));
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_NE(status.message().find("7 s (--compile-cpu-seconds)"),
            std::string::npos)
      << status;
}

TEST_F(CompileWorkerTest, ASigkillWithCpuTimeToSpareIsNoCpuLimit) {
  // The kernel's OOM killer sends SIGKILL too; only a worker that used up its
  // CPU time was stopped by the limit.
  absl::Status status = compile(worker("kill -KILL $$"));
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal) << status;
  EXPECT_NE(status.message().find("signal 9"), std::string::npos) << status;
}

TEST_F(CompileWorkerTest, AHangIsKilledAtTheWallClockLimit) {
  CompileWorkerSettings settings = worker("exec sleep 60");
  settings.limits.wallTimeout = std::chrono::seconds(1);
  auto start = std::chrono::steady_clock::now();
  absl::Status status = compile(settings);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_NE(status.message().find("--compile-timeout-s"), std::string::npos);
  expectScratchEmpty(settings);
}

TEST_F(CompileWorkerTest, ACompileErrorPassesThroughAndLimitsAreApplied) {
  // The stand-in writes a CompileJobResult by hand: field 1 (code) = 3
  // (INVALID_ARGUMENT), field 2 (message) = "bad". It also records its
  // arguments and environment, which must hold no secret of kilnd's.
  CompileWorkerSettings settings = worker(
      "{ ulimit -t; ulimit -v; pwd; } > " + (temp.path() / "args").string() +
      "\n" +
      "env > " + (temp.path() / "env").string() + "\n" +
      "printf '\\010\\003\\022\\003bad' > \"$2\"");
  ::setenv("KILN_TEST_SECRET", "hunter2", 1);
  absl::Status status = compile(settings);
  ::unsetenv("KILN_TEST_SECRET");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_EQ(status.message(), "bad");
  std::ifstream argsFile(temp.path() / "args");
  std::string limits((std::istreambuf_iterator<char>(argsFile)), {}), env;
  // CPU seconds, then KiB of address space, then the job's own folder.
  EXPECT_EQ(limits.substr(0, limits.find('\n', limits.find('\n') + 1)),
            "7\n1048576")
      << limits;
  EXPECT_NE(limits.find(settings.scratchDir.string() + "/job-"),
            std::string::npos)
      << limits;
  std::ifstream envFile(temp.path() / "env");
  env.assign(std::istreambuf_iterator<char>(envFile), {});
  EXPECT_EQ(env.find("hunter2"), std::string::npos) << env;
  EXPECT_NE(env.find("TMPDIR=" + settings.scratchDir.string()), std::string::npos)
      << env;
  expectScratchEmpty(settings);
}

TEST_F(CompileWorkerTest, APlacementRequestTravelsAndItsAnswerIsCarried) {
  // The stand-in keeps the job it got and answers with a prepared result:
  // UNIMPLEMENTED with node support and one compiled segment.
  worker::CompileJobResult prepared;
  prepared.set_code(static_cast<int>(absl::StatusCode::kUnimplemented));
  prepared.set_message("node 1: unsupported op");
  prepared.add_node_support()->set_supported(true);
  prepared.add_node_support()->set_reason("unsupported op");
  worker::CompiledSegment *segment = prepared.add_segments();
  segment->add_nodes(0);
  segment->set_compile_us(42);
  segment->mutable_result()->set_artifact("ELF");
  std::filesystem::path answer = temp.path() / "answer.pb";
  std::ofstream(answer, std::ios::binary) << prepared.SerializeAsString();
  CompileWorkerSettings settings = worker(
      "cp \"$1\" " + (temp.path() / "job.pb").string() + " && cp " +
      answer.string() + " \"$2\"");
  v1::Graph graph;
  graph.set_name("g");
  compiler::CompileOptions options;
  options.placement.emplace();
  options.placement->maxFallbackFraction = 0.5;
  absl::Status status = compileInWorkerProcess(settings)(graph, options).status();
  EXPECT_TRUE(absl::IsUnimplemented(status)) << status;
  std::optional<worker::CompileJobResult> carried = carriedPlacement(status);
  ASSERT_TRUE(carried.has_value());
  ASSERT_EQ(carried->node_support_size(), 2);
  ASSERT_EQ(carried->segments_size(), 1);
  EXPECT_EQ(carried->segments(0).result().artifact(), "ELF");
  EXPECT_EQ(carried->segments(0).compile_us(), 42);

  worker::CompileJob job;
  std::ifstream jobFile(temp.path() / "job.pb", std::ios::binary);
  ASSERT_TRUE(job.ParseFromIstream(&jobFile));
  EXPECT_EQ(job.placement().fallback(), v1::FALLBACK_POLICY_CPU);
  EXPECT_EQ(job.placement().max_fallback_fraction(), 0.5);
  // Half the tighter limit: 7 CPU seconds against 30 s of wall clock.
  EXPECT_EQ(job.segment_budget_ms(), 3500u);

  // Without a request the job asks for no segments.
  options.placement.reset();
  (void)compileInWorkerProcess(settings)(graph, options);
  std::ifstream again(temp.path() / "job.pb", std::ios::binary);
  ASSERT_TRUE(job.ParseFromIstream(&again));
  EXPECT_FALSE(job.has_placement());
  EXPECT_EQ(job.segment_budget_ms(), 0u);
}

TEST_F(CompileWorkerTest, AMissingWorkerStopsKilndAtStart) {
  CompileWorkerSettings settings;
  settings.binary = temp.path() / "no-such-worker";
  settings.scratchDir = temp.path() / "jobs";
  absl::Status status = prepareCompileWorkers(settings);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("--compile-worker"), std::string::npos);
}

TEST_F(CompileWorkerTest, LastStage) {
  EXPECT_EQ(lastWorkerStage(""), "");
  EXPECT_EQ(lastWorkerStage("kiln-compile-worker: stage import\nnoise\n"
                            "kiln-compile-worker: stage emit\n"),
            "emit");
}

} // namespace
} // namespace kiln::server
