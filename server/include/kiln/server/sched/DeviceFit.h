//===- DeviceFit.h - which devices can run which code -----------*- C++ -*-===//
//
// This file declares the CPU side of placement: which ISA features a device
// reports, whether it can run code that needs a set of them, and the CPU a
// cpu compile targets when the request names none (what the connected
// agents have in common).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/v1/compiler.pb.h"
#include "kiln/v1/devices.pb.h"

#include "absl/status/statusor.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln::server {

/// OK when `library` is empty or `device` lists it in its kernel_libraries
/// property (kiln/common/AgentProtocol.h); FAILED_PRECONDITION naming the
/// device, the library and what the device provides otherwise.
absl::Status checkDeviceKernelLibrary(const v1::Device &device,
                                      const std::string &library);

/// True when every device in `devices` lists `library` in its
/// kernel_libraries property (true for no devices).
bool allDevicesProvide(const std::vector<v1::Device> &devices,
                       const std::string &library);

/// Device properties the cpu agent fills: its LLVM CPU name, and its ISA
/// features as LLVM names, comma separated.
inline constexpr const char *kCpuProperty = "cpu";
inline constexpr const char *kCpuFeaturesProperty = "cpu_features";
/// The vector length in bits a riscv64 device reports ("0": no V extension).
inline constexpr const char *kVlenProperty = "vlen";

/// The ISA features `device` reports (sorted), or nullopt when it reports
/// none. The registry parses them once, at registration.
std::optional<std::vector<std::string>>
reportedCpuFeatures(const v1::Device &device);

/// OK when a device with `available` features (reportedCpuFeatures) can run
/// code that needs `required` (sorted LLVM feature names). A device that
/// reports none is not checked here (its agent checks what it loads).
/// FAILED_PRECONDITION naming the device and every feature it lacks
/// otherwise.
absl::Status
checkDeviceFeatures(const v1::Device &device,
                    const std::optional<std::vector<std::string>> &available,
                    const std::vector<std::string> &required);

/// The CPU a compile for `devices` (all of one kind) targets when the request
/// names none: the features they all share, under the name of a device that
/// has exactly those (so agents of one CPU get exactly theirs, and a pool
/// with one baseline agent gets that agent's CPU), else under the baseline
/// x86-64. nullopt when no device
/// reports a CPU. FAILED_PRECONDITION when the devices report a CPU this
/// kilnd's compiler cannot target (another architecture).
absl::StatusOr<std::optional<v1::CompileOptions>>
sharedCpuOptions(const std::vector<v1::Device> &devices);

/// The riscv64 code a compile for `devices` (all of one kind) targets when
/// the request sets no options.riscv: vectors of the smallest VLEN they
/// report, or scalar code when one of them has no V extension. nullopt when
/// no device reports a VLEN. FAILED_PRECONDITION for a malformed one.
absl::StatusOr<std::optional<v1::RiscvOptions>>
sharedRiscvOptions(const std::vector<v1::Device> &devices);

/// The host CPU a compile for acap `devices` targets when the request sets
/// no options.acap.host_cpu: the host_cpu they all report (a board's Arm
/// cores, or the machine simulating the array). nullopt when none reports
/// one or they differ (the compile then targets the board's cortex-a72).
std::optional<std::string>
sharedAcapHostCpu(const std::vector<v1::Device> &devices);

} // namespace kiln::server
