//===- DeviceFitTest.cpp - CPU features of devices and default CPUs -------===//
//
// This file implements tests for checkDeviceFeatures, sharedCpuOptions,
// sharedRiscvOptions and sharedAcapHostCpu, with devices described as their
// agents describe them.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/sched/DeviceFit.h"

#include "kiln/common/CpuModel.h"

#include "absl/strings/str_join.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kiln::server {
namespace {

using ::testing::HasSubstr;

v1::Device cpuDevice(const std::string &id, const std::string &cpu) {
  v1::Device device;
  device.set_id(id);
  device.set_kind("cpu");
  absl::StatusOr<CpuModel> model = resolveCpuModel(cpu, "");
  EXPECT_TRUE(model.ok()) << model.status();
  (*device.mutable_properties())[kCpuProperty] = model->name;
  (*device.mutable_properties())[kCpuFeaturesProperty] =
      absl::StrJoin(model->features, ",");
  return device;
}

TEST(DeviceFitTest, ADeviceLackingFeaturesIsRefusedNamingThem) {
  v1::Device v3 = cpuDevice("a/0", "x86-64-v3");
  EXPECT_TRUE(checkDeviceFeatures(v3, reportedCpuFeatures(v3), {"avx2", "fma"}).ok());
  absl::Status status = checkDeviceFeatures(v3, reportedCpuFeatures(v3), {"avx2", "avx512bw", "avx512f"});
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("avx512bw, avx512f"));
  EXPECT_THAT(status.message(), HasSubstr("a/0"));
  EXPECT_THAT(status.message(), HasSubstr("x86-64-v3"));
}

TEST(DeviceFitTest, KernelLibrariesMustBeListedByTheDevice) {
  v1::Device device = cpuDevice("a/0", "x86-64-v3");
  EXPECT_TRUE(checkDeviceKernelLibrary(device, "").ok());
  absl::Status none = checkDeviceKernelLibrary(device, "onednn");
  EXPECT_EQ(none.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(none.message(), HasSubstr("'onednn'"));
  EXPECT_THAT(none.message(), HasSubstr("provides: none"));
  (*device.mutable_properties())["kernel_libraries"] = "acl,onednn";
  EXPECT_TRUE(checkDeviceKernelLibrary(device, "onednn").ok());
  absl::Status other = checkDeviceKernelLibrary(device, "mkl");
  EXPECT_EQ(other.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(other.message(), HasSubstr("provides: acl,onednn"));
}

TEST(DeviceFitTest, ALibraryIsSharedWhenEveryDeviceListsIt) {
  v1::Device with = cpuDevice("a/0", "x86-64-v3");
  (*with.mutable_properties())["kernel_libraries"] = "onednn";
  v1::Device without = cpuDevice("b/0", "x86-64-v3");
  EXPECT_TRUE(allDevicesProvide({}, "onednn"));
  EXPECT_TRUE(allDevicesProvide({with, with}, "onednn"));
  EXPECT_FALSE(allDevicesProvide({with, without}, "onednn"));
}

TEST(DeviceFitTest, DevicesWithoutCpuFeaturesAreLeftToTheirAgent) {
  v1::Device simulator;
  simulator.set_kind("riscv64");
  EXPECT_TRUE(checkDeviceFeatures(simulator, reportedCpuFeatures(simulator), {"v", "zvl128b"}).ok());
}

TEST(DeviceFitTest, AgentsOfOneCpuGiveThatCpu) {
  auto shared = sharedCpuOptions(
      {cpuDevice("a/0", "x86-64-v3"), cpuDevice("b/0", "x86-64-v3")});
  ASSERT_TRUE(shared.ok()) << shared.status();
  ASSERT_TRUE(shared->has_value());
  EXPECT_EQ((*shared)->cpu(), "x86-64-v3");
  EXPECT_EQ((*shared)->cpu_features(), "");
}

TEST(DeviceFitTest, AgentsOfDifferentCpusGiveTheFeaturesTheyShare) {
  auto shared = sharedCpuOptions(
      {cpuDevice("a/0", "x86-64-v4"), cpuDevice("b/0", "x86-64-v3")});
  ASSERT_TRUE(shared.ok()) << shared.status();
  ASSERT_TRUE(shared->has_value());
  absl::StatusOr<CpuModel> model =
      resolveCpuModel((*shared)->cpu(), (*shared)->cpu_features());
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->features, resolveCpuModel("x86-64-v3", "")->features);
  // The v3 device has exactly the shared features: its name, no delta.
  EXPECT_EQ((*shared)->cpu(), "x86-64-v3");
  EXPECT_EQ((*shared)->cpu_features(), "");
}

TEST(DeviceFitTest, CpusNoDeviceMatchesGiveTheBaselineWithTheSharedFeatures) {
  v1::Device a = cpuDevice("a/0", "x86-64-v3");
  v1::Device b = cpuDevice("b/0", "x86-64-v3");
  (*a.mutable_properties())[kCpuFeaturesProperty] += ",avx512f";
  (*b.mutable_properties())[kCpuFeaturesProperty] += ",sha";
  auto shared = sharedCpuOptions({a, b});
  ASSERT_TRUE(shared.ok()) << shared.status();
  EXPECT_EQ((*shared)->cpu(), "x86-64");
  absl::StatusOr<CpuModel> model =
      resolveCpuModel((*shared)->cpu(), (*shared)->cpu_features());
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->features, resolveCpuModel("x86-64-v3", "")->features);
}

TEST(DeviceFitTest, NoCpuReportedGivesNoDefault) {
  v1::Device simulator;
  simulator.set_kind("riscv64");
  auto shared = sharedCpuOptions({simulator});
  ASSERT_TRUE(shared.ok());
  EXPECT_FALSE(shared->has_value());
}

} // namespace
} // namespace kiln::server

namespace kiln::server {
namespace {

v1::Device riscvDevice(const std::string &id, const std::string &vlen) {
  v1::Device device;
  device.set_id(id);
  device.set_kind("riscv64");
  (*device.mutable_properties())[kVlenProperty] = vlen;
  return device;
}

TEST(DeviceFitTest, RiscvDevicesGiveTheSmallestVlenTheyShare) {
  auto shared = sharedRiscvOptions(
      {riscvDevice("a/0", "512"), riscvDevice("b/0", "256"), riscvDevice("c/0", "1024")});
  ASSERT_TRUE(shared.ok()) << shared.status();
  ASSERT_TRUE(shared->has_value());
  EXPECT_EQ((*shared)->vlen(), 256);
  EXPECT_FALSE((*shared)->scalar_only());
}

TEST(DeviceFitTest, ARiscvDeviceWithoutVectorsMakesTheCodeScalar) {
  auto shared = sharedRiscvOptions({riscvDevice("a/0", "256"), riscvDevice("b/0", "0")});
  ASSERT_TRUE(shared.ok()) << shared.status();
  ASSERT_TRUE(shared->has_value());
  EXPECT_TRUE((*shared)->scalar_only());
  EXPECT_EQ((*shared)->vlen(), 0);
}

TEST(DeviceFitTest, RiscvDevicesWithoutAVlenGiveNothingAndBadOnesAreNamed) {
  v1::Device silent;
  silent.set_id("q/0");
  auto none = sharedRiscvOptions({silent});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  auto bad = sharedRiscvOptions({riscvDevice("x/0", "wide")});
  EXPECT_TRUE(absl::IsFailedPrecondition(bad.status())) << bad.status();
  EXPECT_THAT(std::string(bad.status().message()), ::testing::HasSubstr("x/0"));
}

v1::Device acapDevice(const std::string &id, const std::string &hostCpu) {
  v1::Device device;
  device.set_id(id);
  device.set_kind("acap");
  if (!hostCpu.empty())
    (*device.mutable_properties())["host_cpu"] = hostCpu;
  return device;
}

TEST(DeviceFitTest, AcapDevicesThatAgreeGiveTheirHostCpu) {
  EXPECT_EQ(sharedAcapHostCpu({acapDevice("a/0", "x86-64-v3"), acapDevice("b/0", "x86-64-v3")}),
            "x86-64-v3");
  // A board and a simulated array, or a device that reports none: no
  // default (the compile targets the board's cortex-a72).
  EXPECT_EQ(sharedAcapHostCpu({acapDevice("a/0", "x86-64-v3"), acapDevice("b/0", "cortex-a72")}),
            std::nullopt);
  EXPECT_EQ(sharedAcapHostCpu({acapDevice("a/0", "x86-64-v3"), acapDevice("b/0", "")}),
            std::nullopt);
  EXPECT_EQ(sharedAcapHostCpu({}), std::nullopt);
}

} // namespace
} // namespace kiln::server
