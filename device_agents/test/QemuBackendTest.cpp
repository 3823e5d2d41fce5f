//===- QemuBackendTest.cpp - riscv64 executables on simulated devices -----===//
//
// This file tests QemuBackend beyond the conformance suite: instruction
// counts (deterministic, proportional to work), recovery from a guest crash
// and from a hung call, arena growth, several devices, and the checks that
// keep vector code off devices that cannot run it.
//
//===----------------------------------------------------------------------===//
#include "TestSupport.h"

#include "kiln/agent/qemu/QemuBackend.h"

#include "absl/strings/str_cat.h"

#include <gtest/gtest.h>

namespace fs = std::filesystem;

namespace kiln::agent::qemu {
namespace {

QemuBackendConfig testConfig() {
  QemuBackendConfig config;
  config.runner.qemu = "qemu-riscv64";
  config.runner.sysroot = "/usr/riscv64-linux-gnu";
  config.runner.runner = KILN_TEST_BIN_DIR "/kiln-riscv64-runner";
  config.runner.plugin = KILN_TEST_BIN_DIR "/libkiln-qemu-insn.so";
  return config;
}

class QemuBackendTest : public ::testing::Test {
protected:
  void SetUp() override { start(testConfig()); }

  void start(QemuBackendConfig config) {
    auto created = QemuBackend::create(std::move(config));
    ASSERT_TRUE(created.ok()) << created.status();
    backend = std::move(*created);
  }

  /// Loads the riscv64 build of `source` (axpy's manifest: a, x -> out).
  std::shared_ptr<LoadedExecutable> load(const std::string &name,
                                         const std::string &source, int n) {
    auto path = test::compileRiscv64SharedObject(dir.path(), name, source);
    EXPECT_TRUE(path.ok()) << path.status();
    v1::ExecutableRecord record =
        test::axpyRecord(n, test::readFileBytes(*path));
    record.mutable_manifest()->set_triple("riscv64-unknown-linux-gnu");
    auto loaded = backend->loadExecutable(record, *path);
    EXPECT_TRUE(loaded.ok()) << loaded.status();
    return loaded.ok() ? *loaded : nullptr;
  }

  /// Runs axpy over n floats on `device`; checks the numbers.
  absl::StatusOr<v1::DeviceCounters> runAxpy(LoadedExecutable &executable,
                                             int n, int device = 0) {
    std::vector<float> a(n), x(n), out(n, -1.0f);
    for (int i = 0; i < n; ++i) {
      a[i] = static_cast<float>(i);
      x[i] = static_cast<float>(i % 5);
    }
    void *parameters[] = {a.data()};
    void *inputs[] = {x.data()};
    void *outputs[] = {out.data()};
    auto counters = backend->run(
        executable, CallBuffers{parameters, inputs, outputs, device});
    if (counters.ok())
      for (int i = 0; i < n; ++i)
        EXPECT_FLOAT_EQ(out[i], a[i] + 2.0f * x[i]) << "at " << i;
    return counters;
  }

  test::TempDir dir;
  std::unique_ptr<QemuBackend> backend;
};

TEST_F(QemuBackendTest, CountsInstructionsDeterministicallyAndInProportion) {
  auto small = load("small", test::axpyKernelSource(1000), 1000);
  auto large = load("large", test::axpyKernelSource(8000), 8000);
  ASSERT_TRUE(small && large);
  auto first = runAxpy(*small, 1000);
  auto second = runAxpy(*small, 1000);
  auto big = runAxpy(*large, 8000);
  ASSERT_TRUE(first.ok() && second.ok() && big.ok()) << first.status();
  // At least a load, an add and a store per element; the same call retires
  // the same instructions; 8x the work retires ~8x the instructions.
  EXPECT_GT(first->instructions(), 3u * 1000);
  EXPECT_EQ(first->instructions(), second->instructions());
  double ratio = static_cast<double>(big->instructions()) /
                 static_cast<double>(first->instructions());
  EXPECT_GT(ratio, 7.0);
  EXPECT_LT(ratio, 9.0);
}

TEST_F(QemuBackendTest, RecoversFromAGuestCrash) {
  // It says why on its stderr first, as a failing guest or qemu would.
  auto crash = load("crash",
                    "long write(int, const void *, unsigned long);\n"
                    "void kiln_invoke(void **b) {\n"
                    "  write(2, \"guest: about to fault\\n\", 22);\n"
                    "  *(volatile int *)0 = 1;\n"
                    "}\n",
                    4);
  auto axpy = load("axpy", test::axpyKernelSource(64), 64);
  ASSERT_TRUE(crash && axpy);
  auto crashed = runAxpy(*crash, 4);
  ASSERT_FALSE(crashed.ok());
  EXPECT_NE(crashed.status().message().find("signal"), std::string::npos)
      << crashed.status();
  // What the simulator wrote to stderr comes with the error.
  EXPECT_NE(crashed.status().message().find(
                "its stderr ended: guest: about to fault"),
            std::string::npos)
      << crashed.status();
  // The device restarts and reloads what it runs.
  auto after = runAxpy(*axpy, 64);
  EXPECT_TRUE(after.ok()) << after.status();
}

TEST_F(QemuBackendTest, StopsAHungCallAtTheRunTimeout) {
  QemuBackendConfig config = testConfig();
  config.runner.runTimeout = std::chrono::seconds(1);
  start(config);
  auto hang = load("hang", "void kiln_invoke(void **b) { for (;;) {} }", 4);
  auto axpy = load("axpy", test::axpyKernelSource(64), 64);
  ASSERT_TRUE(hang && axpy);
  auto hung = runAxpy(*hang, 4);
  ASSERT_FALSE(hung.ok());
  EXPECT_EQ(hung.status().code(), absl::StatusCode::kDeadlineExceeded)
      << hung.status();
  EXPECT_TRUE(runAxpy(*axpy, 64).ok());
}

TEST_F(QemuBackendTest, GrowsTheArenaForLargeTensors) {
  constexpr int kN = 1 << 20; // 3 buffers of 4 MiB, past the initial 1 MiB
  auto axpy = load("big", test::axpyKernelSource(kN), kN);
  ASSERT_TRUE(axpy);
  auto counters = runAxpy(*axpy, kN);
  EXPECT_TRUE(counters.ok()) << counters.status();
}

TEST_F(QemuBackendTest, RunsOnEveryDeviceAndRefusesUnknownOnes) {
  QemuBackendConfig config = testConfig();
  config.devices = 2;
  start(config);
  auto devices = backend->describeDevices();
  ASSERT_TRUE(devices.ok());
  ASSERT_EQ(devices->size(), 2u);
  EXPECT_EQ(devices->at(0).properties().at("vlen"), "128");
  auto axpy = load("axpy", test::axpyKernelSource(100), 100);
  ASSERT_TRUE(axpy);
  auto on0 = runAxpy(*axpy, 100, 0);
  auto on1 = runAxpy(*axpy, 100, 1);
  ASSERT_TRUE(on0.ok() && on1.ok());
  EXPECT_EQ(on0->instructions(), on1->instructions());
  auto unknown = runAxpy(*axpy, 100, 5);
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(QemuBackendTest, RefusesArtifactsForOtherMachines) {
  auto path = test::compileRiscv64SharedObject(dir.path(), "axpy",
                                               test::axpyKernelSource(8));
  ASSERT_TRUE(path.ok());
  v1::ExecutableRecord record = test::axpyRecord(8, test::readFileBytes(*path));
  record.mutable_manifest()->set_triple("x86_64-unknown-linux-gnu");
  auto x86 = backend->loadExecutable(record, *path);
  EXPECT_EQ(x86.status().code(), absl::StatusCode::kFailedPrecondition);
  record.mutable_manifest()->set_triple("riscv64-unknown-linux-gnu");
  record.mutable_manifest()->set_features("+m,+v,+zvl512b");
  auto wide = backend->loadExecutable(record, *path);
  EXPECT_EQ(wide.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(wide.status().message().find("VLEN >= 512"), std::string::npos)
      << wide.status();
  record.mutable_manifest()->set_features("+m");
  record.mutable_manifest()->set_format("elf-relocatable-object");
  EXPECT_EQ(backend->loadExecutable(record, *path).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(QemuBackendTest, KeepsTheMostRecentlyUsedExecutablesLoaded) {
  // More executables than a device keeps loaded: the least recently used are
  // unloaded and come back on their next call.
  std::vector<std::shared_ptr<LoadedExecutable>> executables;
  for (size_t i = 0; i < RunnerProcess::kMaxLoaded + 8; ++i) {
    executables.push_back(
        load(absl::StrCat("axpy", i), test::axpyKernelSource(16), 16));
    ASSERT_TRUE(executables.back());
    ASSERT_TRUE(runAxpy(*executables.back(), 16).ok()) << "executable " << i;
  }
  for (auto &executable : executables)
    EXPECT_TRUE(runAxpy(*executable, 16).ok());
}

TEST(QemuVectorFeaturesTest, MatchesTheDevicesVlen) {
  EXPECT_TRUE(checkVectorFeatures("+m,+a,+f,+d,+c", 0).ok());
  EXPECT_TRUE(checkVectorFeatures("+m,+v", 128).ok());
  EXPECT_TRUE(checkVectorFeatures("+m,+v,+zvl256b", 512).ok());
  EXPECT_FALSE(checkVectorFeatures("+m,+v", 0).ok());
  EXPECT_FALSE(checkVectorFeatures("+v,+zvl256b", 128).ok());
}

TEST(QemuBackendCreateTest, NamesWhatIsMissing) {
  QemuBackendConfig config = testConfig();
  config.runner.runner = "/no/such/runner";
  auto created = QemuBackend::create(config);
  ASSERT_FALSE(created.ok());
  EXPECT_NE(created.status().message().find("--runner"), std::string::npos);
  config = testConfig();
  config.vlen = 100;
  EXPECT_EQ(QemuBackend::create(config).status().code(),
            absl::StatusCode::kInvalidArgument);
  config = testConfig();
  config.runner.qemu = "/no/such/qemu";
  EXPECT_FALSE(QemuBackend::create(config).ok());
}

} // namespace
} // namespace kiln::agent::qemu
