//===- Xclbin.h - Xilinx xclbin (axlf) containers -------------------------===//
//
// This file declares the writer of the acap target's artifact: an xclbin
// container in the axlf layout of XRT's xclbin.h, the format xclbinutil
// builds and XRT loads. Kiln writes it itself because Debian 12 ships
// xclbinutil as a wrapper without the program (docs/devices/acap.md).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::compiler::acap {

/// The axlf section kinds Kiln writes (xclbin.h's axlf_section_kind).
enum class XclbinSectionKind : uint32_t {
  BuildMetadata = 14, // JSON: what built the file
  UserMetadata = 16,  // opaque bytes (Kiln's AI Engine plan)
  SoftKernel = 23,    // code for the processing system's Arm cores
};

struct XclbinSection {
  XclbinSectionKind kind;
  /// At most 15 characters.
  std::string name;
  std::string data;
};

/// An xclbin holding `sections` in order, each 8-byte aligned, for platform
/// `platform` (the VBNV field, at most 63 characters). Its uuid and unique
/// id come from the SHA-256 of the sections and its timestamp is 0, so
/// equal inputs give equal bytes.
std::string writeXclbin(std::string_view platform,
                        const std::vector<XclbinSection> &sections);

/// A SOFT_KERNEL section's body: xclbin.h's soft_kernel header, its
/// strings (name, version, MD5 of the image, entry symbol) and `image`.
std::string softKernelSection(std::string_view name, std::string_view version,
                              std::string_view symbol, std::string_view image);

} // namespace kiln::compiler::acap
