//===- FrameFiles.h - a frame's tensor files, paired with their inputs -*- C++ -*-===//
//
// This file declares pairFrameFiles: how kilnd's local socket, the local
// link and a direct channel match the files a frame carried (SCM_RIGHTS)
// with the inputs its message names for them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/common/UniqueFd.h"

#include "absl/status/statusor.h"

#include <google/protobuf/repeated_field.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace kiln {

/// Tensors whose bytes came in files: (input index, its file), ascending.
using IndexedFiles = std::vector<std::pair<int, UniqueFd>>;

/// Pairs `indices` (a frame's file_inputs) with the `files` it carried, in
/// order: as many of each, every index below `inputs`, ascending, once
/// each. INVALID_ARGUMENT naming what is wrong; `files` are moved from only
/// on success.
absl::StatusOr<IndexedFiles>
pairFrameFiles(const google::protobuf::RepeatedField<uint32_t> &indices,
               int inputs, std::vector<UniqueFd> &files);

} // namespace kiln
