//===- MicronDlaDriverTest.cpp - the driver over Micron's C API ------------===//
//
// Tests of MicronDla (dlopen, entry points, version check, compile, load,
// run, free and their errors) against libmicrondla-testdouble.so: a TEST
// DOUBLE implementing Micron's published C API on Kiln's fixed-point model,
// not Micron's library (which is proprietary and not available here).
//
//===----------------------------------------------------------------------===//
#include "MdlaTestModels.h"
#include "TestSupport.h"

#include "kiln/agent/mdla/MdlaProgram.h"
#include "kiln/agent/mdla/MicronDla.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

namespace kiln::agent::mdla {
namespace {

const char *kTestDouble = KILN_TEST_MDLA_TESTDOUBLE;

void writeFile(const std::filesystem::path &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

/// The axpy model over n floats with the weight a[i] = i bound in.
std::string boundAxpy(int n) {
  auto program = MdlaProgram::parse(test::axpyModel(n));
  EXPECT_TRUE(program.ok()) << program.status();
  std::vector<float> a(n);
  for (int i = 0; i < n; ++i)
    a[i] = static_cast<float>(i);
  auto bound = program->bindWeights({{"a", TensorView{{n}, a.data()}}});
  EXPECT_TRUE(bound.ok()) << bound.status();
  return *bound;
}

TEST(MicronDlaDriverTest, OpensTheLibraryAndReadsItsVersion) {
  auto dla = MicronDla::open(kTestDouble);
  ASSERT_TRUE(dla.ok()) << dla.status();
  EXPECT_NE((*dla)->version().find("Kiln test double"), std::string::npos);
  EXPECT_TRUE((*dla)->hardwarePresent());
}

TEST(MicronDlaDriverTest, AMissingLibraryIsNotFound) {
  auto dla = MicronDla::open("/nonexistent/libmicrondla.so");
  ASSERT_FALSE(dla.ok());
  EXPECT_EQ(dla.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(dla.status().message().find("/nonexistent/libmicrondla.so"), std::string::npos);
}

TEST(MicronDlaDriverTest, ALibraryWithoutTheEntryPointsIsRefused) {
  auto dla = MicronDla::open("libm.so.6");
  ASSERT_FALSE(dla.ok());
  EXPECT_EQ(dla.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(dla.status().message().find("lacks ie_create, ie_safecreate, ie_compile"),
            std::string::npos) << dla.status();
}

TEST(MicronDlaDriverTest, AnOldVersionIsRefused) {
  setenv("KILN_MDLA_TESTDOUBLE_VERSION", "2019.3.1", 1);
  auto dla = MicronDla::open(kTestDouble);
  unsetenv("KILN_MDLA_TESTDOUBLE_VERSION");
  ASSERT_FALSE(dla.ok());
  EXPECT_EQ(dla.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(dla.status().message().find("version '2019.3.1'; Kiln drives 2020.1 or later"),
            std::string::npos) << dla.status();
  setenv("KILN_MDLA_TESTDOUBLE_VERSION", "2020.0.3", 1);
  auto zero = MicronDla::open(kTestDouble);
  setenv("KILN_MDLA_TESTDOUBLE_VERSION", "2020.1.0", 1);
  auto one = MicronDla::open(kTestDouble);
  unsetenv("KILN_MDLA_TESTDOUBLE_VERSION");
  EXPECT_FALSE(zero.ok());
  EXPECT_TRUE(one.ok()) << one.status();
}

TEST(MicronDlaDriverTest, NoBoardMeansNoHardware) {
  auto dla = MicronDla::open(kTestDouble);
  ASSERT_TRUE(dla.ok()) << dla.status();
  setenv("KILN_MDLA_TESTDOUBLE_NO_BOARD", "1", 1);
  EXPECT_FALSE((*dla)->hardwarePresent());
  unsetenv("KILN_MDLA_TESTDOUBLE_NO_BOARD");
}

TEST(MicronDlaDriverTest, CompilesLoadsAndRuns) {
  test::TempDir dir;
  auto dla = MicronDla::open(kTestDouble);
  ASSERT_TRUE(dla.ok()) << dla.status();
  writeFile(dir.path() / "m.onnx", boundAxpy(6));
  auto model = (*dla)->compile(dir.path() / "m.onnx", dir.path() / "m.bin", "6");
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_EQ((*model)->outputShapes().size(), 1u);
  EXPECT_EQ((*model)->outputShapes()[0], (std::vector<uint64_t>{6}));
  std::vector<float> x = {0, 1, 2, 3, 4, 5}, out(6, -1.0f);
  const float *inputs[] = {x.data()};
  uint64_t inputElements[] = {6};
  float *outputs[] = {out.data()};
  uint64_t outputElements[] = {6};
  ASSERT_TRUE((*model)->run(inputs, inputElements, outputs, outputElements).ok());
  EXPECT_EQ(out, (std::vector<float>{0, 3, 6, 9, 12, 15}));

  // The .bin loads again without compiling, in a new context.
  auto loaded = (*dla)->load(dir.path() / "m.bin");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  std::fill(out.begin(), out.end(), -1.0f);
  ASSERT_TRUE((*loaded)->run(inputs, inputElements, outputs, outputElements, true).ok());
  EXPECT_EQ(out, (std::vector<float>{0, 3, 6, 9, 12, 15}));
}

TEST(MicronDlaDriverTest, LibraryFailuresAreStatusesNamingTheCall) {
  test::TempDir dir;
  auto dla = MicronDla::open(kTestDouble);
  ASSERT_TRUE(dla.ok()) << dla.status();
  writeFile(dir.path() / "m.onnx", boundAxpy(6));
  auto wrongShapes = (*dla)->compile(dir.path() / "m.onnx", dir.path() / "m.bin", "7");
  ASSERT_FALSE(wrongShapes.ok());
  EXPECT_EQ(wrongShapes.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(wrongShapes.status().message().find("ie_compile"), std::string::npos);

  writeFile(dir.path() / "garbage.bin", "not a compiled model");
  auto garbage = (*dla)->load(dir.path() / "garbage.bin");
  ASSERT_FALSE(garbage.ok());
  EXPECT_NE(garbage.status().message().find("ie_init"), std::string::npos);

  auto model = (*dla)->compile(dir.path() / "m.onnx", dir.path() / "m.bin", "6");
  ASSERT_TRUE(model.ok()) << model.status();
  std::vector<float> x(6), out(6);
  const float *inputs[] = {x.data()};
  float *outputs[] = {out.data()};
  uint64_t six[] = {6}, five[] = {5};
  auto badSize = (*model)->run(inputs, five, outputs, six);
  ASSERT_FALSE(badSize.ok());
  EXPECT_EQ(badSize.code(), absl::StatusCode::kInternal);
  EXPECT_NE(badSize.message().find("ie_run failed with code -3"), std::string::npos)
      << badSize;
  auto badCount = (*model)->run(inputs, six, {}, {});
  ASSERT_FALSE(badCount.ok());
  EXPECT_EQ(badCount.code(), absl::StatusCode::kInvalidArgument);
}

TEST(MicronDlaDriverTest, FormatsInShapes) {
  EXPECT_EQ(formatInShapes({{1, 3, 224, 224}, {1, 10}}), "1x3x224x224;1x10");
}

} // namespace
} // namespace kiln::agent::mdla
