//===- AcapArtifact.h - what an acap xclbin holds -------------------------===//
//
// This file declares how the acap agent reads the acap target's artifact:
// XRT's own xclbin parser (xrt::xclbin, libxrt_coreutil) loads the file,
// and the agent takes the host code (the SOFT_KERNEL section "kiln_host")
// and the AI Engine plan (the USER_METADATA section "kiln_aie_plan").
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/v1/aie_plan.pb.h"

#include "absl/status/statusor.h"

#include <filesystem>
#include <string>

namespace kiln::agent::acap {

struct AcapArtifact {
  /// The xclbin's uuid and platform (VBNV), as XRT reads them.
  std::string uuid;
  std::string platform;
  /// The host code: an ELF shared object, and its entry symbol.
  std::string hostImage;
  std::string hostSymbol;
  v1::AiePlan plan;
};

/// The artifact at `path`: INVALID_ARGUMENT naming what is wrong when its
/// header or section table does not fit it, it has sections Kiln does not
/// write (XRT would parse them), XRT rejects it, or a section Kiln needs is
/// missing or malformed. Kiln checks the container before XRT sees it.
absl::StatusOr<AcapArtifact> readAcapArtifact(const std::filesystem::path &path);

} // namespace kiln::agent::acap
