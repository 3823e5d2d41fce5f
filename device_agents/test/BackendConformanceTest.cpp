//===- BackendConformanceTest.cpp - what every device backend must do -----===//
//
// This file is the conformance suite every DeviceBackend passes: it drives the
// backend through TaskRunner (the path real tasks take) with an axpy kernel
// built for that backend. A new backend adds itself to backendsUnderTest().
//
//===----------------------------------------------------------------------===//
#include "TestSupport.h"

#include "kiln/agent/TaskRunner.h"
#include "kiln/agent/acap/AcapBackend.h"
#include "kiln/agent/cpu/CpuBackend.h"
#include "kiln/agent/mdla/MdlaBackend.h"
#include "MdlaTestModels.h"
#ifdef KILN_TEST_HAVE_QEMU
#include "kiln/agent/qemu/QemuBackend.h"
#endif
#include "kiln/common/ChildProcess.h"
#include "kiln/common/Digest.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <thread>

namespace fs = std::filesystem;

namespace kiln::agent {
namespace {

/// One backend and how to build artifacts for it.
struct BackendUnderTest {
  std::string name;
  std::function<std::unique_ptr<DeviceBackend>()> make;
  /// Builds the artifact of test::axpyKernelSource(n) (entry "kiln_invoke")
  /// under `dir` and returns its path.
  std::function<absl::StatusOr<fs::path>(const fs::path &dir, int n)> buildAxpy;
  /// manifest.format and manifest.triple of its artifacts.
  std::string format;
  std::string triple;
  /// manifest.entry_symbol of its axpy artifact.
  std::string entry = "kiln_invoke";
};

std::vector<BackendUnderTest> backendsUnderTest() {
  return {
      {"cpu", [] { return std::make_unique<CpuBackend>(); },
       [](const fs::path &dir, int n) {
         return test::compileSharedObject(dir, absl::StrCat("axpy", n),
                                          test::axpyKernelSource(n));
       },
       "elf-shared-object", ""},
      // The simulated MDLA: the same axpy as an ONNX model (its integers
      // are exact in 16-bit fixed point).
      {"mdla_simulated",
       [] {
         mdla::MdlaBackendConfig config;
         config.simulate = true;
         auto backend = mdla::MdlaBackend::create(config);
         EXPECT_TRUE(backend.ok()) << backend.status();
         return std::unique_ptr<DeviceBackend>(std::move(backend).value());
       },
       [](const fs::path &dir, int n) -> absl::StatusOr<fs::path> {
         fs::path path = dir / absl::StrCat("axpy", n, ".onnx");
         std::ofstream(path, std::ios::binary) << test::axpyModel(n);
         return path;
       },
       "onnx-model", "mdla", "kiln_main"},
#if defined(__x86_64__)
      // The simulated AI Engine array: axpy as an acap xclbin whose host
      // code (for this x86-64 machine) does the whole of it.
      {"acap_simulated",
       [] {
         acap::AcapBackendConfig config;
         config.simulate = true;
         auto backend = acap::AcapBackend::create(config);
         EXPECT_TRUE(backend.ok()) << backend.status();
         return std::unique_ptr<DeviceBackend>(std::move(backend).value());
       },
       [](const fs::path &dir, int n) -> absl::StatusOr<fs::path> {
         fs::path graph = dir / absl::StrCat("axpy", n, ".textproto");
         std::ofstream(graph) << absl::StrFormat(
             "parameters { value { name: \"a\" type { dtype: DTYPE_F32 shape: [%d] } } }\n"
             "inputs { name: \"x\" type { dtype: DTYPE_F32 shape: [%d] } }\n"
             "nodes { op: \"aten.add.Tensor\" arguments { name: \"self\" value: \"a\" }\n"
             "        arguments { name: \"other\" value: \"x\" }\n"
             "        arguments { name: \"alpha\" attribute { i: 2 } }\n"
             "        outputs { name: \"out\" type { dtype: DTYPE_F32 shape: [%d] } } }\n"
             "outputs: \"out\"\n", n, n, n);
         fs::path xclbin = dir / absl::StrCat("axpy", n, ".xclbin");
         auto exit = runChildProcess({KILN_TEST_KILN_COMPILE, graph.string(), "--target",
                                      "acap", "--acap-host-cpu", "x86-64-v2", "-o",
                                      xclbin.string()},
                                     dir / "compile.log");
         if (!exit.ok())
           return exit.status();
         if (!exit->succeeded())
           return absl::InternalError(test::readFileBytes(dir / "compile.log"));
         return xclbin;
       },
       "xclbin", "x86_64-unknown-linux-gnu"},
#endif
#ifdef KILN_TEST_HAVE_QEMU
      {"qemu",
       [] {
         qemu::QemuBackendConfig config;
         config.runner.qemu = "qemu-riscv64";
         config.runner.sysroot = "/usr/riscv64-linux-gnu";
         config.runner.runner = KILN_TEST_BIN_DIR "/kiln-riscv64-runner";
         config.runner.plugin = KILN_TEST_BIN_DIR "/libkiln-qemu-insn.so";
         auto backend = qemu::QemuBackend::create(config);
         EXPECT_TRUE(backend.ok()) << backend.status();
         return std::unique_ptr<DeviceBackend>(std::move(backend).value());
       },
       [](const fs::path &dir, int n) {
         return test::compileRiscv64SharedObject(
             dir, absl::StrCat("axpy", n), test::axpyKernelSource(n));
       },
       "elf-shared-object", "riscv64-unknown-linux-gnu"},
#endif
  };
}

class BackendConformanceTest
    : public ::testing::TestWithParam<BackendUnderTest> {
protected:
  void SetUp() override {
    backend = GetParam().make();
    auto opened = BlobCache::open(dir.path() / "cache");
    ASSERT_TRUE(opened.ok()) << opened.status();
    cache = std::move(*opened);
    runner = std::make_unique<TaskRunner>(*backend, *cache, resident, blobs);
    runner->setTaskVerifier(test::taskVerifier());
  }

  /// An axpy task over n floats with a = i, x = i % 7, all blobs stored.
  v1::Task axpyTask(int n, const std::string &id) {
    auto path = GetParam().buildAxpy(dir.path(), n);
    EXPECT_TRUE(path.ok()) << path.status();
    std::string artifactBytes = test::readFileBytes(*path);
    blobs.add(artifactBytes);
    v1::Task task;
    task.set_task_id(id);
    *task.mutable_record() = test::axpyRecord(n, artifactBytes);
    task.mutable_record()->mutable_manifest()->set_target(
        std::string(backend->kind()));
    task.mutable_record()->mutable_manifest()->set_format(GetParam().format);
    task.mutable_record()->mutable_manifest()->set_triple(GetParam().triple);
    task.mutable_record()->mutable_manifest()->set_entry_symbol(GetParam().entry);
    *task.mutable_executable() = digestOf(task.record().SerializeAsString());
    std::vector<float> a(n), x(n);
    for (int i = 0; i < n; ++i) {
      a[i] = static_cast<float>(i);
      x[i] = static_cast<float>(i % 7);
    }
    *task.add_parameters() = blobs.add(test::floatBytes(a));
    v1::Tensor *input = task.add_inputs();
    *input->mutable_type() = task.record().manifest().inputs(0).type();
    input->set_data(test::floatBytes(x));
    return test::signTask(task);
  }

  static void expectAxpy(const v1::TaskResult &result, int n) {
    ASSERT_EQ(result.code(), 0) << result.message();
    ASSERT_EQ(result.outputs_size(), 1);
    std::vector<float> out = test::bytesToFloats(result.outputs(0).data());
    ASSERT_EQ(static_cast<int>(out.size()), n);
    for (int i = 0; i < n; ++i)
      ASSERT_FLOAT_EQ(out[i], static_cast<float>(i) + 2.0f * (i % 7))
          << "at " << i;
  }

  test::TempDir dir;
  std::unique_ptr<DeviceBackend> backend;
  test::MemoryBlobService blobs;
  ResidentSet resident{1 << 30};
  std::unique_ptr<BlobCache> cache;
  std::unique_ptr<TaskRunner> runner;
};

TEST_P(BackendConformanceTest, DescribesDevicesOfItsKind) {
  auto devices = backend->describeDevices();
  ASSERT_TRUE(devices.ok()) << devices.status();
  ASSERT_FALSE(devices->empty());
  for (const v1::Device &device : *devices) {
    EXPECT_EQ(device.kind(), backend->kind());
    EXPECT_TRUE(device.id().empty()) << "ids are the daemon's to assign";
  }
}

TEST_P(BackendConformanceTest, RunsAxpyCorrectly) {
  expectAxpy(runner->run(axpyTask(333, "t")), 333);
}

TEST_P(BackendConformanceTest, RunsZeroSizedTensors) {
  expectAxpy(runner->run(axpyTask(0, "empty")), 0);
}

TEST_P(BackendConformanceTest, RunsConcurrentTasksOnOneExecutable) {
  v1::Task task = axpyTask(4096, "shared");
  std::vector<v1::TaskResult> results(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < results.size(); ++i)
    threads.emplace_back([&, i] { results[i] = runner->run(task); });
  for (std::thread &thread : threads)
    thread.join();
  for (const v1::TaskResult &result : results)
    expectAxpy(result, 4096);
  EXPECT_EQ(runner->loadedExecutables(), 1u);
}

TEST_P(BackendConformanceTest, NamesAMissingEntrySymbol) {
  v1::Task task = axpyTask(8, "t");
  task.mutable_record()->mutable_manifest()->set_entry_symbol("no_such_entry");
  *task.mutable_executable() = digestOf("another executable");
  // Signed as kilnd would sign it: the backend itself must name the problem.
  v1::TaskResult result = runner->run(test::signTask(task));
  EXPECT_NE(result.code(), 0);
  EXPECT_NE(result.message().find("no_such_entry"), std::string::npos)
      << result.message();
}

TEST_P(BackendConformanceTest, RefusesAGarbageArtifactWithoutCrashing) {
  v1::Task task = axpyTask(8, "t");
  std::string garbage(4096, '\x5a');
  *task.mutable_record()->mutable_artifact() = blobs.add(garbage);
  *task.mutable_executable() = digestOf("a garbage executable");
  v1::TaskResult result = runner->run(test::signTask(task));
  EXPECT_NE(result.code(), 0);
  EXPECT_FALSE(result.message().empty());
}

TEST_P(BackendConformanceTest, RefusesAnotherTargetsExecutable) {
  v1::Task task = axpyTask(8, "t");
  task.mutable_record()->mutable_manifest()->set_target("no-such-target");
  v1::TaskResult result = runner->run(task);
  EXPECT_EQ(result.code(),
            static_cast<int>(absl::StatusCode::kFailedPrecondition));
  EXPECT_NE(result.message().find("no-such-target"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    Backends, BackendConformanceTest,
    ::testing::ValuesIn(backendsUnderTest()),
    [](const ::testing::TestParamInfo<BackendUnderTest> &info) {
      return info.param.name;
    });

} // namespace
} // namespace kiln::agent
