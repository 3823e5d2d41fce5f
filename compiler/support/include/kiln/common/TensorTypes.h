//===- TensorTypes.h - element sizes and type checks ----------------------===//
//
// This file declares helpers over kiln.v1.TensorType shared by the daemon
// (validating requests) and the agents (allocating buffers).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/v1/tensor.pb.h"

#include "absl/status/statusor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

/// Bytes per element of `dtype`; 0 for DTYPE_UNSPECIFIED or unknown values.
int64_t elementSize(v1::DType dtype);

/// Number of elements of `type` (1 for a 0-d tensor).
int64_t elementCount(const v1::TensorType &type);

/// Bytes a dense buffer of `type` occupies, or INVALID_ARGUMENT when the type
/// is unspecified, has a negative extent, or overflows.
absl::StatusOr<int64_t> byteSize(const v1::TensorType &type);

/// "f32[2, 3]" style rendering for messages.
std::string formatType(const v1::TensorType &type);

/// True when dtype, shape and symbols are identical.
bool sameType(const v1::TensorType &a, const v1::TensorType &b);

/// Which of `outputs` outputs `keep` (ExecuteRequest.keep_outputs, a
/// Task's) names; INVALID_ARGUMENT for an index past them or one named twice.
absl::StatusOr<std::vector<bool>>
keptOutputMask(const google::protobuf::RepeatedField<uint32_t> &keep, int outputs);

} // namespace kiln
