//===- NullBackendTest.cpp - the device skeleton does what it says ---------===//
//
// The null kind is the skeleton new kinds copy: it must build, serve no
// device while saying why, and refuse to load or run with UNIMPLEMENTED.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/null/NullBackend.h"

#include <gtest/gtest.h>

namespace kiln::agent::null {
namespace {

TEST(NullBackendTest, ServesNoDeviceAndSaysWhy) {
  auto backend = NullBackend::create({});
  ASSERT_TRUE(backend.ok());
  EXPECT_EQ((*backend)->kind(), "null");
  auto devices = (*backend)->describeDevices();
  ASSERT_TRUE(devices.ok());
  EXPECT_TRUE(devices->empty());
  EXPECT_NE((*backend)->unavailableReason().find("docs/adding_a_device.md"),
            std::string::npos);
}

TEST(NullBackendTest, LoadsAndRunsNothing) {
  auto backend = NullBackend::create({});
  ASSERT_TRUE(backend.ok());
  v1::ExecutableRecord record;
  record.mutable_manifest()->set_format("elf-shared-object");
  auto loaded = (*backend)->loadExecutable(record, "/nonexistent");
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(loaded.status().message().find("elf-shared-object"), std::string::npos);
  struct Nothing : LoadedExecutable {} nothing;
  EXPECT_EQ((*backend)->run(nothing, CallBuffers{}).status().code(),
            absl::StatusCode::kUnimplemented);
}

} // namespace
} // namespace kiln::agent::null
