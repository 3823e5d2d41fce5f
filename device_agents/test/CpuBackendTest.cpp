//===- CpuBackendTest.cpp - loading and running real shared objects -------===//
//
// This file tests CpuBackend against shared objects compiled at test time
// with the system C compiler.
//
//===----------------------------------------------------------------------===//
#include "TestSupport.h"

#include "kiln/agent/cpu/CpuBackend.h"

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"

#include <fstream>
#include <set>

namespace kiln::agent {
namespace {

using test::TempDir;

class CpuBackendTest : public ::testing::Test {
protected:
  static constexpr int kN = 1000;

  void SetUp() override {
    auto path = test::compileSharedObject(dir.path(), "axpy",
                                          test::axpyKernelSource(kN));
    ASSERT_TRUE(path.ok()) << path.status();
    artifact = *path;
    record = test::axpyRecord(kN, test::readFileBytes(artifact));
  }

  TempDir dir;
  std::filesystem::path artifact;
  v1::ExecutableRecord record;
  CpuBackend backend;
};

TEST_F(CpuBackendTest, DescribesTheHostAsOneCpuDevice) {
  auto devices = backend.describeDevices();
  ASSERT_TRUE(devices.ok()) << devices.status();
  ASSERT_EQ(devices->size(), 1u);
  const v1::Device &device = devices->front();
  EXPECT_EQ(device.kind(), "cpu");
  EXPECT_FALSE(device.properties().at("cpu_model").empty());
  EXPECT_GT(std::stoi(device.properties().at("threads")), 0);
  EXPECT_FALSE(device.properties().at("arch").empty());
  // The CPU in LLVM's names: what kilnd compiles for and schedules by.
  EXPECT_EQ(device.properties().at("cpu"), hostCpuModel().name);
  EXPECT_NE(device.properties().at("cpu_features").find("sse2"),
            std::string::npos);
}

TEST_F(CpuBackendTest, RefusesCodeForFeaturesItsCpuLacks) {
  absl::StatusOr<CpuModel> v2 = CpuBackend::advertisedCpu("x86-64-v2");
  ASSERT_TRUE(v2.ok()) << v2.status();
  CpuBackend baseline(*v2);
  EXPECT_EQ(baseline.describeDevices()->front().properties().at("cpu"),
            "x86-64-v2");
  // Code that may use AVX2 and FMA (x86-64-v3) never gets loaded.
  record.mutable_manifest()->set_cpu("x86-64-v3");
  record.mutable_manifest()->set_features("+avx,+avx2,+fma,+sse4.2");
  auto refused = baseline.loadExecutable(record, artifact);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("avx, avx2, fma"),
            std::string::npos)
      << refused.status();
  // Code within its features loads and runs.
  record.mutable_manifest()->set_features("+popcnt,+sse4.2");
  EXPECT_TRUE(baseline.loadExecutable(record, artifact).ok());
}

TEST_F(CpuBackendTest, AdvertisedCpuMustBeOneTheHostRuns) {
  auto unknown = CpuBackend::advertisedCpu("pentium-9000");
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(CpuBackend::advertisedCpu("x86-64").ok());
  EXPECT_EQ(CpuBackend::advertisedCpu("native")->name, hostCpuModel().name);
  // No host has both AMD's (sse4a, clzero) and Intel's (AMX) own features,
  // so on any host at least one of these is refused, naming what it lacks.
  int refused = 0;
  for (const char *name : {"znver4", "graniterapids"}) {
    auto model = CpuBackend::advertisedCpu(name);
    if (model.ok())
      continue;
    ++refused;
    EXPECT_EQ(model.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_NE(model.status().message().find("lacks feature"), std::string::npos)
        << model.status();
  }
  EXPECT_GE(refused, 1);
}

TEST_F(CpuBackendTest, LoadsARealSharedObjectAndComputesAxpy) {
  auto executable = backend.loadExecutable(record, artifact);
  ASSERT_TRUE(executable.ok()) << executable.status();
  std::vector<float> a(kN), x(kN), out(kN, -1.0f);
  for (int i = 0; i < kN; ++i) {
    a[i] = static_cast<float>(i);
    x[i] = 0.5f * static_cast<float>(i) - 3.0f;
  }
  void *parameters[] = {a.data()};
  void *inputs[] = {x.data()};
  void *outputs[] = {out.data()};
  absl::StatusOr<v1::DeviceCounters> counters =
      backend.run(**executable, CallBuffers{parameters, inputs, outputs});
  ASSERT_TRUE(counters.ok()) << counters.status();
  EXPECT_EQ(counters->instructions(), 0u) << "the cpu backend counts nothing";
  for (int i = 0; i < kN; ++i)
    ASSERT_FLOAT_EQ(out[i], a[i] + 2.0f * x[i]) << "at " << i;
}

/// A kernel whose loop runs through the artifact runtime's
/// kiln_rt_parallel_for (the real source, as every x86-64 artifact links
/// it): out[i] = 2 * x[i], and who[i] = the thread that computed it.
std::string parallelKernelSource(int n) {
  std::string runtime = test::readFileBytes(KILN_TEST_PARALLEL_RUNTIME);
  return absl::StrCat(runtime, R"(
#include <pthread.h>
#include <time.h>
struct context { float *x, *out; uint64_t *who; };
static void task(void *raw, int64_t begin, int64_t end) {
  struct context *c = raw;
  for (int64_t i = begin; i < end; ++i) {
    c->out[i] = 2.0f * c->x[i];
    c->who[i] = (uint64_t)pthread_self();
  }
  struct timespec pause = {0, 2000000}; /* 2 ms: let the workers join in */
  nanosleep(&pause, 0);
}
void kiln_invoke(void **b) {
  struct context c = {b[1], b[2], b[3]};
  kiln_rt_parallel_for(task, &c, )", n, R"();
}
)");
}

TEST_F(CpuBackendTest, ParallelLoopsRunOnTheBackendsComputeThreads) {
  constexpr int kLoop = 64;
  auto path = test::compileSharedObject(dir.path(), "parallel",
                                        parallelKernelSource(kLoop));
  ASSERT_TRUE(path.ok()) << path.status();
  for (int threads : {1, 4}) {
    CpuBackend pooled(hostCpuModel(), threads);
    auto executable = pooled.loadExecutable(record, *path);
    ASSERT_TRUE(executable.ok()) << executable.status();
    std::vector<float> x(kLoop), out(kLoop, -1.0f);
    std::vector<uint64_t> who(kLoop, 0);
    for (int i = 0; i < kLoop; ++i)
      x[i] = static_cast<float>(i) - 10.0f;
    void *parameters[] = {nullptr};
    void *inputs[] = {x.data()};
    void *outputs[] = {out.data(), who.data()};
    ASSERT_TRUE(
        pooled.run(**executable, CallBuffers{parameters, inputs, outputs})
            .ok());
    for (int i = 0; i < kLoop; ++i)
      ASSERT_EQ(out[i], 2.0f * x[i]) << "at " << i;
    std::set<uint64_t> distinct(who.begin(), who.end());
    EXPECT_FALSE(distinct.count(0)) << "an iteration did not run";
    if (threads == 1)
      EXPECT_EQ(distinct.size(), 1u) << "one compute thread: the caller only";
    else
      EXPECT_GE(distinct.size(), 2u) << "4 compute threads, yet one ran all";
    auto devices = pooled.describeDevices();
    ASSERT_TRUE(devices.ok());
    EXPECT_EQ(devices->front().properties().at("compute_threads"),
              std::to_string(threads));
  }
}

TEST_F(CpuBackendTest, AMissingEntrySymbolIsAClearError) {
  record.mutable_manifest()->set_entry_symbol("kiln_no_such_entry");
  auto executable = backend.loadExecutable(record, artifact);
  ASSERT_FALSE(executable.ok());
  EXPECT_EQ(executable.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(executable.status().message().find("kiln_no_such_entry"),
            std::string::npos)
      << executable.status();
  EXPECT_NE(executable.status().message().find("undefined symbol"),
            std::string::npos)
      << "dlerror's text should be kept: " << executable.status();
}

TEST_F(CpuBackendTest, ANonElfFileIsAClearError) {
  std::filesystem::path text = dir.path() / "not-a-library.so";
  std::ofstream(text) << "#!/bin/sh\necho this is not a shared object\n";
  auto executable = backend.loadExecutable(record, text);
  ASSERT_FALSE(executable.ok());
  EXPECT_EQ(executable.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(executable.status().message().find("not an ELF shared object"),
            std::string::npos)
      << executable.status();
}

TEST_F(CpuBackendTest, ATruncatedElfFileCarriesTheLoadersError) {
  std::filesystem::path truncated = dir.path() / "truncated.so";
  std::string bytes = test::readFileBytes(artifact).substr(0, 200);
  std::ofstream(truncated, std::ios::binary) << bytes;
  auto executable = backend.loadExecutable(record, truncated);
  ASSERT_FALSE(executable.ok());
  EXPECT_EQ(executable.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(executable.status().message().find("cannot load artifact"),
            std::string::npos)
      << executable.status();
  EXPECT_NE(executable.status().message().find("truncated.so"),
            std::string::npos)
      << "dlerror names the file: " << executable.status();
}

TEST_F(CpuBackendTest, AnArtifactForAnotherArchitectureIsRefused) {
  record.mutable_manifest()->set_triple("riscv64-unknown-linux-gnu");
  auto executable = backend.loadExecutable(record, artifact);
  EXPECT_EQ(executable.status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(executable.status().message().find("riscv64"), std::string::npos);
}

TEST_F(CpuBackendTest, AnArtifactOfAnotherFormatIsRefused) {
  record.mutable_manifest()->set_format("xclbin");
  EXPECT_EQ(backend.loadExecutable(record, artifact).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(CpuBackendTest, TwoLoadsOfOneArtifactAreIndependentHandles) {
  auto first = backend.loadExecutable(record, artifact);
  auto second = backend.loadExecutable(record, artifact);
  ASSERT_TRUE(first.ok() && second.ok());
  first->reset(); // dlclose of one must not unload the other.
  std::vector<float> a(kN, 1.0f), x(kN, 2.0f), out(kN);
  void *parameters[] = {a.data()};
  void *inputs[] = {x.data()};
  void *outputs[] = {out.data()};
  ASSERT_TRUE(
      backend.run(**second, CallBuffers{parameters, inputs, outputs}).ok());
  EXPECT_FLOAT_EQ(out[kN - 1], 5.0f);
}

} // namespace
} // namespace kiln::agent
