//===- MdlaBackendTest.cpp - the mdla device kind --------------------------===//
//
// Tests of MdlaBackend: which device it serves (simulated, hardware through
// the driver, or none and why), what it refuses at load, and a run's
// outputs and counters. "Hardware" here is libmicrondla-testdouble.so, a
// TEST DOUBLE of Micron's library, not an MDLA.
//
//===----------------------------------------------------------------------===//
#include "MdlaTestModels.h"
#include "TestSupport.h"

#include "kiln/agent/mdla/MdlaBackend.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>

namespace kiln::agent::mdla {
namespace {

namespace fs = std::filesystem;

const char *kTestDouble = KILN_TEST_MDLA_TESTDOUBLE;

v1::TensorType f32(const std::vector<int64_t> &shape) {
  v1::TensorType type;
  type.set_dtype(v1::DTYPE_F32);
  for (int64_t dim : shape)
    type.add_shape(dim);
  return type;
}

/// The conv net's record (manifest as the compiler writes it) and artifact.
struct ConvNet {
  explicit ConvNet(const fs::path &dir) : path(dir / "convnet.onnx") {
    std::ofstream(path, std::ios::binary) << test::convNetModel();
    v1::ExecutableManifest &manifest = *record.mutable_manifest();
    manifest.set_entry_symbol("kiln_main");
    manifest.set_target("mdla");
    manifest.set_triple("mdla");
    manifest.set_format("onnx-model");
    for (const auto &w : weights) {
      auto *arg = manifest.add_parameters();
      arg->set_name(w.name);
      *arg->mutable_type() = f32(w.shape);
      parameters.push_back(const_cast<float *>(w.data.data()));
    }
    auto *x = manifest.add_inputs();
    x->set_name("x");
    *x->mutable_type() = f32({1, 3, 8, 8});
    auto *y = manifest.add_outputs();
    y->set_name("y");
    *y->mutable_type() = f32({1, 5});
  }

  CallBuffers buffers(std::vector<float> &out) {
    inputs = {input.data()};
    outputs = {out.data()};
    CallBuffers call;
    call.parameters = parameters;
    call.inputs = inputs;
    call.outputs = outputs;
    call.parameterSerials = serials;
    return call;
  }

  fs::path path;
  v1::ExecutableRecord record;
  std::vector<test::NamedTensor> weights = test::convNetWeights();
  std::vector<float> input = test::convNetInput();
  std::vector<void *> parameters, inputs, outputs;
  std::vector<uint64_t> serials = {1, 2, 3, 4, 5, 6, 7, 8};
};

/// A backend on the SDK test double, its .bin cache under `dir`.
MdlaBackendConfig testDoubleConfig(const fs::path &dir) {
  MdlaBackendConfig config;
  config.library = kTestDouble;
  config.binCache = dir / "bin";
  return config;
}

/// A backend on Kiln's simulated MDLA.
MdlaBackendConfig simulatedConfig() {
  MdlaBackendConfig config;
  config.simulate = true;
  return config;
}

std::unique_ptr<MdlaBackend> make(MdlaBackendConfig config) {
  auto backend = MdlaBackend::create(std::move(config));
  EXPECT_TRUE(backend.ok()) << backend.status();
  return *std::move(backend);
}

TEST(MdlaBackendTest, WithoutTheLibraryOrSimulateItServesNoDeviceAndSaysWhy) {
  MdlaBackendConfig config;
  config.library = "/nonexistent/libmicrondla.so";
  auto backend = make(config);
  auto devices = backend->describeDevices();
  ASSERT_TRUE(devices.ok());
  EXPECT_TRUE(devices->empty());
  EXPECT_NE(backend->unavailableReason().find("no Micron DLA SDK"), std::string::npos);
  EXPECT_NE(backend->unavailableReason().find("--simulate"), std::string::npos);
}

TEST(MdlaBackendTest, WithTheLibraryButNoBoardItServesNoDevice) {
  test::TempDir dir;
  setenv("KILN_MDLA_TESTDOUBLE_NO_BOARD", "1", 1);
  MdlaBackendConfig config = testDoubleConfig(dir.path());
  auto backend = make(config);
  unsetenv("KILN_MDLA_TESTDOUBLE_NO_BOARD");
  auto devices = backend->describeDevices();
  ASSERT_TRUE(devices.ok());
  EXPECT_TRUE(devices->empty());
  EXPECT_NE(backend->unavailableReason().find("no MDLA board answered ie_safecreate"),
            std::string::npos) << backend->unavailableReason();
}

TEST(MdlaBackendTest, SimulatedDeviceSaysSoAndReportsItsModel) {
  auto backend = make(simulatedConfig());
  auto devices = backend->describeDevices();
  ASSERT_TRUE(devices.ok());
  ASSERT_EQ(devices->size(), 1u);
  EXPECT_EQ((*devices)[0].kind(), "mdla");
  EXPECT_EQ((*devices)[0].properties().at("simulated"), "true");
  EXPECT_NE((*devices)[0].properties().at("simulator").find("not Micron's"),
            std::string::npos);
}

TEST(MdlaBackendTest, SimulatedRunMatchesF32WithinQ16AndCountsCyclesAndError) {
  test::TempDir dir;
  auto backend = make(simulatedConfig());
  ConvNet net(dir.path());
  auto loaded = backend->loadExecutable(net.record, net.path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  std::vector<float> out(5, -1.0f);
  auto counters = backend->run(**loaded, net.buffers(out));
  ASSERT_TRUE(counters.ok()) << counters.status();
  for (float v : out) {
    EXPECT_GT(v, 0.0f);
    EXPECT_LT(v, 1.0f);
  }
  EXPECT_GT(counters->estimated_cycles(), 0u);
  ASSERT_TRUE(counters->has_numeric_error());
  EXPECT_EQ(counters->numeric_error().numeric_type(), "q16");
  EXPECT_GT(counters->numeric_error().max_abs_error(), 0.0);
  EXPECT_LT(counters->numeric_error().max_abs_error(), 1.0 / 512);
  EXPECT_GT(counters->numeric_error().max_abs_reference(), 0.0);
}

TEST(MdlaBackendTest, HardwareRunCompilesOnceAndKeepsTheBin) {
  test::TempDir dir;
  MdlaBackendConfig config = testDoubleConfig(dir.path());
  auto backend = make(config);
  auto devices = backend->describeDevices();
  ASSERT_TRUE(devices.ok());
  ASSERT_EQ(devices->size(), 1u);
  EXPECT_EQ((*devices)[0].properties().at("simulated"), "false");
  EXPECT_NE((*devices)[0].properties().at("sdk_version").find("test double"),
            std::string::npos);

  ConvNet net(dir.path());
  auto loaded = backend->loadExecutable(net.record, net.path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  std::vector<float> out(5, -1.0f);
  auto counters = backend->run(**loaded, net.buffers(out));
  ASSERT_TRUE(counters.ok()) << counters.status();
  EXPECT_LT(counters->numeric_error().max_abs_error(), 1.0 / 512);
  EXPECT_EQ(counters->numeric_error().numeric_type(), "mdla-fixed16");
  EXPECT_GT(counters->estimated_cycles(), 0u);
  auto bins = [&] {
    int count = 0;
    for (const auto &entry : fs::directory_iterator(config.binCache))
      count += entry.path().extension() == ".bin";
    return count;
  };
  EXPECT_EQ(bins(), 1);

  // A second load of the same executable (an agent restart) finds the .bin.
  auto again = backend->loadExecutable(net.record, net.path);
  ASSERT_TRUE(again.ok());
  std::vector<float> out2(5, -1.0f);
  ASSERT_TRUE(backend->run(**again, net.buffers(out2)).ok());
  EXPECT_EQ(out2, out);
  EXPECT_EQ(bins(), 1);

  // Other weights are another compiled model.
  net.weights[0].data[0] += 1.0f;
  net.serials[0] = 99;
  ASSERT_TRUE(backend->run(**again, net.buffers(out2)).ok());
  EXPECT_NE(out2, out);
  EXPECT_EQ(bins(), 2);
}

TEST(MdlaBackendTest, WithoutTheNumericCheckAHardwareRunStillEstimatesCycles) {
  test::TempDir dir;
  MdlaBackendConfig config = testDoubleConfig(dir.path());
  config.numericCheck = false;
  auto backend = make(config);
  ConvNet net(dir.path());
  auto loaded = backend->loadExecutable(net.record, net.path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  std::vector<float> out(5);
  for (int call = 0; call < 2; ++call) {
    auto counters = backend->run(**loaded, net.buffers(out));
    ASSERT_TRUE(counters.ok()) << counters.status();
    EXPECT_GT(counters->estimated_cycles(), 0u);
    EXPECT_FALSE(counters->has_numeric_error());
  }
}

TEST(MdlaBackendTest, RefusesArtifactsItCannotRun) {
  test::TempDir dir;
  auto backend = make(simulatedConfig());
  ConvNet net(dir.path());

  v1::ExecutableRecord cpu = net.record;
  cpu.mutable_manifest()->set_format("elf-shared-object");
  auto a = backend->loadExecutable(cpu, net.path);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), absl::StatusCode::kFailedPrecondition);

  v1::ExecutableRecord entry = net.record;
  entry.mutable_manifest()->set_entry_symbol("no_such_entry");
  auto b = backend->loadExecutable(entry, net.path);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("no_such_entry"), std::string::npos);

  v1::ExecutableRecord shapes = net.record;
  *shapes.mutable_manifest()->mutable_inputs(0)->mutable_type() = f32({1, 3, 9, 9});
  auto c = backend->loadExecutable(shapes, net.path);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("'x' is not the model's f32 input"), std::string::npos)
      << c.status();

  std::ofstream(dir.path() / "garbage.onnx") << "garbage";
  auto d = backend->loadExecutable(net.record, dir.path() / "garbage.onnx");
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("not a model this device runs"), std::string::npos);
}

} // namespace
} // namespace kiln::agent::mdla
